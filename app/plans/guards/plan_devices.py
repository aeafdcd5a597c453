"""Which devices a plan writes to (:func:`argv_devices`: what pre-flight checks, in every spelling
the steps name them), and the whole plan's problems (:func:`plan_problems`: its steps allowed
together, its kind known, destroying data only where its kind may) -- read from the plan's
operations (``app.plans.ops``), never from its params."""

from __future__ import annotations

from dataclasses import dataclass

from app.model import Machine
from app.plans import ops
from app.plans.geometry import normalize_level
from app.plans.guards.allowlist import plan_step_problems
from app.plans.guards.preflight import strip_dev
from app.plans.kinds import KNOWN_KINDS, NEVER_DESTROY
from app.plans.plan import Plan, escape_controls


@dataclass(frozen=True, slots=True)
class ArgvDevices:
    """What the operations (not the params) say a plan writes to."""

    overwrites: tuple[
        str, ...
    ] = ()  # kernel names (or /dev paths not on the machine) pre-flight checks
    level: str | None = None
    layout: str | None = None
    raid_devices: int | None = None
    names: frozenset[str] = frozenset()  # every device the steps name, in every spelling
    # written but not overwritten (a re-added member, a replacement already in as a spare):
    # pre-flight checks their health (SMART), not their emptiness
    written: tuple[str, ...] = ()
    array: str | None = None  # the array a member operation works on (kernel name)
    # arrays a step stops (pre-flight: nothing holds them open, app.plans.guards.lifecycle_checks)
    stopped: tuple[str, ...] = ()
    # devices whose signatures a step erases (zero-superblock, wipefs -a): in use by nothing
    # but the arrays stopped before them
    erased: tuple[str, ...] = ()
    # (array, device) a step takes out with mdadm --remove (a retire: then its superblock goes)
    removed: tuple[tuple[str, str], ...] = ()


def _resolve(machine: Machine | None, path: str) -> str:
    """/dev/md/127 → md127, /dev/vg0/data → dm-0 when the machine has them; else the kernel
    name or the path."""
    if machine is not None:
        for a in machine.arrays:
            if path in (a.path, f"/dev/{a.name}"):
                return a.name
        if path.startswith("/dev/md/"):  # the --name: /dev/md/127 of "host:127" is md127
            for a in machine.arrays:
                if a.array_name and a.array_name.rsplit(":", 1)[-1] == path[8:]:
                    return a.name
        for lv in machine.lvs:  # /dev/vg0/data or /dev/mapper/vg0-data → dm-0
            if lv.kernel_name and path in (lv.path, f"/dev/mapper/{lv.dm_name}"):
                return lv.kernel_name
    return strip_dev(path)


def _is_member(machine: Machine | None, array: str, dev: str) -> bool:
    """``dev`` is a member of ``array`` on the machine as it is now (unknown without one)."""
    a = machine.array(array) if machine is not None else None
    return a is not None and a.member(dev) is not None


def argv_devices(plan: Plan, machine: Machine | None = None) -> ArgvDevices:
    overwrites: list[str] = []
    names: set[str] = set()
    level = layout = None
    raid_devices: int | None = None
    created: set[str] = set()  # arrays and LVs the plan itself makes: nothing on them to lose
    written: list[str] = []
    array: str | None = None
    removed: set[tuple[str, str]] = set()  # (array, device) an earlier step removes
    stopped: list[str] = []
    erased: list[str] = []
    made_of: set[str] = set()  # the members of the arrays this plan creates

    def named(p: str) -> None:
        if p.startswith("/dev/"):
            names.update({p, p.rsplit("/", 1)[-1], _resolve(machine, p)})
        else:
            names.add(p)

    for s in plan.steps:
        op = s.op
        for x in op.names():
            named(x)
        if isinstance(op, ops.CreateArray):
            overwrites += op.overwrites()
            created.add(op.path)
            made_of.update(op.overwrites())
            level, layout, raid_devices = op.level, op.layout, op.raid_devices
        elif isinstance(op, ops.RemoveMember):
            removed.add((_resolve(machine, op.array_path), _resolve(machine, op.device)))
        elif isinstance(op, ops.AddMember):
            array = _resolve(machine, op.array_path)
            dev = _resolve(machine, op.device)
            if (array, dev) in removed and _is_member(machine, array, dev):
                # a member this plan takes out and puts back (re-add without a bitmap): in use
                # by this very array until then, so its health is checked, not its emptiness
                written.append(op.device)
            else:
                overwrites.append(op.device)
        elif isinstance(op, (ops.ReAddMember, ops.ReplaceMember)):
            written += op.writes()
            array = _resolve(machine, op.array_path)
        elif isinstance(op, ops.StopArray):
            if op.array_path not in created:  # the plan's own array (benchmark): not probed yet
                stopped.append(_resolve(machine, op.array_path))
        elif isinstance(op, ops.ZeroSuperblock):
            if not set(op.devices) <= made_of:  # not its own array's members
                erased += [_resolve(machine, d) for d in op.devices]
        elif isinstance(op, ops.Wipe):
            erased.append(_resolve(machine, op.device))
        elif isinstance(op, ops.LvCreate):
            created.add(op.creates())
        else:
            overwrites += [d for d in op.overwrites() if d not in created]
    resolved = tuple(dict.fromkeys(_resolve(machine, d) for d in overwrites))
    more = tuple(
        d for d in dict.fromkeys(_resolve(machine, w) for w in written) if d not in resolved
    )
    return ArgvDevices(
        resolved,
        level,
        layout,
        raid_devices,
        frozenset(names),
        more,
        array,
        tuple(dict.fromkeys(stopped)),
        tuple(dict.fromkeys(erased)),
        tuple(sorted(removed)),
    )


