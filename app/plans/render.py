"""Plans and pre-flight results as text (CLI), and which devices a saved plan overwrites."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace

from app.backend import Backend
from app.model import Machine
from app.model.smart import SmartReading
from app.plans import ops
from app.plans.guards.eligibility import disk_of
from app.plans.guards.file_edits import live_entry_refusals
from app.plans.guards.lifecycle_checks import lifecycle_refusals
from app.plans.guards.mountpoints import mountpoint_refusals
from app.plans.guards.plan_devices import argv_devices
from app.plans.guards.preflight import Issue, Preflight, check, check_busy, check_smart, strip_dev
from app.plans.guards.targets import missing_targets
from app.plans.outcome.bitmap_dirty import read_bitmap_dirty
from app.plans.outcome.consequence_types import Consequences, Limits
from app.plans.outcome.consequences import limits_from_texts, with_consequences
from app.plans.outcome.lost import carrier_refusals
from app.plans.outcome.rates import measure_progress_rates
from app.plans.plan import Plan, escape_controls
from app.plans.superblocks import Superblocks, read_superblocks


def format_plan(plan: Plan, preflight: Preflight | None = None) -> str:
    """The plan as text; every text from the plan with its control characters escaped."""
    digest = plan.digest
    plan = plan.escaped()
    out = [plan.title]
    c = plan.consequences
    if c is not None and (c.syncs or c.lines()):
        out += [f"consequences: {line}" for line in map(escape_controls, c.lines())]
    word = escape_controls(plan.confirm_word)
    if plan.kind == "retire" and plan.destructive:
        out.append(f"ERASES THE DISK — to confirm, type its serial: {word}")
    elif c is not None and c.lost:
        out.append(f"LOSES DATA — to confirm, type the name of what is lost: {word}")
    elif plan.destructive:
        out.append(f"DESTROYS DATA — to confirm, type the target's name: {word}")
    elif c is not None and any(s.degraded for s in c.stops):
        out.append(f"STOPS THE REBUILD OF A DEGRADED ARRAY — to confirm, type its name: {word}")
    elif plan.needs_typed:
        out.append(f"WEAKENS AN ARRAY — to confirm, type the target's name: {word}")
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


def current_consequences(
    plan: Plan,
    machine: Machine,
    backend: Backend | None,
    superblocks: Superblocks | None = None,
    rates: Mapping[str, float] | None = None,
) -> Plan:
    """``plan`` with its consequences on ``machine`` as it is now (the limits read through
    ``backend``; the superblocks given, else read through it when the plan destroys anything;
    the running syncs' rates given, else measured through it over a second): what ``raidman
    plan`` prints, ``apply`` confirms and the TUI's preview shows. Whatever consequences the
    plan came with (a plan file's included) are replaced. Should working them out fail, the
    plan asks for the typed name (unknown is never "yes")."""
    try:
        limits = read_limits(backend, machine)
        if superblocks is None and backend is not None and _destroys_any(plan):
            superblocks = read_superblocks(machine, backend)
        if rates is None and backend is not None and _syncing(machine):
            rates = measure_progress_rates(backend)
        dirty = read_bitmap_dirty(plan, machine, backend)
        return with_consequences(plan, machine, limits, dirty, superblocks, rates)
    except Exception:
        return replace(plan, consequences=Consequences(confirm="typed"))


def mount_paths(plan: Plan) -> list[str]:
    """The directories the plan makes or mounts on."""
    return [
        s.op.path if isinstance(s.op, ops.MakeMountPoint) else s.op.mountpoint
        for s in plan.steps
        if isinstance(s.op, (ops.MakeMountPoint, ops.Mount))
    ]


def _syncing(machine: Machine) -> bool:
    return any(a.sync is not None and a.sync.active for a in machine.arrays)


def _destroys_any(plan: Plan) -> bool:
    return any(s.op.destroys() is not None for s in plan.steps)


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


def preflight_for(
    plan: Plan,
    machine: Machine,
    backend: Backend | None,
    superblocks: Superblocks | None = None,
) -> Preflight:
    """Pre-flight the devices ``plan``'s steps write to, on ``machine`` as it is now (also run
    again right before the plan runs, in the TUI and by ``raidman apply``).

    The devices, level, layout and array come from the operations (``plan_devices``), never
    from the plan's ``params`` or ``kind``: a saved plan is checked for what it would really run.
    A device a step overwrites may not carry an md superblock of an array the kernel does not
    run from it (``lost.carrier_refusals``: data that looks free); erasing it is its own plan."""
    dev = argv_devices(plan, machine)
    # an array or member the steps name that is not on this machine (a plan saved elsewhere)
    busy = missing_targets(plan, machine) + check_busy(machine, (s.op for s in plan.steps))
    busy += lifecycle_refusals(machine, dev.stopped, dev.erased, dev.removed)
    if superblocks is None and backend is not None:
        superblocks = read_superblocks(machine, backend)
    busy += carrier_refusals(machine, superblocks, dev.overwrites, dev.array)
    busy += live_entry_refusals(plan, machine, superblocks, dev.stopped, dev.erased)
    for path in dict.fromkeys(mount_paths(plan)):
        busy += mountpoint_refusals(backend, path)
    # a re-added member and a replacement already in as a spare are written too: SMART must pass
    targets = [*dev.overwrites, *dev.written]
    smart = _smart_of(machine, backend, targets)
    if not dev.overwrites:
        refused = [i for t in targets for i in check_smart(machine, strip_dev(t), smart)[0]]
        return Preflight(tuple(dict.fromkeys(busy + refused)))
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
    refusals = dict.fromkeys((*busy, *pf.refusals, *more))  # one line per reason
    return Preflight(tuple(refusals), tuple(dict.fromkeys(pf.warnings)))


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
    """The typed text confirms a plan that needs it (``Plan.needs_typed``): the word it asks
    for (``Plan.confirm_word``), or its last path part."""
    t = typed.strip()
    w = plan.confirm_word
    if not t or not w:
        return False
    return t in (w, w.rsplit("/", 1)[-1], f"/dev/{w}")
