"""What an LVM RAID plan's steps mean, through the one sync model (app.model.sync_model):
the sync each starts (``lvchange --syncaction``; the recovery of ``lvconvert --repair``'s new
images), how fast md lets it run (the LV's ``--min/--maxrecoveryrate`` are md's
``sync_speed_min/max`` of its mddev, dm-raid.c ``parse_raid_params()``; unset, the system's
``dev.raid.speed_limit_*``; md throttles only above the min, ``md_do_sync()``), the bytes each
image's PV gets, and the LV's redundancy now, during and after."""

from __future__ import annotations

from collections.abc import Iterable

from app.format import percent
from app.model import levels, sync_model
from app.model.devices import LogicalVolume, Machine
from app.model.lvm_raid import RaidImage
from app.model.sync_model import MemberWrite, SyncForecast
from app.plans import ops
from app.plans.outcome.consequence_types import Limits, Redundancy, SyncStop

SECTOR = 512


def lv_level(segtype: str) -> str:
    """ "raid5_ls" -> "raid5", "raid6_zr" -> "raid6", "raid1" -> "raid1" (md's level)."""
    return segtype.split("_", 1)[0]


def image_bytes(lv: LogicalVolume) -> int | None:
    """What one image holds (a sync's progress unit): dm-raid's own total where read, else the
    LV's size over its data images."""
    raid = lv.raid
    if raid is None:
        return None
    if raid.dm is not None and raid.dm.total_sectors:
        return raid.dm.total_sectors * SECTOR
    n = len(raid.images)
    data = levels.data_disks(lv_level(lv.segtype), n) if n else None
    if not data:
        return None
    return lv.size_bytes // data


def _rate(
    lv: LogicalVolume, machine: Machine, limits: Limits
) -> tuple[int | None, str, int | None]:
    """(progress KiB/s expected, why, the limit holding it) for a sync of ``lv``."""
    raid = lv.raid
    sys_min, sys_max = limits.system
    lo = (raid.min_rate_kib_s if raid else None) or sys_min
    hi = (raid.max_rate_kib_s if raid else None) or sys_max
    own = raid is not None and raid.max_rate_kib_s is not None
    ceiling = max(hi, lo or 0) if hi else None
    pvs = [pv for i in (raid.images if raid else ()) for pv in i.pvs if not pv.startswith("[")]
    disks = sync_model.members_rated_kib_s(machine, pvs) if pvs else None
    if ceiling is not None and (disks is None or disks > ceiling):
        why = "the LV's --maxrecoveryrate" if own and ceiling == hi else "md's limit"
        if own and hi is not None and lo is not None and lo > hi:
            why = "md's min, above the LV's --maxrecoveryrate"
        return round(sync_model.held_rate(ceiling)), why, ceiling
    if disks is not None:
        return disks, "the members' speed", None
    return None, "", None


def _survives(lv: LogicalVolume, working: int) -> int:
    n = len(lv.raid.images) if lv.raid is not None else 0
    return levels.failures_left(lv_level(lv.segtype), n, None, set(range(working))) if n else 0


