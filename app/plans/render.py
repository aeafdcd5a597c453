"""Plans and pre-flight results as text (CLI), and which devices a saved plan overwrites."""

from __future__ import annotations

import json
from dataclasses import replace

from app.backend import Backend
from app.model import Machine
from app.model.smart import SmartReading
from app.plans.bitmap_dirty import read_bitmap_dirty
from app.plans.consequence_types import Consequences, Limits
from app.plans.consequences import limits_from_texts, with_consequences
from app.plans.eligibility import disk_of
from app.plans.lifecycle_checks import lifecycle_refusals
from app.plans.plan import Plan, escape_controls
from app.plans.plan_devices import argv_devices
from app.plans.preflight import Issue, Preflight, check, check_busy, check_smart, strip_dev
from app.plans.targets import missing_targets


def format_plan(plan: Plan, preflight: Preflight | None = None) -> str:
    """The plan as text; every text from the plan with its control characters escaped."""
    digest = plan.digest
    plan = plan.escaped()
    out = [plan.title]
    c = plan.consequences
    if c is not None and (c.syncs or c.lines()):
        out += [f"consequences: {line}" for line in map(escape_controls, c.lines())]
    if plan.destructive:
        out.append(f"DESTROYS DATA — to confirm, type the target's name: {plan.target}")
    elif plan.needs_typed:
        out.append(f"WEAKENS AN ARRAY — to confirm, type the target's name: {plan.target}")
    out.append(f"digest: {digest}")
    out.append("")
    for i, s in enumerate(plan.steps, 1):
        mark = "  [DESTROYS DATA]" if s.destructive else ""
        out.append(f"{i:>2}. {s.shell()}")
        out.append(f"      # {s.why}{mark}")
    if plan.warnings:
        out.append("")
        out += [f"warning: {w}" for w in plan.warnings]
    if plan.notes:
        out.append("")
        for n in plan.notes:  # escaped() keeps their newlines: one note, several lines
            first, *rest = n.splitlines() or [""]
            out.append(f"note: {first}")
            out += [f"      {r}" for r in rest]
    if preflight is not None and (preflight.refusals or preflight.warnings):
        out.append("")
        out.append("pre-flight:")
        out += [f"  {escape_controls(line)}" for line in preflight.lines()]
    return "\n".join(out) + "\n"


def read_limits(backend: Backend | None, machine: Machine) -> Limits:
    """md's speed limits in force as the backend reads them now: the system's
    (/proc/sys/dev/raid/speed_limit_min/max) and each array's own md/sync_speed_min/max."""
    if backend is None:
        return Limits()

    def read(path: str) -> str | None:
        try:
            return backend.read_text(path)
        except Exception:  # unreadable is unknown, never an error in a preview
            return None

    local = {
        a.name: (
            read(f"/sys/block/{a.name}/md/sync_speed_min"),
            read(f"/sys/block/{a.name}/md/sync_speed_max"),
        )
        for a in machine.arrays
        if not a.is_container
    }
    return limits_from_texts(
        read("/proc/sys/dev/raid/speed_limit_min"),
        read("/proc/sys/dev/raid/speed_limit_max"),
        local,
    )


def current_consequences(plan: Plan, machine: Machine, backend: Backend | None) -> Plan:
    """``plan`` with its consequences on ``machine`` as it is now (the limits read through
    ``backend``): what ``raidman plan`` prints, ``apply`` confirms and the TUI's preview shows.
    Whatever consequences the plan came with (a plan file's included) are replaced. Should
    working them out fail, the plan asks for the typed name (unknown is never "yes")."""
    try:
        limits = read_limits(backend, machine)
        return with_consequences(plan, machine, limits, read_bitmap_dirty(plan, machine, backend))
    except Exception:
        return replace(plan, consequences=Consequences(confirm="typed"))


def preflight_json(pf: Preflight) -> dict[str, list[dict[str, str]]]:
    return {
        "refusals": [
            {"code": i.code, "device": i.device, "message": i.message} for i in pf.refusals
        ],
        "warnings": [
            {"code": i.code, "device": i.device, "message": i.message} for i in pf.warnings
        ],
    }


def plan_file_text(
    plan: Plan, preflight: Preflight, *, host: str | None = None, backend: str | None = None
) -> str:
    """The plan file ``raidman plan --json``/``--out`` and the TUI's save write, and
    ``raidman apply`` reads: ``Plan.to_json()`` (with its digest) plus the pre-flight found, the
    host it was made for (``--host``: apply refuses to run it on another machine) and the
    backend it was made on ("linux", "demo: raid6-wd": apply refuses it on another one)."""
    data = plan.to_json()
    data["preflight"] = preflight_json(preflight)
    if host is not None:
        data["host"] = host
    if backend is not None:
        data["backend"] = backend
    return json.dumps(data, indent=2) + "\n"


def preflight_for(plan: Plan, machine: Machine, backend: Backend | None) -> Preflight:
    """Pre-flight the devices ``plan``'s commands write to, on ``machine`` as it is now (also run
    again right before the plan runs, in the TUI and by ``raidman apply``).

    The devices, level, layout and array come from the argv (``plan_devices.argv_devices``), never
    from the plan's ``params`` or ``kind``: a saved plan is checked for what it would really run."""
    dev = argv_devices(plan, machine)
    # an array or member the argv names that is not on this machine (a plan saved elsewhere)
    busy = missing_targets(plan, machine) + check_busy(machine, (s.op for s in plan.steps))
    busy += lifecycle_refusals(machine, dev.stopped, dev.erased)
    # a re-added member and a replacement already in as a spare are written too: SMART must pass
    targets = [*dev.overwrites, *dev.written]
    smart = _smart_of(machine, backend, targets)
    if not dev.overwrites:
        refused = [i for t in targets for i in check_smart(machine, strip_dev(t), smart)[0]]
        return Preflight(tuple(busy + refused))
    # devices of a create-array are compared with each other; single added devices are not
    pf = check(
        machine,
        dev.overwrites,
        backend=backend,
        level=dev.level,
        layout=dev.layout,
        raid_devices=dev.raid_devices if dev.level else None,
        check_sizes=dev.level is not None,
        array=dev.array,
        smart=smart,
    )
    more = [i for t in dev.written for i in check_smart(machine, strip_dev(t), smart)[0]]
    return Preflight((*busy, *pf.refusals, *more), pf.warnings)


def preflight_now(plan: Plan, backend: Backend) -> Preflight:
    """Pre-flight on a fresh probe (run right before the plan runs). A probe that fails is a
    refusal, not a pass."""
    try:
        machine = backend.probe()
    except Exception as e:  # a backend error must stop the run, never skip the checks
        why = f"cannot read the machine's current state: {e}"
        return Preflight((Issue("unchecked", "", why),))
    return preflight_for(plan, machine, backend)


def _smart_of(
    machine: Machine, backend: Backend | None, devices: list[str]
) -> dict[str, SmartReading]:
    """SMART of the whole disks under ``devices`` (one reading per disk; none without a backend)."""
    if backend is None:
        return {}
    out: dict[str, SmartReading] = {}
    for d in devices:
        disk = disk_of(machine, strip_dev(d))
        if disk not in out and machine.disk(disk) is not None:
            out[disk] = backend.smart(disk)
    return out


def confirmation_matches(plan: Plan, typed: str) -> bool:
    """The typed text confirms a plan that needs it (``Plan.needs_typed``): its target, or the
    target's last path part."""
    t = typed.strip()
    if not t or not plan.target:
        return False
    return t in (plan.target, plan.target.rsplit("/", 1)[-1], f"/dev/{plan.target}")
