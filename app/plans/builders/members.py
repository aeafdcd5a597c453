"""Member wizard: add, add spare, fail, remove, re-add, grow (replace: app.plans.builders.replace).raid-devices.

All act on an existing array (kernel name, e.g. "md127") found in the Machine. "Replace this
member" and "re-add this member" are one plan each (issue 16): the fail and remove they need are
steps of the same plan, and the plan's notes say what the rebuild costs with and without a
write-intent bitmap (``rebuild_cost``).
"""

from __future__ import annotations

from dataclasses import replace

from app.format import human_bytes
from app.model import Machine, MdArray, MdMember, levels
from app.plans import ops
from app.plans.geometry import PlanError
from app.plans.guards.eligibility import needed_member_bytes
from app.plans.guards.preflight import strip_dev
from app.plans.outcome.arrays import survives_without
from app.plans.outcome.consequences import with_consequences
from app.plans.plan import Plan, Step
from app.plans.shapes import created_file_problem

ACTIONS = ("add", "spare", "fail", "remove", "re-add", "replace", "grow")


def _array(machine: Machine, array: str) -> MdArray:
    name = strip_dev(array)
    a = machine.array(name)
    if a is None:
        raise PlanError(f"no md array {name!r} on this machine")
    if a.is_container:
        raise PlanError(f"{name} is a container: manage members of its volumes via the container")
    return a


def _stops(a: MdArray, dev: str, action: str) -> None:
    """Refuse a fail that would stop the array: from the level's model of which members hold
    which data (``levels.failures_left``: RAID-10 copy sets by slot, RAID-4/5/6 parity count,
    RAID-1 the last mirror), not from a count of missing members."""
    if survives_without(a, dev) < 0:
        missing = f", {a.degraded} already missing" if a.degraded else ""
        raise PlanError(
            f"failing {dev} would stop {a.name} ({a.level}{missing}): it holds data no other "
            f"working member has; refused"
            + (f" — {action} it when the array has redundancy to spare" if action else "")
        )


def _plan(machine: Machine, a: MdArray, action: str, steps: list[Step], **kw: object) -> Plan:
    notes = kw.pop("notes", ())
    warnings = kw.pop("warnings", ())
    target = str(kw.pop("target", a.name))
    return _attach(
        machine,
        Plan(
            title=f"{action} on {a.path}: " + str(kw.pop("what", "")),
            steps=tuple(steps),
            target=target,
            kind=f"member-{action}",
            params={"array": a.name, "action": action, **kw},
            notes=tuple(notes),  # type: ignore[arg-type]
            warnings=tuple(warnings),  # type: ignore[arg-type]
        ),
    )


def _attach(machine: Machine, plan: Plan) -> Plan:
    """The plan with its consequences; one that weakens an array is confirmed by typing the
    array's name (the target, unless the plan overwrites a device: then that device's)."""
    plan = with_consequences(plan, machine)
    c = plan.consequences
    if c is not None and c.confirm == "typed" and not plan.destructive:
        weak = [r.array for r in c.redundancy if r.during < r.now or r.after < r.now]
        if weak:
            plan = replace(plan, target=weak[0])
    return plan


def build_add(machine: Machine, array: str, device: str, *, spare: bool = False) -> Plan:
    a = _array(machine, array)
    dev = strip_dev(device)
    if a.member(dev) is not None:
        raise PlanError(f"{dev} is already a member of {a.name}")
    if not a.has_redundancy:
        raise PlanError(f"{a.level} has no redundancy: adding needs a grow (reshape)")
    if spare:
        why = f"add /dev/{dev} to {a.path} as a hot spare (takes over when a member fails)"
    elif a.is_degraded:
        why = f"add /dev/{dev} to the degraded {a.path}: recovery onto it starts at once"
    else:
        why = f"add /dev/{dev} to {a.path}: the array is complete, so it becomes a spare"
    notes = ["the device's current content is overwritten (md superblock and, on recovery, data)"]
    if a.is_degraded and not spare:
        notes.append(REBUILD_LOAD)
    return _plan(
        machine,
        a,
        "spare" if spare else "add",
        [Step(ops.AddMember(a.path, f"/dev/{dev}", spare=spare), why)],
        device=dev,
        target=dev,
        what=f"/dev/{dev}",
        notes=notes,
    )


