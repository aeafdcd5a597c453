"""Cheap, frequent samples: what the 1 Hz poll reads (md sysfs and per-disk I/O counters)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from app.model.devices import SyncStatus


@dataclass(frozen=True, slots=True)
class MdLive:
    """One array's fast-changing state, read from sysfs in one pass."""

    name: str
    array_state: str | None
    degraded: int
    sync: SyncStatus | None  # None when idle
    member_states: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (device, state flags)
    level: str | None = None
    mismatch_cnt: int | None = None  # md/mismatch_cnt: meaningful after a check/repair
    last_sync_action: str | None = None  # md/last_sync_action
    raid_disks: int | None = None
    stripe_cache_size: int | None = None
    # md/sync_min while a check/repair runs: where md began it (mddev->resync_min, md.c
    # md_do_sync); None when not read (other syncs, idle)
    sync_min: int | None = None


@dataclass(frozen=True, slots=True)
class DiskIO:
    """Cumulative I/O counters of one block device: a whole disk, or a partition (its own
    line of /proc/diskstats, as psutil.disk_io_counters(perdisk=True) gives every line)."""

    name: str
    read_bytes: int
    write_bytes: int
    read_count: int = 0
    write_count: int = 0
    busy_time_ms: int | None = None  # /proc/diskstats field 13: time with I/O in flight
    read_time_ms: int | None = None  # field 7: time all reads took (summed over requests)
    write_time_ms: int | None = None  # field 11


@dataclass(frozen=True, slots=True)
class LiveSample:
    taken_at: float
    arrays: tuple[MdLive, ...]
    disk_io: tuple[DiskIO, ...] = ()
    # LVM RAID LVs (dm-raid: md's personalities under device-mapper) as md's live state, each
    # named "VG/LV" (app.sync.dm_raid.lv_live): apart from ``arrays``, which are md's own (the
    # merge into the probed arrays, the boosts, the routine's exposure read md arrays only)
    lvs: tuple[MdLive, ...] = ()

    def synced(self) -> tuple[MdLive, ...]:
        """Everything whose sync the one tracker follows: md arrays, then raid LVs."""
        return self.arrays + self.lvs if self.lvs else self.arrays

    def live(self, name: str) -> MdLive | None:
        """The md array or raid LV (``VG/LV``) of that name in this sample."""
        return next((x for x in self.synced() if x.name == name), None)


class LiveInterner:
    """Hands out the last sample's object again for an array or disk whose state equals it, so
    that every consumer of a stream of samples (the merge into the machine, the alert events,
    the throughput meter) skips what did not move by identity, and the equality is paid once,
    here, per sample. A sampler that builds fresh objects each look (the Linux one) runs its
    samples through one; the simulated machine reuses its objects by itself."""

    def __init__(self) -> None:
        self._md: dict[str, MdLive] = {}
        self._io: dict[str, DiskIO] = {}
        self._lv: dict[str, MdLive] = {}

    def __call__(self, sample: LiveSample) -> LiveSample:
        arrays = _same(self._md, sample.arrays)
        disk_io = _same(self._io, sample.disk_io)
        lvs = _same(self._lv, sample.lvs)
        self._md = {a.name: a for a in arrays}
        self._io = {d.name: d for d in disk_io}
        self._lv = {a.name: a for a in lvs}
        if arrays is sample.arrays and disk_io is sample.disk_io and lvs is sample.lvs:
            return sample
        return LiveSample(sample.taken_at, arrays, disk_io, lvs)


_T = TypeVar("_T", MdLive, DiskIO)


def _same(last: dict[str, _T], items: tuple[_T, ...]) -> tuple[_T, ...]:
    out = tuple(
        had if (had := last.get(x.name)) is not None and (had is x or had == x) else x
        for x in items
    )
    return items if all(a is b for a, b in zip(out, items, strict=True)) else out
