"""The md arrays as a plan's operations change them, step by step, on a staged copy of the
probed machine (``app.plans.outcome.staging``): members' roles and slots, the sync running now and what
the plan does to it, the syncs each step starts, whether md may start one at all (frozen), and
how many further failures each array survives (levels.failures_left).

md's rules played here, from the kernel source:
* a spare takes over a vacant slot at once, whichever option added it: ``md_check_recovery``
  → ``remove_and_add_spares`` (``spares_take_over``), unless the array is frozen;
* ``frozen`` written to ``sync_action`` interrupts the running sync and sets
  MD_RECOVERY_FROZEN: no sync starts until ``idle`` is written (md.c ``action_store``);
* ``idle`` interrupts it too and clears FROZEN: md_check_recovery then starts again what is
  needed — a resync from its checkpoint, a recovery from the member's recovery_offset — but
  not a check or repair (MD_RECOVERY_REQUESTED is the writer's);
* a failed member gets nothing more written: a resync or recovery is interrupted by
  ``md_error`` and restarted without it."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.model import Machine, MdArray, MdMember, levels
from app.model.sync_model import component_bytes
from app.plans import ops

SYNCING = ("resync", "recover", "check", "repair", "reshape")


@dataclass
class PlannedMember:
    device: str
    slot: int | None
    role: str  # in_sync | rebuilding | spare | faulty | replacement
    size: int  # bytes of the member in the array
    replaces: str | None = None  # a replacement: the member it copies


@dataclass
class PlannedArray:
    name: str
    level: str
    raid_disks: int
    layout: str | None
    bitmap: bool
    members: list[PlannedMember]
    new: bool = False  # created by this plan
    syncs: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (action, targets)
    changed: bool = False  # a step changes its members
    touched: bool = False  # a step names it
    # the sync md runs on it now (from the probe): (action, targets); and what the plan does
    # to it: "runs" (goes on), "stopped" (frozen), "restarts" (idle of a resync or recovery:
    # md starts it again from where it stopped), "ended" (idle of a check or repair),
    # "dropped" (the member it rebuilds failed)
    running: tuple[str, tuple[str, ...]] | None = None
    fate: str = "runs"
    frozen: bool = False  # no sync starts until idle is written

    def member(self, dev: str) -> PlannedMember | None:
        return next((m for m in self.members if m.device == dev), None)

    def working(self, *, done: bool = False) -> dict[int, str]:
        """slot → device of the members holding in-sync data (``done``: once syncs finish)."""
        out: dict[int, str] = {}
        for m in self.members:
            if m.slot is None or m.role == "faulty":
                continue
            if m.role == "in_sync" or (done and m.role == "rebuilding"):
                out.setdefault(m.slot, m.device)
        return out

    def survives(self, *, done: bool = False) -> int:
        w = self.working(done=done)
        return levels.failures_left(self.level, self.raid_disks, self.layout, frozenset(w))

    def lost_if(self, *, done: bool = False) -> tuple[str, ...]:
        return levels.lost_if(self.level, self.raid_disks, self.layout, self.working(done=done))

    def vacant_slot(self) -> int | None:
        taken = {m.slot for m in self.members if m.slot is not None and m.role != "faulty"}
        return next((s for s in range(self.raid_disks) if s not in taken), None)

    @property
    def degraded(self) -> bool:
        return len(self.working()) < self.raid_disks

    def spares_take_over(self) -> None:
        """md recovers onto a spare at once while a slot is vacant (md_check_recovery →
        remove_and_add_spares), unless the array is frozen or has no redundancy."""
        if self.frozen or self.level not in levels.REDUNDANT:
            return
        for m in self.members:
            if m.role != "spare":
                continue
            slot = self.vacant_slot()
            if slot is None:
                return
            m.slot, m.role = slot, "rebuilding"
            self.syncs.append(("recover", (m.device,)))

    def finish(self) -> None:
        """The syncs done: rebuilt members in sync, a replaced member gone (a frozen array's
        syncs never run: nothing changes)."""
        if self.frozen:
            return
        for m in list(self.members):
            if m.role == "rebuilding":
                m.role = "in_sync"
            elif m.role == "replacement":
                old = self.member(m.replaces or "")
                if old is not None:
                    self.members.remove(old)
                    m.slot = old.slot
                m.role = "in_sync"


def working_slots(a: MdArray) -> dict[int, str]:
    """slot → device of ``a``'s members that hold in-sync data now (not rebuilding, not faulty)."""
    return from_machine(a).working()


