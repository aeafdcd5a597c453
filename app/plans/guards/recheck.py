"""Pre-flight again right before each step: the plan was confirmed on the machine as it was then.

A step that writes to devices (overwrites one, re-adds or replaces onto one, or ``mdadm --grow``
an array) gets, immediately before it starts, a fresh probe through the backend and the checks
that concern its own devices: in use / read-only / unknown (``in_use.write_refusals`` through
``preflight.check``), SMART FAILED (read again through the backend), an array busy with a sync
(``preflight.check_busy``), and the disk identity recorded in the plan (``identity``). Devices an
earlier step of the same plan created (its array, its LV) are not checked: the plan made them.
Warnings are not asked again (they were shown and forced before the run).

``step_refusals`` returns the reasons; the executor stops the run on any and logs a refusal.
"""

from __future__ import annotations

from dataclasses import replace

from app.backend import Backend
from app.model import Machine
from app.plans import ops
from app.plans.guards.eligibility import disk_of
from app.plans.guards.identity import identity_problems
from app.plans.guards.lifecycle_checks import lifecycle_refusals
from app.plans.guards.mountpoints import mountpoint_refusals
from app.plans.guards.plan_devices import argv_devices
from app.plans.guards.preflight import check, check_busy, check_smart, strip_dev
from app.plans.plan import Plan, escape_controls


def _new(plan: Plan, i: int, machine: Machine | None) -> tuple[list[str], list[str], list[str]]:
    """(overwritten, written, erased) devices step ``i`` adds to what the steps before it
    write (erased: whose signatures it erases, or the array it stops)."""
    before = argv_devices(replace(plan, steps=plan.steps[:i]), machine)
    upto = argv_devices(replace(plan, steps=plan.steps[: i + 1]), machine)
    over = [d for d in upto.overwrites if d not in before.overwrites]
    written = [d for d in upto.written if d not in before.written and d not in over]
    erased = [
        d for d in (*upto.erased, *upto.stopped) if d not in (*before.erased, *before.stopped)
    ]
    return over, written, erased


def step_refusals(plan: Plan, i: int, backend: Backend) -> list[str]:
    """Why step ``i`` must not start now (empty: it may); probes only for steps that write to
    devices. Never raises."""
    step = plan.steps[i]
    op = step.op
    if isinstance(op, (ops.MakeMountPoint, ops.Mount)):  # its directories, right before it
        path = op.path if isinstance(op, ops.MakeMountPoint) else op.mountpoint
        refused = mountpoint_refusals(backend, path)
        if refused:
            return [escape_controls(f"{issue} [{issue.code}]") for issue in refused]
    over, written, erased = _new(plan, i, None)
    shown = [strip_dev(d) for d in op.identifies()]  # a test or a light: still the same disk?
    if not over and not written and not erased and not step.op.grows():
        if not shown or plan.disks is None:
            return []
        try:
            machine = backend.probe()
        except Exception as e:
            return [f"cannot read the machine's current state: {escape_controls(str(e))[:200]}"]
        named = [disk_of(machine, d) for d in shown]
        return [escape_controls(x) for x in identity_problems(plan, machine, named)]
    try:
        machine = backend.probe()
        over, written, erased = _new(plan, i, machine)
    except Exception as e:  # a failed probe stops the run: it never skips the checks
        return [f"cannot read the machine's current state: {escape_controls(str(e))[:200]}"]
    disks = list(
        dict.fromkeys(
            disk_of(machine, strip_dev(d))
            for d in (*over, *written, *erased)
            if machine.disk(disk_of(machine, strip_dev(d))) is not None
        )
    )
    try:
        smart = {d: backend.smart(d) for d in disks}
    except Exception as e:
        return [f"cannot read SMART: {escape_controls(str(e))[:200]}"]
    issues = list(check_busy(machine, [step.op]))
    if erased:  # the arrays stopped before this step are gone from the fresh probe already
        stops = [a for a in erased if machine.array(a) is not None]
        issues += lifecycle_refusals(machine, stops, [d for d in erased if d not in stops])
    if over:
        issues += check(machine, over, check_sizes=False, smart=smart).refusals
    for w in written:
        issues += check_smart(machine, strip_dev(w), smart)[0]
    out = [f"{issue} [{issue.code}]" for issue in issues]
    if plan.disks is not None:
        out += identity_problems(plan, machine, disks)
    return [escape_controls(x) for x in out]