def _params_devices(plan: Plan) -> tuple[str, ...]:
    """What the plan's params claim it overwrites (the devices it was built for)."""
    p = plan.params

    def listed(key: str) -> tuple[str, ...]:
        v = p.get(key)  # a plan file's params are any JSON: only a list of names counts
        return tuple(str(x) for x in v) if isinstance(v, list) else ()

    def one(key: str) -> tuple[str, ...]:
        v = p.get(key)
        return (v,) if isinstance(v, str) and v else ()

    kind = plan.kind
    if kind == "create-array":
        return listed("devices") + listed("spares")
    if kind == "filesystem":
        return one("array")
    if kind in ("member-add", "member-spare"):
        return one("device")
    if kind == "member-grow":
        return listed("add")
    return ()


def plan_problems(plan: Plan, machine: Machine | None = None) -> list[str]:
    """Why a plan read from a file is refused: its steps, kind, devices and target must agree.

    Without ``machine`` (before probing) the checks that need /dev/md/NAME resolved to a kernel
    name are left for the call with the machine; everything else is checked."""
    out = plan_step_problems(plan)
    if not plan.kind:
        out.append("the plan has no 'kind': raidman cannot tell what it checks before running it")
    elif plan.kind not in KNOWN_KINDS:
        out.append(f"'kind' {escape_controls(plan.kind)!r} is not a plan raidman makes")
    if out:
        return out
    if plan.kind in NEVER_DESTROY:
        out += [
            f"step {i}: a {plan.kind} plan never destroys data, but this step does "
            f"({s.op.KIND} of {s.op.destroys()})"
            for i, s in enumerate(plan.steps, 1)
            if s.op.destroys() is not None
        ]
        if out:
            return out
    dev = argv_devices(plan, machine)
    claimed = {strip_dev(d) for d in _params_devices(plan)}
    actual = set(dev.overwrites)
    resolved = machine is not None or not any("/" in d for d in actual)
    must_name = plan.kind in ("create-array", "filesystem", "member-add", "member-spare")
    if resolved and plan.kind != "member-replace" and claimed != actual and (claimed or must_name):
        out.append(
            "the commands write to "
            + (", ".join(sorted(actual)) or "no device")
            + " but the plan's params name "
            + (", ".join(sorted(claimed)) or "none")
        )
    if plan.kind == "create-array" and dev.level is not None:
        want = plan.params.get("level")
        try:
            same = want is None or normalize_level(str(want)) == normalize_level(dev.level)
        except Exception:
            same = False
        if not same:
            out.append(f"the commands create level {dev.level} but the params say {want}")
    if machine is None:
        return [escape_controls(x) for x in out]
    if plan.params.get("array") and plan.kind != "create-array":
        arr = strip_dev(str(plan.params["array"]))
        if arr not in dev.names:
            out.append(f"the params name the array {arr} but the commands do not")
    if plan.target:
        t = plan.target
        if not ({t, strip_dev(t), t.rsplit("/", 1)[-1]} & dev.names):
            out.append(f"the target {t!r} is not a device the commands name")
    elif plan.destructive:
        out.append("a plan that destroys data needs a target to confirm")
    return [escape_controls(x) for x in out]


def resolve_device(machine: Machine | None, path: str) -> str:
    """The kernel name of the array or LV at ``path`` on ``machine`` (/dev/md/127 → md127),
    else the path without /dev/ (for the preview's sync bar of an array a plan created)."""
    return _resolve(machine, path)