def build_fail(machine: Machine, array: str, device: str) -> Plan:
    a = _array(machine, array)
    dev = strip_dev(device)
    m = a.member(dev)
    if m is None:
        raise PlanError(f"{dev} is not a member of {a.name}")
    if m.role == "faulty":
        raise PlanError(f"{dev} is already marked faulty in {a.name}")
    warnings: list[str] = []
    if m.role == "spare":
        why = f"mark the spare /dev/{dev} faulty (no effect on redundancy)"
    else:
        _stops(a, dev, "")
        why = f"mark /dev/{dev} faulty: {a.path} runs degraded until it is re-added or replaced"
        warnings.append(f"{a.name} loses redundancy while {dev} is out")
    return _plan(
        machine,
        a,
        "fail",
        [Step(ops.FailMember(a.path, f"/dev/{dev}"), why)],
        device=dev,
        what=f"/dev/{dev}",
        warnings=warnings,
    )


def build_remove(machine: Machine, array: str, device: str) -> Plan:
    a = _array(machine, array)
    dev = strip_dev(device)
    m = a.member(dev)
    if m is None:
        raise PlanError(f"{dev} is not a member of {a.name}")
    if m.working:
        raise PlanError(
            f"{dev} is an active member ({m.role}): mdadm removes only faulty or spare members; "
            "fail it first"
        )
    return _plan(
        machine,
        a,
        "remove",
        [
            Step(
                ops.RemoveMember(a.path, f"/dev/{dev}"),
                f"detach the {m.role} /dev/{dev} from {a.path} (its superblock stays for a re-add)",
            )
        ],
        device=dev,
        what=f"/dev/{dev}",
    )


# what a full recovery costs, measured: a re-add or add without a bitmap rewrote 1.00 × the
# member's capacity on a real kernel (tests/vm/test_recovery.py, article 000's RAID-5 after a loose
# cable: 1.62 TB written to one SSD)
FULL_RECOVERY = "1.00 × its capacity, measured on a real kernel"
# a recovery reads every other member in full while the array runs without (some) redundancy
REBUILD_LOAD = (
    "while it rebuilds, keep other load off the array if you can (its filesystems unmounted or "
    "mounted read-only): the recovery reads every remaining member in full, and foreground I/O "
    "slows it down and stresses the members that now carry the data alone"
)


def member_bytes(machine: Machine, a: MdArray, dev: str) -> int | None:
    """What a full recovery writes to ``dev``: its used size in the array (md/dev-*/size), else
    the largest member's, else the device's own size."""
    m = a.member(dev)
    if m is not None and m.size_kib:
        return m.size_kib * 1024
    need = needed_member_bytes(machine, a.name)
    if need:
        return need
    d = machine.device(dev)
    size = getattr(d, "size_bytes", None)
    return size if isinstance(size, int) and size > 0 else None


def _size(n: int | None) -> str:
    return human_bytes(n, trim=True) if n else "the whole member"


def rebuild_cost(
    machine: Machine, a: MdArray, dev: str, *, how: str, onto: str | None = None
) -> str:
    """The bitmap's effect on what putting the member ``dev`` (back) into ``a`` writes, for the
    plan's notes (shown in the preview). ``how``: "re-add" (old member, bitmap used), "add" (old
    member, full recovery), "replace" / "recover" (the member's data copied / rebuilt ``onto`` a
    new device)."""
    size = _size(member_bytes(machine, a, dev))
    if how == "re-add":
        return (
            f"cost with the write-intent bitmap ({a.bitmap}): only the bitmap chunks written while "
            f"{dev} was out are resynced (seconds after a short drop-out); without a bitmap the "
            f"same re-add would be a full recovery writing {size} ({FULL_RECOVERY})"
        )
    if how == "add":
        return (
            f"cost without a write-intent bitmap: a full recovery writing the whole member, {size} "
            f"({FULL_RECOVERY}); with a bitmap (mdadm --grow --bitmap=internal {a.path}, once no "
            "sync runs) a re-add after a short drop-out resyncs only the chunks written meanwhile; "
            + REBUILD_LOAD
        )
    verb = "copies" if how == "replace" else "rebuilds"
    bitmap = f"its bitmap ({a.bitmap})" if a.bitmap else "a bitmap"
    return (
        f"cost: md {verb} the whole member onto {onto or dev}, {size} written ({FULL_RECOVERY}); "
        f"{bitmap} does not shorten this: it only spares a re-add of the old member"
        + (f"; {REBUILD_LOAD}" if how == "recover" else "")
    )


