"""Plans and pre-flight results as text (CLI), and which devices a saved plan overwrites."""

from __future__ import annotations

from app.model import Machine
from app.model.smart import SmartReading
from app.plans.eligibility import disk_of
from app.plans.plan import Plan
from app.plans.preflight import Issue, Preflight, check, check_busy, check_smart, strip_dev
from backends.base import Backend


def format_plan(plan: Plan, preflight: Preflight | None = None) -> str:
    out = [plan.title]
    if plan.destructive:
        out.append(f"DESTROYS DATA — to confirm, type the target's name: {plan.target}")
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
        for n in plan.notes:
            first, *rest = n.splitlines() or [""]
            out.append(f"note: {first}")
            out += [f"      {r}" for r in rest]
    if preflight is not None and (preflight.refusals or preflight.warnings):
        out.append("")
        out.append("pre-flight:")
        out += [f"  {line}" for line in preflight.lines()]
    return "\n".join(out) + "\n"


def preflight_json(pf: Preflight) -> dict[str, list[dict[str, str]]]:
    return {
        "refusals": [
            {"code": i.code, "device": i.device, "message": i.message} for i in pf.refusals
        ],
        "warnings": [
            {"code": i.code, "device": i.device, "message": i.message} for i in pf.warnings
        ],
    }


def plan_devices(plan: Plan) -> tuple[tuple[str, ...], str | None, str | None]:
    """(devices the plan overwrites, RAID level for the count check, layout) from its params."""
    p = plan.params
    kind = plan.kind
    if kind == "create-array":
        devs = tuple(p.get("devices") or ()) + tuple(p.get("spares") or ())
        return devs, p.get("level"), p.get("layout")
    if kind == "filesystem":
        return ((str(p["array"]),) if p.get("array") else ()), None, None
    if kind in ("member-add", "member-spare"):
        return ((str(p["device"]),) if p.get("device") else ()), None, None
    if kind == "member-replace":  # only when the plan adds it (not when it is already a spare)
        new = p.get("new")
        adds = new and any(f"/dev/{new}" in s.argv and "--add-spare" in s.argv for s in plan.steps)
        return ((str(new),) if adds else ()), None, None
    if kind == "member-grow":
        return tuple(str(d) for d in p.get("add") or ()), None, None
    return (), None, None


def preflight_for(plan: Plan, machine: Machine, backend: Backend | None) -> Preflight:
    """Pre-flight the devices ``plan`` overwrites, on ``machine`` as it is now (also run again
    right before the plan runs, in the TUI and by ``raidman apply``)."""
    devices, level, layout = plan_devices(plan)
    busy = check_busy(machine, (s.argv for s in plan.steps))
    array = str(plan.params.get("array") or "") if plan.kind.startswith("member-") else ""
    targets = list(devices)
    # a re-added member and a replacement already in as a spare are written too: SMART must pass
    extra = {"member-re-add": "device", "member-replace": "new"}.get(plan.kind)
    if extra and plan.params.get(extra) and str(plan.params[extra]) not in targets:
        targets.append(str(plan.params[extra]))
    smart = _smart_of(machine, backend, targets)
    if not devices:
        refused = [i for t in targets for i in check_smart(machine, strip_dev(t), smart)[0]]
        return Preflight(tuple(busy + refused))
    # devices of a create-array are compared with each other; single added devices are not
    pf = check(
        machine,
        devices,
        backend=backend,
        level=level,
        layout=layout,
        raid_devices=len(plan.params.get("devices") or devices) if level else None,
        check_sizes=plan.kind == "create-array",
        array=array or None,
        smart=smart,
    )
    more = [
        i for t in targets[len(devices) :] for i in check_smart(machine, strip_dev(t), smart)[0]
    ]
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
    """The typed text confirms a destructive plan: its target, or the target's last path part."""
    t = typed.strip()
    if not t or not plan.target:
        return False
    return t in (plan.target, plan.target.rsplit("/", 1)[-1], f"/dev/{plan.target}")