def survives_without(a: MdArray, device: str) -> int:
    """Further failures ``a`` survives once ``device`` has failed (−1: the failure stops it)."""
    w = working_slots(a)
    rest = frozenset(s for s, d in w.items() if d != device)
    return levels.failures_left(a.level, from_machine(a).raid_disks, a.layout, rest)


def from_machine(a: MdArray, machine: Machine | None = None) -> PlannedArray:
    """The array as probed; a member's size is md's (md/dev-*/size), else its device's, at
    most the array's component size (sync_model.component_bytes)."""

    comp = component_bytes(a)

    def size(m: MdMember) -> int:
        if m.size_kib:
            own = m.size_kib * 1024
        else:
            own = device_bytes(machine, m.device) if machine is not None else 0
        # what the array uses of it (an array made with --size uses less than the device)
        return min(own, comp) if own and comp else own or comp or 0

    ms = [
        PlannedMember(m.device, m.slot, m.role, size(m))
        for m in a.members
        if m.role in ("in_sync", "rebuilding", "spare", "faulty", "replacement")
    ]
    raid_disks = a.raid_disks or len([m for m in ms if m.slot is not None])
    s = a.sync
    running = (s.action, s.targets) if s is not None and s.action in SYNCING else None
    frozen = s is not None and s.action == "frozen"
    return PlannedArray(
        a.name,
        a.level,
        raid_disks,
        a.layout,
        a.bitmap is not None,
        ms,
        running=running,
        frozen=frozen,
    )


def device_bytes(machine: Machine, dev: str) -> int:
    size = getattr(machine.device(dev), "size_bytes", None)
    return size if isinstance(size, int) and size > 0 else 0


def strip_dev(p: str) -> str:
    return p[5:] if p.startswith("/dev/") and "/" not in p[5:] else p


def array_of(machine: Machine, arrays: dict[str, PlannedArray], path: str) -> PlannedArray | None:
    """The array at ``path`` (/dev/md127, /dev/md/127) as the plan has left it so far."""
    for planned in arrays.values():
        if path in (f"/dev/{planned.name}", planned.name, f"/dev/md/{planned.name[2:]}"):
            return planned
    for a in machine.arrays:
        names = {a.path, f"/dev/{a.name}"}
        if a.array_name:
            names.add(f"/dev/md/{a.array_name.rsplit(':', 1)[-1]}")
        if path in names and not a.is_container:
            return arrays.setdefault(a.name, from_machine(a, machine))
    return None


def create_array(machine: Machine, op: ops.CreateArray) -> PlannedArray:
    devs = [strip_dev(d) for d in op.devices]
    spares = [strip_dev(d) for d in op.spares]
    n = len(devs)
    level = op.level if op.level == "linear" else f"raid{op.level}"
    layout = op.layout or ("n2" if level == "raid10" else None)
    size = min((device_bytes(machine, d) for d in devs), default=0)
    members = [PlannedMember(d, i, "in_sync", size) for i, d in enumerate(devs)]
    members += [PlannedMember(d, None, "spare", size) for d in spares]
    name = op.path.rsplit("/", 1)[-1]
    a = PlannedArray(
        name if not name.isdigit() else f"md{name}",
        level,
        n,
        layout,
        (op.bitmap or "internal") != "none",
        members,
        new=True,
        changed=True,
        touched=True,
    )
    if level in levels.REDUNDANT and not op.assume_clean:
        # --assume-clean: md starts the array in sync (mdadm Create.c sets resync_start to
        # MaxSector), nothing is written until the data is
        if level in ("raid4", "raid5") and members:
            # mdadm Create.c builds a RAID-4/5 degraded and recovers the last member
            members[n - 1].role = "rebuilding"
        a.syncs.append(("resync", ()))
    return a


