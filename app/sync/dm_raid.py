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
from dataclasses import replace

from app.model import levels
from app.model.devices import LogicalVolume, Machine, SyncStatus
from app.model.live import DiskIO, MdLive
from app.model.lvm_raid import DmRaidStatus
from app.model.sync_model import SyncForecast, forecast_sync

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


def lv_name(lv: LogicalVolume) -> str:
    """The name a raid LV's sync goes by in the tracker, its records and alerts: "VG/LV" (what
    lvm's own commands take)."""
    return f"{lv.vg}/{lv.name}"


def lv_live(
    lv: LogicalVolume, speed_kib_s: int | None = None, system_min_kib_s: int | None = None
) -> MdLive | None:
    """A raid LV as md's live state for the 1 Hz sample (None when its target was not read):
    its sync (:func:`raid_sync`), one member per image named by the image's sub-LV, ``faulty``
    where dm-raid says ``D``, ``in_sync`` for ``A``; the mismatches dm-raid counted.

    degraded counts as md's does (the slots not in sync: ``mddev->degraded``): each image
    failed (``D``) or without a device (``-``), and each one being rebuilt (``a``), but not
    the ``a`` dm-raid prints for every image while it resyncs or reshapes, or before md has
    begun a sync it needs (``dm-raid.c`` ``__raid_dev_status()``: "a" for all under
    RT_FLAG_RS_RESYNCING; only the rdevs not In_sync otherwise). VM: a repair's recovery read
    ``Aa`` throughout, also ``frozen`` during each table reload of ``lvconvert --repair``."""
    raid = lv.raid
    dm = raid.dm if raid is not None else None
    if raid is None or dm is None:
        return None
    members: list[tuple[str, tuple[str, ...]]] = []
    for i, image in enumerate(raid.images):
        c = dm.health[i] if i < len(dm.health) else image.health
        flags = ("faulty",) if c == "D" else ("in_sync",) if c == "A" else ()
        members.append((image.image, flags))
    sync = raid_sync(lv, speed_kib_s, system_min_kib_s)
    if sync is None:
        # idle or frozen: where the ratio stands (dm-raid.c rs_get_progress(): recovery_cp
        # when idle, the total once in sync; a table reload mid-resync shows idle/frozen short
        # of it with every image "A", VM: lvchange --maxrecoveryrate during a resync)
        word = dm.sync_action if dm.sync_action in ("idle", "frozen") else "idle"
        sync = SyncStatus(action=word, done_sectors=dm.done_sectors, total_sectors=dm.total_sectors)
    elif sync.action == "recover":
        # the images being rebuilt ("a"): md's recover with no target is no sync (md_sync)
        rebuilt = tuple(image for image, flags in members if not flags)
        sync = replace(sync, targets=rebuilt)
    return MdLive(
        name=lv_name(lv),
        array_state=None,
        degraded=degraded_images(dm),
        sync=sync,
        member_states=tuple(members),
        level=dm.raid_type.split("_", 1)[0],
        mismatch_cnt=dm.mismatch_cnt,
        raid_disks=dm.devices,
    )


def degraded_images(dm: DmRaidStatus) -> int:
    """The images md counts as degraded, from one status line (:func:`lv_live`)."""
    whole_set = dm.sync_action in ("resync", "reshape") or (
        bool(dm.health) and set(dm.health) == {"a"}
    )
    return sum(1 for c in dm.health if c in "D-" or (c == "a" and not whole_set))


# How long a raid LV's sync may look stopped (frozen, or idle short of its end) and still be
# the same sync: dm-raid freezes md for each table reload (raid_presuspend/raid_preresume) and
# md then goes on — a recovery at the image not yet In_sync, a resync at recovery_cp. VM: each
# reload of lvconvert --repair or lvchange --maxrecoveryrate showed "frozen" for 0.3-1.3 s.
RELOAD_GRACE_S = 30.0


