"""``report``'s LVM RAID LVs: each raid LV's state and, for one that syncs, the speed and ETA
made from a second look at its dm-raid target (dm-raid has no ``sync_speed``; app.sync.dm_raid),
through the backend, at least :data:`MIN_GAP_S` after the probe's look."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from app.backend import Backend, BackendError
from app.format import duration, percent, speed
from app.model import sync_model
from app.model.devices import LogicalVolume, Machine, SyncStatus
from app.model.live import DiskIO
from app.model.lvm_raid import DEVICE_HEALTH, DmRaidStatus
from app.parsers.errors import ParseError
from app.parsers.lvm_raid import DMSETUP_RAID_ARGV, parse_raid_status
from app.parsers.safe import ascii_int
from app.sync.dm_raid import image_io_kib_s, progress_kib_s, raid_sync

MIN_GAP_S = 1.0
SYSTEM_MIN = "/proc/sys/dev/raid/speed_limit_min"


def raid_syncs(
    backend: Backend, machine: Machine, sleep: Callable[[float], None] = time.sleep
) -> dict[str, SyncStatus]:
    """Each syncing raid LV's sync (by dm name), its speed the busiest image's I/O over
    :data:`MIN_GAP_S` (app.sync.dm_raid.image_io_kib_s), else the ratio moved between the
    probe's look and one now (null when neither can say), its min the one in force."""
    syncing = [lv for lv in machine.lvs if raid_sync(lv) is not None]
    if not syncing:
        return {}
    t0, io0 = _disk_io(backend)
    sleep(MIN_GAP_S)
    r = backend.run(list(DMSETUP_RAID_ARGV), timeout=20.0)
    seconds = backend.now() - machine.taken_at
    t1, io1 = _disk_io(backend)
    io_seconds = t1 - t0
    now: dict[str, DmRaidStatus] = {}
    if r.ok:
        try:
            now = {s.name: s for s in parse_raid_status(r.stdout)}
        except ParseError:
            now = {}
    system_min = ascii_int(backend.read_text(SYSTEM_MIN) or "")
    out: dict[str, SyncStatus] = {}
    for lv in syncing:
        before = lv.raid.dm if lv.raid is not None else None
        rate = image_io_kib_s(lv, io0, io1, io_seconds)
        if rate is None:
            rate = progress_kib_s(before, now.get(lv.dm_name), seconds)
        s = raid_sync(lv, rate, system_min)
        if s is not None:
            out[lv.dm_name] = s
    return out


def _disk_io(backend: Backend) -> tuple[float, dict[str, DiskIO]]:
    """When, and every block device's I/O counters then ({} when no sample can be taken)."""
    try:
        sample = backend.sample()
    except BackendError:
        return backend.now(), {}
    return sample.taken_at, {d.name: d for d in sample.disk_io}


def raid_lines(lv: LogicalVolume, syncs: Mapping[str, SyncStatus]) -> list[str]:
    """The text report's lines under a raid LV: health, each image, its sync."""
    raid = lv.raid
    if raid is None:
        return []
    lines: list[str] = []
    health = raid.health_words
    if health:
        lines.append(f"      health: {health}")
    for i in raid.images:
        state = DEVICE_HEALTH.get(i.health or "", "state not read")
        lines.append(f"      image {i.index}  {', '.join(i.pvs) or 'no PV'}  {state}")
    if raid.mismatches:
        lines.append(f"      mismatches: {raid.mismatches} sectors (last check or repair)")
    s = syncs.get(lv.dm_name) or raid_sync(lv)
    if s is not None:
        held = sync_model.at_ceiling(s.speed_kib_s, s.max_speed_kib_s, s.min_speed_kib_s)
        lines.append(
            f"      {s.action} {percent(s.fraction)}  speed {speed(s.speed_kib_s)}"
            f"  ETA {duration(s.eta_s)}"
            + (
                f"  held by md's limits (min {speed(s.min_speed_kib_s)},"
                f" max {speed(s.max_speed_kib_s)})"
                if held
                else ""
            )
        )
    if raid.max_rate_kib_s or raid.min_rate_kib_s:
        lines.append(
            f"      recovery rate per device: min {_rate(raid.min_rate_kib_s)}"
            f"  max {_rate(raid.max_rate_kib_s)}"
        )
    return lines


def _rate(kib_s: int | None) -> str:
    return speed(kib_s) if kib_s else "not set"