def _take_out(a: MdArray, dev: str, m: MdMember, action: str) -> tuple[list[Step], list[str]]:
    """fail (unless faulty already) + remove: ``dev`` leaves ``a``; refused when failing it
    would stop the array."""
    steps: list[Step] = []
    warnings: list[str] = []
    if m.role == "in_sync":
        _stops(a, dev, action)
        warnings.append(f"{a.name} loses redundancy from the fail until {dev}'s slot is rebuilt")
    if m.role != "faulty":
        state = "rebuilding " if m.role == "rebuilding" else ""
        steps.append(
            Step(
                ops.FailMember(a.path, f"/dev/{dev}"),
                f"mark the {state}member /dev/{dev} faulty (mdadm removes only faulty members)",
            )
        )
    steps.append(
        Step(
            ops.RemoveMember(a.path, f"/dev/{dev}"),
            f"detach the faulty /dev/{dev} from {a.path}",
        )
    )
    return steps, warnings


def _refuse_role(a: MdArray, dev: str, m: MdMember, action: str) -> None:
    if m.role == "spare":
        raise PlanError(
            f"{dev} is a spare of {a.name}: it holds no data to {action}"
            + ("; remove it, then add the new device" if action == "replace" else "")
        )
    if m.role not in ("in_sync", "rebuilding", "faulty"):
        raise PlanError(f"{dev} is a {m.role} member of {a.name}: {action} is not offered for it")


def build_re_add(machine: Machine, array: str, device: str) -> Plan:
    """Re-add this member, in one plan: fail (if it is still active) + remove + ``--re-add``.

    Without a write-intent bitmap mdadm refuses ``--re-add`` in most states (and even where it
    accepts, md rebuilds the whole member), so the plan puts the member back with ``--add`` and
    says so: a full recovery writing the whole member."""
    a = _array(machine, array)
    dev = strip_dev(device)
    m = a.member(dev)
    notes: list[str] = []
    warnings: list[str] = []
    steps: list[Step] = []
    if m is not None:
        _refuse_role(a, dev, m, "re-add")
        if m.role == "rebuilding":
            done = ""
            if a.sync is not None and a.sync.fraction is not None:
                done = f" ({a.sync.fraction * 100:.1f} % done)"
            raise PlanError(
                f"{dev} is being rebuilt into {a.name}{done}: there is nothing to re-add, and "
                "failing it would throw the rebuild away; wait for the rebuild to finish, or "
                "replace it with another device"
            )
        steps, warnings = _take_out(a, dev, m, "re-add")
    elif machine.device(dev) is None:
        raise PlanError(f"no device {dev!r} on this machine")
    elif not a.is_degraded:
        warnings.append(
            f"{a.name} is not degraded: there is no vacant slot, so {dev} would only become a spare"
        )
    if a.bitmap:
        why = (
            f"put /dev/{dev} back into {a.path} in its old slot; the write-intent bitmap means "
            "only blocks written since it left are resynced (quick)"
        )
        steps.append(Step(ops.ReAddMember(a.path, f"/dev/{dev}"), why))
        notes.append(rebuild_cost(machine, a, dev, how="re-add"))
        target = a.name
    else:
        why = (
            f"put /dev/{dev} back into {a.path} with --add, not --re-add: {a.name} has no "
            "write-intent bitmap, so mdadm refuses a re-add, and a re-add without a bitmap is a "
            f"full recovery writing the whole member ({FULL_RECOVERY})"
        )
        steps.append(Step(ops.AddMember(a.path, f"/dev/{dev}"), why))
        warnings.append(
            f"{a.name} has no write-intent bitmap: the member is rebuilt in full (--add); "
            "mdadm refuses --re-add without one"
        )
        notes.append(rebuild_cost(machine, a, dev, how="add"))
        notes.append(
            "re-adding makes sense when the drop-out had a fixed cause (cable, timeout) and you "
            "keep the disk; for a failing disk use replace"
        )
        target = dev
    return _plan(
        machine,
        a,
        "re-add",
        steps,
        device=dev,
        target=target,
        what=f"/dev/{dev}",
        notes=notes,
        warnings=warnings,
        method="re-add" if a.bitmap else "add",
    )


