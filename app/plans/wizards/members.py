"""Member wizard: add, add spare, fail, remove, re-add, replace, grow raid-devices.

All act on an existing array (kernel name, e.g. "md127") found in the Machine.
"""

from __future__ import annotations

from app.model import Machine, MdArray, levels
from app.plans.geometry import PlanError
from app.plans.plan import Plan, Step
from app.plans.preflight import strip_dev

ACTIONS = ("add", "spare", "fail", "remove", "re-add", "replace", "grow")


def _array(machine: Machine, array: str) -> MdArray:
    name = strip_dev(array)
    a = machine.array(name)
    if a is None:
        raise PlanError(f"no md array {name!r} on this machine")
    if a.is_container:
        raise PlanError(f"{name} is a container: manage members of its volumes via the container")
    return a


def tolerance(a: MdArray) -> int:
    """How many members the array can lose and still run."""
    return levels.failures_survived(a.level, a.raid_disks or len(a.members), a.layout)


def _plan(a: MdArray, action: str, steps: list[Step], **kw: object) -> Plan:
    notes = kw.pop("notes", ())
    warnings = kw.pop("warnings", ())
    target = str(kw.pop("target", a.name))
    return Plan(
        title=f"{action} on {a.path}: " + str(kw.pop("what", "")),
        steps=tuple(steps),
        target=target,
        kind=f"member-{action}",
        params={"array": a.name, "action": action, **kw},
        notes=tuple(notes),  # type: ignore[arg-type]
        warnings=tuple(warnings),  # type: ignore[arg-type]
    )