def manage_member(machine: Machine, a: PlannedArray, op: ops.Op, dev: str) -> None:
    m = a.member(dev)
    a.changed = True
    if isinstance(op, ops.FailMember) and m is not None:
        rebuilt = m.role in ("rebuilding", "replacement")
        m.role = "faulty"
        a.syncs = [(act, t) for act, t in a.syncs if dev not in t]
        if a.running is not None and (dev in a.running[1] or rebuilt) and a.fate == "runs":
            a.fate = "dropped"  # md_error interrupts the recovery onto it
        a.spares_take_over()
    elif isinstance(op, ops.RemoveMember) and m is not None:
        a.members.remove(m)
    elif isinstance(op, (ops.AddMember, ops.ReAddMember)):
        size = max((x.size for x in a.members), default=0) or device_bytes(machine, dev)
        if m is not None:
            a.members.remove(m)
        slot = a.vacant_slot()
        # md recovers onto a spare at once when a slot is vacant (md_check_recovery ->
        # remove_and_add_spares), whichever option added it
        if slot is not None and a.level in levels.REDUNDANT and not a.frozen:
            a.members.append(PlannedMember(dev, slot, "rebuilding", size))
            how = "re-add" if isinstance(op, ops.ReAddMember) and a.bitmap else "recover"
            a.syncs.append((how, (dev,)))
        else:
            a.members.append(PlannedMember(dev, None, "spare", size))


def set_sync_action(a: PlannedArray, action: str) -> None:
    """``action`` written to md/sync_action (see the module doc for md's rules)."""
    if action in ("check", "repair"):
        a.syncs.append((action, ()))
        return
    running = a.running is not None and a.fate == "runs"
    if action == "frozen":
        a.frozen = True
        if running:
            a.fate = "stopped"
        # what the plan's own steps started stops too
        a.syncs = []
        return
    # idle: whatever runs is interrupted; md starts again what is needed
    was_frozen = a.frozen
    a.frozen = False
    if running and a.running is not None and a.running[0] in ("check", "repair"):
        a.fate = "ended"
    elif running:
        a.fate = "restarts"
    elif a.fate == "stopped":
        a.fate = "restarts"  # frozen earlier in this plan, thawed now
    if was_frozen:
        a.spares_take_over()


def replace_member(a: PlannedArray, old: str, new: str) -> None:
    n = a.member(new)
    o = a.member(old)
    a.changed = True
    if n is None or o is None:
        return
    n.role, n.slot, n.replaces = "replacement", o.slot, old
    if not a.frozen:
        a.syncs.append(("replace", (new,)))


def grow_array(a: PlannedArray, new: int) -> None:
    old = a.raid_disks
    a.changed = True
    spares = [m for m in a.members if m.role == "spare"]
    if new > old:
        for i, m in enumerate(spares[: new - old]):
            m.slot, m.role = old + i, "rebuilding"
    else:
        for m in a.members:
            if m.slot is not None and m.slot >= new:
                m.slot, m.role = None, "spare"
    a.raid_disks = new
    if a.level == "raid1":
        if new > old:
            targets = tuple(m.device for m in spares[: new - old])
            a.syncs.append(("recover", targets))
    else:
        for m in a.members:
            if m.role == "rebuilding":
                m.role = "in_sync"  # a reshape takes the spares in as members
        a.syncs.append(("reshape", ()))
