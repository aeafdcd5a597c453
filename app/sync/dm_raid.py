"""An LVM RAID LV's sync as md's one sync model sees it (:class:`SyncStatus`), its speed made
from two looks at the dm-raid target's ``sync_ratio``.

dm-raid runs md's own ``md_do_sync()`` (``drivers/md/dm-raid.c`` builds an ``mddev`` and hands
it to md's personalities) but exports no ``sync_speed``: the progress rate is the difference of
two ``dmsetup status`` ratios over the time between them, in the same unit md's ``sync_speed``
counts (sectors of one device for RAID-1/4/5/6; ``rs_get_progress()`` /
``resync_max_sectors``). ``--maxrecoveryrate`` / ``--minrecoveryrate`` set the
``mddev->sync_speed_max/min`` md's throttle compares that rate with (``dm-raid.c``
``parse_raid_params()`` "max_recovery_rate"), so :func:`app.model.sync_model.at_ceiling`
holds for it as for md.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.model import levels
from app.model.devices import LogicalVolume, SyncStatus
from app.model.live import DiskIO
from app.model.lvm_raid import DmRaidStatus

SECTOR = 512
_RUNNING = ("resync", "recover", "check", "repair", "reshape")


def progress_kib_s(
    before: DmRaidStatus | None, after: DmRaidStatus | None, seconds: float
) -> int | None:
    """KiB/s of progress between two looks at one target; None when they cannot be compared
    (another sync, another total, no time between, progress going back)."""
    if before is None or after is None or seconds <= 0:
        return None
    if before.sync_action != after.sync_action or before.total_sectors != after.total_sectors:
        return None
    moved = after.done_sectors - before.done_sectors
    if moved <= 0:
        # the ratio is md's curr_resync_completed, which md_do_sync (md.c) moves only once the
        # sync is 1/16 of the device past it: unmoved over a second says nothing of the speed
        return None
    return round(moved * SECTOR / 1024 / seconds)


def image_io_kib_s(
    lv: LogicalVolume,
    before: Mapping[str, DiskIO],
    after: Mapping[str, DiskIO],
    seconds: float,
) -> int | None:
    """KiB/s of progress from the images' own I/O (/proc/diskstats of their dm devices) between
    two looks: a RAID-1 resync reads one image and writes the others, a recovery reads the
    survivors and writes the one rebuilt, a check reads every image, a RAID-4/5/6 resync reads
    each member or writes its parity, once per sector passed (raid1.c/raid5.c sync_request):
    the busiest image's bytes read + written per second. The ratio steps by 1/16 of the device
    (:func:`progress_kib_s`); the counters move with every request. I/O the LV serves meanwhile
    counts too: then more than the sync's own rate. None without both looks of an image."""
    raid, dm = lv.raid, lv.raid.dm if lv.raid is not None else None
    if raid is None or dm is None or seconds <= 0:
        return None
    level = dm.raid_type.split("_", 1)[0]  # raid5_ls -> raid5
    if level not in levels.REDUNDANT or level == "raid10":
        # the ratio counts sectors of one device, and the sync reads or writes each image once
        # per sector it passes, in the redundant levels but RAID-10 (its ratio: the array's)
        return None
    moved: list[int] = []
    for image in raid.images:
        a = before.get(image.kernel_name or "")
        b = after.get(image.kernel_name or "")
        if a is None or b is None:
            continue
        n = (b.read_bytes - a.read_bytes) + (b.write_bytes - a.write_bytes)
        if n >= 0:
            moved.append(n)
    if not moved or max(moved) == 0:
        # md's throttle sleeps while its rate over the last ~30 s of marks is above the max
        # (md.c md_do_sync: msleep(500) and look again): a held sync's I/O comes in bursts
        # seconds apart (VM: dm-3 written 0 B in 2 s, then 2 MiB), so a still second is no 0
        return None
    return round(max(moved) / 1024 / seconds)


def raid_sync(
    lv: LogicalVolume, speed_kib_s: int | None = None, system_min_kib_s: int | None = None
) -> SyncStatus | None:
    """The LV's running sync as a :class:`SyncStatus` (None when idle, or not a raid LV whose
    target was read): progress from the target's ratio, the limits from lvm's fields; without
    ``--minrecoveryrate`` md's ``speed_min()`` is the system's ``dev.raid.speed_limit_min``."""
    raid = lv.raid
    dm = raid.dm if raid is not None else None
    if raid is None or dm is None or dm.sync_action not in _RUNNING:
        return None
    return SyncStatus(
        action=dm.sync_action or "resync",
        done_sectors=dm.done_sectors,
        total_sectors=dm.total_sectors,
        speed_kib_s=speed_kib_s,
        min_speed_kib_s=raid.min_rate_kib_s or system_min_kib_s,
        max_speed_kib_s=raid.max_rate_kib_s,
        mismatch_cnt=dm.mismatch_cnt if dm.sync_action in ("check", "repair") else None,
    )
