"""``report``'s LVM RAID LVs: each raid LV's state and, for one that syncs, the speed and ETA
made from a second look at its dm-raid target (dm-raid has no ``sync_speed``; app.sync.dm_raid),
through the backend, at least :data:`MIN_GAP_S` after the probe's look."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from app.backend import Backend
from app.format import duration, percent, speed
from app.model import sync_model
from app.model.devices import LogicalVolume, Machine, SyncStatus
from app.model.lvm_raid import DEVICE_HEALTH, DmRaidStatus
from app.parsers.errors import ParseError
from app.parsers.lvm_raid import DMSETUP_RAID_ARGV, parse_raid_status
from app.parsers.safe import ascii_int
from app.sync.dm_raid import progress_kib_s, raid_sync

MIN_GAP_S = 1.0
SYSTEM_MIN = "/proc/sys/dev/raid/speed_limit_min"


def raid_syncs(
    backend: Backend, machine: Machine, sleep: Callable[[float], None] = time.sleep
) -> dict[str, SyncStatus]:
    """Each syncing raid LV's sync (by dm name), its speed the progress between the probe's look
    and one now (null when the second look fails), its min the one in force."""
    syncing = [lv for lv in machine.lvs if raid_sync(lv) is not None]
    if not syncing:
        return {}
    gap = backend.now() - machine.taken_at
    if gap < MIN_GAP_S:
        sleep(MIN_GAP_S - gap)
    r = backend.run(list(DMSETUP_RAID_ARGV), timeout=20.0)
    seconds = backend.now() - machine.taken_at
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
        rate = progress_kib_s(before, now.get(lv.dm_name), seconds)
        s = raid_sync(lv, rate, system_min)
        if s is not None:
            out[lv.dm_name] = s
    return out


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
