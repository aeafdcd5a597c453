"""What a sync's record counts: its members with their whole disks, their sizes, and the kernel's
cumulative bytes written per device (/proc/diskstats) read from a sample."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from app.model import Machine
from app.model.live import DiskIO, LiveSample, MdLive
from app.sync.dm_raid import image_pvs, raid_lv
from app.wear.records import SyncMember


def kernel_writes(sample: LiveSample | None) -> dict[str, int]:
    """Cumulative bytes written per device, from the sample's /proc/diskstats counters."""
    return {d.name: d.write_bytes for d in sample.disk_io} if sample is not None else {}


class LazyCounts:
    """A map of every disk's counters, made the first time it is asked for (if ever)."""

    def __init__(self, make: Callable[[], dict[str, int]]) -> None:
        self._make = make
        self._made: dict[str, int] | None = None

    def __call__(self) -> dict[str, int]:
        if self._made is None:
            self._made = self._make()
        return self._made


class WritesOf(Mapping[str, int]):
    """Bytes written by name, read through a map of counters (no copy of it)."""

    def __init__(self, counters: Mapping[str, DiskIO]) -> None:
        self._c = counters

    def __getitem__(self, name: str) -> int:
        return self._c[name].write_bytes

    def __contains__(self, name: object) -> bool:
        return name in self._c

    def __iter__(self) -> Iterator[str]:
        return iter(self._c)

    def __len__(self) -> int:
        return len(self._c)


def members_of(
    machine: Machine | None, array: str, live: MdLive | None = None
) -> tuple[SyncMember, ...]:
    """The array's members with their whole disks: as probed, and those the live sample shows
    that the probe did not (a member re-added since: the sync rebuilds exactly that one)."""
    a = machine.array(array) if machine is not None else None
    lv = raid_lv(machine, array) if a is None else None
    if machine is None or (a is None and lv is None):
        return ()  # an array the probe has not seen yet: its members come with the next probe
    # a raid LV ("VG/LV"): its images' PVs, whose counters say what the sync wrote to each
    devices = list(image_pvs(lv)) if lv is not None else [m.device for m in a.members] if a else []
    if live is not None and live.name == array and lv is None:
        devices += [dev for dev, _flags in live.member_states if dev not in devices]
    out: list[SyncMember] = []
    for dev in devices:
        for d in machine.disks_under(dev) or (dev,):
            disk = machine.disk(d)
            out.append(SyncMember(dev, d, disk.serial if disk else None))
    return tuple(out)


def counted(members: Sequence[SyncMember]) -> set[str]:
    """The devices whose kernel write counters a sync's record keeps: each member (its own
    line of /proc/diskstats) and each member's whole disk (the span of its SMART figure)."""
    return {m.device for m in members} | {m.disk for m in members}


def capacities_of(machine: Machine | None, members: Sequence[SyncMember]) -> dict[str, int]:
    """Sizes in bytes of each member device (the "× its size" of what the sync wrote to it: a
    partition's own size, never its disk's) and of each member's whole disk."""
    out: dict[str, int] = {}
    if machine is None:
        return out
    for name in counted(members):
        size = getattr(machine.device(name), "size_bytes", None)
        if isinstance(size, int) and size > 0:
            out[name] = size
    return out