def reloading(run_action: str, live: MdLive) -> bool:
    """A raid LV's resync, recovery or reshape seen frozen or idle before its end: a table
    reload that md resumes from (not a check or repair: md starts those over only when asked;
    lvm2#184, a scrub stopped by an lvchange of its rate)."""
    s = live.sync
    return (
        "/" in live.name
        and run_action in ("resync", "recover", "reshape")
        and s is not None
        and s.action in ("frozen", "idle")
        and not (s.total_sectors and (s.done_sectors or 0) >= s.total_sectors)
    )


def resumed(name: str, run_action: str, action: str) -> bool:
    """A raid LV's resync seen as "repair" after a reload: the same resync going on.
    ``dm-raid.c`` ``raid_preresume()`` resumes a set short of recovery_cp as a *requested*
    sync from there (MD_RECOVERY_REQUESTED, resync_min = recovery_cp), which md names "repair"
    (VM: an initial resync, after lvchange --maxrecoveryrate, read "repair" with both images
    "A" from 4224 of 65536 sectors to its end). lvm refuses a repair while the LV resyncs."""
    return "/" in name and run_action == "resync" and action == "repair"


def raid_lv(machine: Machine | None, name: str) -> LogicalVolume | None:
    """The raid LV a sync's name ("VG/LV") stands for, as probed; None for an md array's name
    (md names have no "/") or an LV the probe does not know."""
    if machine is None or "/" not in name:
        return None
    vg, _, lv_part = name.partition("/")
    lv = machine.lv(vg, lv_part)
    return lv if lv is not None and lv.raid is not None else None


def image_pvs(lv: LogicalVolume) -> tuple[str, ...]:
    """The PVs of the LV's images that are there (a missing PV is "[unknown]" in lvs), each
    once, in image order: the devices whose kernel counters say what a sync wrote to each."""
    raid = lv.raid
    pvs = (pv for i in (raid.images if raid is not None else ()) for pv in i.pvs)
    return tuple(dict.fromkeys(pv for pv in pvs if not pv.startswith("[")))


def images_synced(action: str, live: MdLive) -> bool:
    """A raid LV's resync or recovery gone, dm-raid idle with its ratio at the end and every
    image ``A`` (dm-raid.rst: alive and in sync): it finished. Idle short of the end is a sync
    stopped (a table reload shows every image "A" then too). A check or repair leaves the
    images as they were, so this says nothing of one."""
    s = live.sync
    return (
        action in ("resync", "recover")
        and "/" in live.name
        and s is not None
        and s.action == "idle"
        and bool(s.total_sectors)
        and (s.done_sectors or 0) >= (s.total_sectors or 0)
        and bool(live.member_states)
        and all("in_sync" in flags for _dev, flags in live.member_states)
    )


def lv_forecast(
    machine: Machine,
    lv: LogicalVolume,
    action: str,
    sync: SyncStatus | None,
    *,
    from_start: bool = True,
) -> SyncForecast | None:
    """The sync model's forecast for a sync of a raid LV as it starts, as for an md array's
    (:func:`app.model.sync_model.forecast_sync`): md's level, one member per image (its first
    PV, the image's size: dm-raid's total), the limits the sync carries (the LV's
    ``--min/--maxrecoveryrate``, else md's min). None without images or their size."""
    raid = lv.raid
    if raid is None or not raid.images:
        return None
    total = raid.dm.total_sectors if raid.dm is not None else None
    if not total:
        return None
    members = [
        (next((p for p in i.pvs if not p.startswith("[")), i.image), total * SECTOR)
        for i in raid.images
        if not i.failed
    ]
    if not members:
        return None
    lo = sync.min_speed_kib_s if sync is not None else raid.min_rate_kib_s
    hi = sync.max_speed_kib_s if sync is not None else raid.max_rate_kib_s
    return forecast_sync(
        array=lv_name(lv),
        level=lv.segtype.split("_", 1)[0],
        raid_disks=len(raid.images),
        layout=None,
        action=action,
        members=members,
        # md throttles only above its min (md.c md_do_sync): a max below the min holds at the min
        limit_kib_s=(lo, max(hi, lo or 0) if hi is not None else None),
        limit_local=raid.max_rate_kib_s is not None,
        done_sectors=(sync.done_sectors or 0) if sync is not None and not from_start else 0,
    )
