"""Cheap, frequent samples: what the 1 Hz poll reads (md sysfs and per-disk I/O counters)."""

from __future__ import annotations

from dataclasses import dataclass

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