def forecast(op: ops.Op, machine: Machine, limits: Limits) -> SyncForecast | None:
    """The sync an LVM RAID step starts, or None (the LV is not a raid LV here)."""
    if not isinstance(op, (ops.LvSyncAction, ops.LvRepair, ops.LvReplace)):
        return None
    lv = machine.lv(op.vg, op.lv)
    if lv is None or lv.raid is None:
        return None
    size = image_bytes(lv)
    rate, why, limit = _rate(lv, machine, limits)
    seconds = size / 1024 / rate if size is not None and rate else None
    name = f"{op.vg}/{op.lv}"
    if isinstance(op, ops.LvSyncAction):
        high = (size or 0) if op.action == "repair" else 0
        members = tuple(MemberWrite(pv, 0, high, size or 0) for i in lv.raid.images for pv in i.pvs)
        text = (
            "a check reads every image and counts the regions that differ "
            "(raid_mismatch_count); it writes nothing"
            if op.action == "check"
            else "a repair reads every image and rewrites the regions that differ"
        )
        action = op.action
    elif isinstance(op, ops.LvReplace):
        old = op.old_pv.removeprefix("/dev/")
        where = ", ".join(p.removeprefix("/dev/") for p in op.new_pvs) or f"free space in {op.vg}"
        replaced = [i for i in lv.raid.images if old in i.pvs]
        members = tuple(
            MemberWrite(pv, 0, 0, size or 0)
            for i in lv.raid.images
            if i not in replaced
            for pv in i.pvs
        ) + tuple(
            MemberWrite(f"image {i.index}'s new PV ({where})", size or 0, size or 0, size or 0)
            for i in replaced
        )
        text = (
            f"the image on {old} leaves the LV; a new one on {where} is recovered whole from "
            "the others, which are only read"
        )
        action = "recover"
    else:
        where = ", ".join(p.removeprefix("/dev/") for p in op.pvs) or f"free space in {op.vg}"
        members = tuple(
            MemberWrite(f"image {i.index}'s new PV ({where})", size or 0, size or 0, size or 0)
            for i in lv.raid.failed_images
        )
        text = "each failed image is made anew on other PVs and recovered whole"
        action = "recover"
    return SyncForecast(
        array=name,
        action=action,
        speed_kib_s=rate,
        speed_why=why,
        duration_s_low=seconds,
        duration_s_high=seconds,
        members=members,
        why=text,
        progress_sectors=size // SECTOR if size is not None else None,
        limit_kib_s=limit,
    )


def redundancy(op: ops.Op, machine: Machine) -> Redundancy | None:
    """The LV's redundancy now, during and after the step (a replace: one image short while
    its new one recovers, lvm2 lv_raid_replace() drops the old image first)."""
    if not isinstance(op, (ops.LvSyncAction, ops.LvRepair, ops.LvReplace)):
        return None
    lv = machine.lv(op.vg, op.lv)
    if lv is None or lv.raid is None or not lv.raid.images:
        return None
    images = lv.raid.images
    failed = lv.raid.failed_images
    now = _survives(lv, len(images) - len(failed))
    after = _survives(lv, len(images)) if isinstance(op, (ops.LvRepair, ops.LvReplace)) else now
    during = now
    gone: tuple[RaidImage, ...] = failed
    if isinstance(op, ops.LvReplace):
        old = op.old_pv.removeprefix("/dev/")
        gone = (*failed, *(i for i in images if old in i.pvs and i not in failed))
        during = _survives(lv, len(images) - len(gone))
    alive = [pv for i in images if i not in gone for pv in i.pvs]
    return Redundancy(
        f"{op.vg}/{op.lv}", now, min(now, during), after, tuple(alive) if during == 0 else ()
    )


def stop(op: ops.Op, machine: Machine) -> SyncStop | None:
    """A check or repair of the LV that the step ends: lvchange reloads the LV's table to set
    its recovery rates, and md does not restart a requested sync (lvm2 issue 184)."""
    if not isinstance(op, ops.LvRecoveryRate):
        return None
    lv = machine.lv(op.vg, op.lv)
    raid = lv.raid if lv is not None else None
    dm = raid.dm if raid is not None else None
    action = dm.sync_action if dm is not None else raid.sync_action if raid is not None else None
    if raid is None or action not in ("check", "repair"):
        return None
    fraction = dm.fraction if dm is not None else None
    at = f" at {percent(fraction)}" if fraction is not None else ""
    return SyncStop(
        f"{op.vg}/{op.lv}",
        action,
        fraction,
        "ended",
        f"the {action} of {op.vg}/{op.lv} running now ends{at}: lvchange reloads the LV to set "
        f"its rates and the {action} does not start again (lvm2 issue 184); start it again "
        f"afterwards (raidman plan lv-sync {action} --lv {op.vg}/{op.lv})",
    )


def lv_consequences(
    steps: Iterable[ops.Op], machine: Machine, limits: Limits
) -> tuple[list[SyncForecast], list[Redundancy], list[SyncStop]]:
    syncs: list[SyncForecast] = []
    out: list[Redundancy] = []
    stops: list[SyncStop] = []
    for op in steps:
        s = stop(op, machine)
        if s is not None and all(x.array != s.array for x in stops):
            stops.append(s)
        f = forecast(op, machine, limits)
        if f is not None:
            syncs.append(f)
        r = redundancy(op, machine)
        if r is not None and all(x.array != r.array for x in out):
            out.append(r)
    return syncs, out, stops
