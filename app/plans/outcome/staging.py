"""A staged copy of the machine: the probed ``Machine`` with a plan's operations applied one by one.

What a plan means is the difference between the machine as it is and as the plan leaves it
(libstorage-ng's probed and staging devicegraphs): ``Staging.apply`` plays each operation over
the arrays (``app.plans.outcome.arrays``: members' roles and slots, the sync running now and its
fate, the syncs that start, frozen or not), md's speed limits and stripe caches, and the devices
the plan overwrites, erases or stops — naming the data each destroys (``app.plans.outcome.lost``).
``app.plans.outcome.consequences`` reads the result through the one sync model. Pure: the superblocks
and limits are read by the caller."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from app.model import Machine
from app.plans import ops
from app.plans.guards.plan_devices import resolve_device
from app.plans.outcome.arrays import (
    PlannedArray,
    array_of,
    create_array,
    grow_array,
    manage_member,
    replace_member,
    set_sync_action,
    strip_dev,
)
from app.plans.outcome.consequence_types import Limits
from app.plans.outcome.lost import Lost, deleted, lost_on
from app.plans.superblocks import Superblocks


@dataclass
class Seen:
    """An array as the plan found it, and the weakest it leaves it while running."""

    survives: int
    working: dict[int, str]
    lost_if: tuple[str, ...]
    lowest: tuple[int, tuple[str, ...]]
    degraded: bool
    new: bool = False


@dataclass
class Staging:
    machine: Machine
    limits: Limits = field(default_factory=Limits)
    superblocks: Superblocks | None = None
    arrays: dict[str, PlannedArray] = field(default_factory=dict)
    seen: dict[str, Seen] = field(default_factory=dict)
    stripe_cache: dict[str, int] = field(default_factory=dict)  # array -> entries set
    destroyed: set[str] = field(default_factory=set)  # devices overwritten or erased
    erased: set[str] = field(default_factory=set)
    stopped: set[str] = field(default_factory=set)
    created: set[str] = field(default_factory=set)  # paths of arrays and LVs the plan makes
    lost: list[Lost] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        ops_: list[ops.Op],
        machine: Machine,
        limits: Limits | None = None,
        superblocks: Superblocks | None = None,
    ) -> Staging:
        st = cls(machine, limits or Limits(), superblocks)
        for op in ops_:
            st.apply(op)
        return st

    # ---- arrays ------------------------------------------------------------------------------

    def _seen(self, a: PlannedArray) -> None:
        if a.name in self.seen:
            return
        if a.new:
            self.seen[a.name] = Seen(-2, {}, (), (a.survives(), a.lost_if()), False, new=True)
        else:
            now, lost = a.survives(), a.lost_if()
            self.seen[a.name] = Seen(now, a.working(), lost, (now, lost), a.degraded)

    def _low(self, a: PlannedArray) -> None:
        now, lost = a.survives(), a.lost_if()
        s = self.seen[a.name]
        known = s.lowest
        if now < known[0] or (now == known[0] and len(lost) > len(known[1])):
            s.lowest = (now, lost)

    def array(self, path: str) -> PlannedArray | None:
        a = array_of(self.machine, self.arrays, path)
        if a is not None:
            self._seen(a)
            a.touched = True
        return a

    # ---- devices -----------------------------------------------------------------------------

    def _destroy(self, path: str, *, erase: bool = False, joining: str | None = None) -> None:
        if path in self.created:
            return
        dev = resolve_device(self.machine, path)
        if dev in self.destroyed or self.machine.array(dev) is not None:
            self.destroyed.add(dev)
            return
        self.lost += lost_on(
            self.machine, self.superblocks, dev, self.destroyed, self.stopped, joining
        )
        self.destroyed.add(dev)
        if erase:
            self.erased.add(dev)
            for name in sorted(self.stopped):
                gone = deleted(self.machine, name, self.erased)
                if gone is not None and all(x.line != gone.line for x in self.lost):
                    self.lost.append(gone)

    # ---- one operation -----------------------------------------------------------------------

    def apply(self, op: ops.Op) -> None:
        self.limits = _limits_after(op, self.limits)
        a: PlannedArray | None = None
        if isinstance(op, ops.SetSystemSpeed):
            for arr in self.machine.arrays:  # every running sync without its own limit
                if arr.sync is not None and arr.sync.active and not arr.is_container:
                    t = self.array(arr.path)
                    if t is not None:
                        self._low(t)
        if isinstance(op, ops.CreateArray):
            for d in op.overwrites():
                self._destroy(d)
            a = create_array(self.machine, op)
            self.arrays[a.name] = a
            self.created.add(op.path)
            self._seen(a)
        elif isinstance(op, (ops.AddMember, ops.FailMember, ops.RemoveMember, ops.ReAddMember)):
            a = self.array(op.array_path)
            if (
                isinstance(op, ops.AddMember)
                and a is not None
                and a.member(strip_dev(op.device)) is None
            ):
                # a former member put back into its own array loses nothing (lost_on)
                self._destroy(op.device, joining=a.name)
            if a is not None:
                manage_member(self.machine, a, op, strip_dev(op.device))
        elif isinstance(op, ops.ReplaceMember):
            a = self.array(op.array_path)
            if a is not None:
                replace_member(a, strip_dev(op.old), strip_dev(op.new))
        elif isinstance(op, (ops.GrowDevices, ops.SetBitmap)):
            a = self.array(op.array_path)
            if a is not None and isinstance(op, ops.GrowDevices):
                grow_array(a, op.raid_devices)
        elif isinstance(op, ops.SetSyncAction):
            a = self.array(f"/dev/{op.md}")
            if a is not None:
                set_sync_action(a, op.action)
        elif isinstance(op, ops.SetStripeCache):
            a = self.array(f"/dev/{op.md}")
            self.stripe_cache[op.md] = op.entries
        elif isinstance(op, (ops.SetArraySpeed, ops.SetSyncMin)):
            a = self.array(f"/dev/{op.md}")
        elif isinstance(op, (ops.MakeExt4, ops.MakeXfs, ops.PvCreate)):
            a = self.array(op.device)
            self._destroy(op.device)
        elif isinstance(op, ops.StopArray):
            if op.array_path not in self.created:
                self.stopped.add(resolve_device(self.machine, op.array_path))
        elif isinstance(op, (ops.ZeroSuperblock, ops.Wipe)):
            # (the benchmark's own array's members were destroyed at its create already)
            for d in op.erases():
                self._destroy(d, erase=True)
        elif isinstance(op, ops.LvCreate):
            self.created.add(op.creates())
        elif op.destroys() is not None:  # parted, blkdiscard, a fio write
            self._destroy(op.destroys() or "")
        if a is not None:
            self._low(a)


def _limits_after(op: ops.Op, limits: Limits) -> Limits:
    """A step that sets md's speed limits: the forecasts after it use the new ones."""
    if isinstance(op, ops.SetSystemSpeed):
        lo, hi = limits.system
        new_sys: tuple[int | None, int | None] = (
            (op.kib_s, hi) if op.bound == "min" else (lo, op.kib_s)
        )
        return replace(limits, system=new_sys)
    if isinstance(op, ops.SetArraySpeed):
        lo, hi = limits.local.get(op.md, (None, None))
        new: tuple[int | None, int | None] = (op.kib_s, hi) if op.bound == "min" else (lo, op.kib_s)
        return replace(limits, local={**limits.local, op.md: new})
    return limits