def needs_backup_file(a: MdArray, new_count: int) -> bool:
    """A reshape of RAID-4/5/6 needs --backup-file when md cannot move the data offset: metadata
    0.90/1.0 (superblock at the end, no room before the data) or when shrinking."""
    if a.level not in levels.PARITY:
        return False
    if a.raid_disks is not None and new_count < a.raid_disks:
        return True
    return a.metadata in ("0.90", "0.9", "1.0")


def build_grow(
    machine: Machine,
    array: str,
    raid_devices: int,
    *,
    add: tuple[str, ...] = (),
    backup_file: str | None = None,
) -> Plan:
    a = _array(machine, array)
    if a.level not in levels.REDUNDANT:
        raise PlanError(f"growing raid-devices of {a.level} is not offered")
    geo = levels.raid10_layout(a.layout) if a.level == "raid10" else None
    if geo is not None and geo.far > 1 and not geo.offset:
        # raid10.c raid10_check_reshape: "reject any reshape of a 'far' mode array" (far_copies
        # != 1 and not far_offset); near and offset layouts reshape (mdadm Grow.c agrees)
        raise PlanError(f"md cannot reshape a RAID-10 with a far layout ({a.layout})")
    cur = a.raid_disks or 0
    if raid_devices == cur:
        raise PlanError(f"{a.name} already has {cur} raid devices")
    if raid_devices < cur and a.level != "raid1":
        raise PlanError(
            "shrinking a striped array is not offered (shrink the filesystem and --array-size first)"
        )
    spares = sum(1 for m in a.members if m.role == "spare")
    adds = tuple(strip_dev(d) for d in add)
    if raid_devices > cur and spares + len(adds) < raid_devices - cur:
        raise PlanError(
            f"growing to {raid_devices} needs {raid_devices - cur} more devices: "
            f"{spares} spare(s) present, {len(adds)} to add"
        )
    steps: list[Step] = []
    for d in adds:
        if a.member(d) is not None:
            raise PlanError(f"{d} is already a member of {a.name}")
        steps.append(
            Step(
                ops.AddMember(a.path, f"/dev/{d}"),
                f"add /dev/{d} (as a spare until the reshape takes it in)",
            )
        )
    bf: str | None = None
    notes: list[str] = []
    if needs_backup_file(a, raid_devices) or backup_file:
        bf = backup_file or f"/root/{a.name}-grow.backup"
        if (bad := created_file_problem(bf)) is not None:
            raise PlanError(f"--backup-file {bad}")
        notes.append(
            f"--backup-file {bf}: must be on a device outside {a.name}; keep it until the "
            "reshape finishes (needed to resume after a crash)"
        )
    kind = "reshape" if a.level != "raid1" else "resync of the new mirror"
    steps.append(
        Step(
            ops.GrowDevices(a.path, raid_devices, bf),
            f"change {a.path} from {cur} to {raid_devices} raid devices ({kind}; runs in the "
            "background, slow, the array stays usable)",
        )
    )
    if a.level != "raid1":
        notes.append("after the reshape: grow what sits on top (pvresize / resize2fs / xfs_growfs)")
    return _plan(
        machine,
        a,
        "grow",
        steps,
        raid_devices=raid_devices,
        add=list(adds),
        what=f"{cur} → {raid_devices} devices",
        notes=notes,
        target=a.name,
    )