def build_add(machine: Machine, array: str, device: str, *, spare: bool = False) -> Plan:
    a = _array(machine, array)
    dev = strip_dev(device)
    if a.member(dev) is not None:
        raise PlanError(f"{dev} is already a member of {a.name}")
    if not a.has_redundancy:
        raise PlanError(f"{a.level} has no redundancy: adding needs a grow (reshape)")
    opt = "--add-spare" if spare else "--add"
    if spare:
        why = f"add /dev/{dev} to {a.path} as a hot spare (takes over when a member fails)"
    elif a.is_degraded:
        why = f"add /dev/{dev} to the degraded {a.path}: recovery onto it starts at once"
    else:
        why = f"add /dev/{dev} to {a.path}: the array is complete, so it becomes a spare"
    notes = ["the device's current content is overwritten (md superblock and, on recovery, data)"]
    return _plan(
        a,
        "spare" if spare else "add",
        [Step(("mdadm", a.path, opt, f"/dev/{dev}"), why, destructive=True)],
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
        if a.degraded + 1 > tolerance(a):
            raise PlanError(
                f"failing {dev} would stop {a.name} ({a.level}, {a.degraded} already missing): refused"
            )
        why = f"mark /dev/{dev} faulty: {a.path} runs degraded until it is re-added or replaced"
        warnings.append(f"{a.name} loses redundancy while {dev} is out")
    return _plan(
        a,
        "fail",
        [Step(("mdadm", a.path, "--fail", f"/dev/{dev}"), why)],
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
    if m.role not in ("faulty", "spare"):
        raise PlanError(
            f"{dev} is an active member ({m.role}): mdadm removes only faulty or spare members; "
            "fail it first"
        )
    return _plan(
        a,
        "remove",
        [
            Step(
                ("mdadm", a.path, "--remove", f"/dev/{dev}"),
                f"detach the {m.role} /dev/{dev} from {a.path} (its superblock stays for a re-add)",
            )
        ],
        device=dev,
        what=f"/dev/{dev}",
    )


def build_re_add(machine: Machine, array: str, device: str) -> Plan:
    a = _array(machine, array)
    dev = strip_dev(device)
    m = a.member(dev)
    if m is not None and m.role != "faulty":
        raise PlanError(f"{dev} is still in {a.name} ({m.role})")
    notes: list[str] = []
    warnings: list[str] = []
    if m is not None:
        raise PlanError(f"{dev} is still in {a.name} as faulty: remove it first")
    if a.bitmap:
        why = (
            f"put /dev/{dev} back into {a.path} in its old slot; the write-intent bitmap "
            "means only blocks written since it left are resynced (quick)"
        )
    else:
        why = (
            f"put /dev/{dev} back into {a.path}; without a bitmap md rebuilds the whole device "
            "(as long as adding a new disk) unless no write happened meanwhile"
        )
        warnings.append(
            f"{a.name} has no write-intent bitmap: a re-add means a full rebuild of {dev}, and "
            'mdadm usually refuses --re-add outright ("not possible"); then use the add '
            "action, which rebuilds the whole device"
        )
        notes.append(
            "re-add without a bitmap only makes sense when the drop-out had a fixed cause "
            "(cable, timeout) and you keep the disk; for a failing disk use replace"
        )
    if not a.is_degraded:
        warnings.append(f"{a.name} is not degraded: mdadm will refuse the re-add (no vacant slot)")
    return _plan(
        a,
        "re-add",
        [Step(("mdadm", a.path, "--re-add", f"/dev/{dev}"), why)],
        device=dev,
        what=f"/dev/{dev}",
        notes=notes,
        warnings=warnings,
    )


def build_replace(machine: Machine, array: str, old: str, new: str) -> Plan:
    a = _array(machine, array)
    o, n = strip_dev(old), strip_dev(new)
    mo = a.member(o)
    if mo is None:
        raise PlanError(f"{o} is not a member of {a.name}")
    if mo.slot is None or mo.role not in ("in_sync", "rebuilding"):
        raise PlanError(f"{o} is {mo.role}: --replace copies from an active member")
    if not a.has_redundancy:
        raise PlanError(f"{a.level} has no redundancy: --replace is not supported")
    steps: list[Step] = []
    mn = a.member(n)
    if mn is None:
        steps.append(
            Step(
                ("mdadm", a.path, "--add-spare", f"/dev/{n}"),
                f"add /dev/{n} as a spare: --replace needs the new device in the array first",
                destructive=True,
            )
        )
    elif mn.role != "spare":
        raise PlanError(f"{n} is already an active member of {a.name}")
    steps.append(
        Step(
            ("mdadm", a.path, "--replace", f"/dev/{o}", "--with", f"/dev/{n}"),
            f"copy /dev/{o} onto /dev/{n} while {o} stays active (redundancy is kept); "
            f"{o} is marked faulty when done",
        )
    )
    return _plan(
        a,
        "replace",
        steps,
        old=o,
        new=n,
        target=n,
        what=f"/dev/{o} with /dev/{n}",
        notes=[f"when the copy finishes, remove the old device: mdadm {a.path} --remove /dev/{o}"],
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
    if a.level == "raid10" and levels.raid10_layout(a.layout).far > 1:
        raise PlanError(f"md reshapes RAID-10 only with near layouts, not {a.layout}")
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
                ("mdadm", a.path, "--add", f"/dev/{d}"),
                f"add /dev/{d} (as a spare until the reshape takes it in)",
                destructive=True,
            )
        )
    argv = ["mdadm", "--grow", a.path, f"--raid-devices={raid_devices}"]
    notes: list[str] = []
    if needs_backup_file(a, raid_devices) or backup_file:
        bf = backup_file or f"/root/{a.name}-grow.backup"
        argv.append(f"--backup-file={bf}")
        notes.append(
            f"--backup-file {bf}: must be on a device outside {a.name}; keep it until the "
            "reshape finishes (needed to resume after a crash)"
        )
    kind = "reshape" if a.level != "raid1" else "resync of the new mirror"
    steps.append(
        Step(
            tuple(argv),
            f"change {a.path} from {cur} to {raid_devices} raid devices ({kind}; runs in the "
            "background, slow, the array stays usable)",
            destructive=raid_devices < cur,
        )
    )
    if a.level != "raid1":
        notes.append("after the reshape: grow what sits on top (pvresize / resize2fs / xfs_growfs)")
    return _plan(
        a,
        "grow",
        steps,
        raid_devices=raid_devices,
        add=list(adds),
        what=f"{cur} → {raid_devices} devices",
        notes=notes,
        target=a.name,
    )
