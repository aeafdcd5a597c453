"""LVM RAID plans: a scrub of a raid LV (``lvchange --syncaction check|repair``) and the repair
of its failed images (``lvconvert --repair``), each with its consequences from the staged
machine and the one sync model (app.plans.outcome.lv_syncs).

A repair needs room for each failed image (its data, rounded up to extents, and its one-extent
metadata sub-LV, lvm2 ``lv_raid.c``) on PVs of the VG that hold no image that survives: lvm
puts no two images of one LV on one PV (that would be no redundancy). Refused with the numbers
otherwise."""

from __future__ import annotations

from collections.abc import Sequence

from app.format import human_bytes
from app.model import Machine
from app.model.devices import LogicalVolume, PhysicalVolume
from app.plans import ops
from app.plans.geometry import PlanError
from app.plans.guards.preflight import strip_dev
from app.plans.ops.lvm_raid import LV_SYNC_ACTIONS, MAX_RATE_KIB, split_lv
from app.plans.outcome.consequences import with_consequences
from app.plans.outcome.lv_syncs import image_bytes
from app.plans.plan import Plan, Step

_WHY = {
    "check": "read every image and count the regions that differ (raid_mismatch_count); "
    "nothing is rewritten",
    "repair": "read every image and rewrite the regions that differ",
}
REPAIR_NOTE = (
    "run a check first and look at raid_mismatch_count; a repair makes the images agree, and md "
    "cannot tell which copy was right (RAID-1: the first readable image wins; RAID-4/5/6: the "
    "parity is recomputed from the data)"
)


def raid_lv(machine: Machine, name: str) -> LogicalVolume:
    """The raid LV ``VG/LV`` (also ``/dev/VG/LV``) of this machine, or PlanError saying why."""
    vg, lv_name = split_lv(name.removeprefix("/dev/"), "--lv")
    lv = machine.lv(vg, lv_name)
    if lv is None:
        raise PlanError(f"no logical volume {vg}/{lv_name} on this machine")
    if lv.raid is None:
        raise PlanError(f"{vg}/{lv_name} is a {lv.segtype} LV, not a RAID LV (raid1, raid5, ...)")
    if lv.segtype.startswith("raid0"):
        raise PlanError(f"{vg}/{lv_name} is raid0: no redundancy, nothing to compare or repair")
    return lv


def build_lv_sync(machine: Machine, name: str, action: str) -> Plan:
    if action not in LV_SYNC_ACTIONS:
        raise PlanError(f"lv-sync {action!r}: choose check or repair")
    lv = raid_lv(machine, name)
    full = f"{lv.vg}/{lv.name}"
    raid = lv.raid
    assert raid is not None
    if not lv.active:
        raise PlanError(f"{full} is not active: activate it first (lvchange -ay {full})")
    if raid.syncing:
        running = raid.dm.sync_action if raid.dm is not None else raid.sync_action
        raise PlanError(f"{full} is running a {running}: md refuses a {action} until it ends")
    if raid.partial or raid.failed_images:
        failed = ", ".join(str(i.index) for i in raid.failed_images) or "?"
        raise PlanError(
            f"{full} has a failed image ({failed}): a {action} cannot compare what is lost; "
            f"repair it first (raidman plan lv-repair --lv {full})"
        )
    notes = (REPAIR_NOTE,) if action == "repair" else ()
    plan = Plan(
        title=f"{action} {full}",
        steps=(Step(ops.LvSyncAction(lv.vg, lv.name, action), f"{full}: {_WHY[action]}"),),
        target=full,
        kind="lv-sync",
        params={"lv": full, "action": action},
        notes=notes,
    )
    return with_consequences(plan, machine)


def _extents(n: int, extent: int) -> int:
    return -(-n // extent) * extent


def repair_room(
    machine: Machine, lv: LogicalVolume, pvs: Sequence[str] = ()
) -> tuple[int, list[PhysicalVolume], set[str]]:
    """(bytes the failed images need, the PVs that may take them, PVs holding a surviving
    image). ``pvs``: only these (kernel names) may take them."""
    raid = lv.raid
    assert raid is not None
    holding = {pv for i in raid.images if not i.failed for pv in i.pvs}
    need, usable = _room(machine, lv, len(raid.failed_images), holding, pvs)
    return need, usable, holding


def _room(
    machine: Machine, lv: LogicalVolume, images: int, holding: set[str], pvs: Sequence[str]
) -> tuple[int, list[PhysicalVolume]]:
    """(bytes ``images`` new images of ``lv`` need, each with its metadata extent; the PVs of
    its VG with free space that hold none of ``holding``, only ``pvs`` when given)."""
    vg = machine.vg(lv.vg)
    extent = vg.extent_size if vg is not None and vg.extent_size else 4 * 1024 * 1024
    need = images * (_extents(image_bytes(lv) or 0, extent) + extent)
    usable = [
        pv
        for pv in machine.pvs
        if pv.vg == lv.vg
        and not pv.missing
        and pv.device not in holding
        and (pv.free_bytes or 0) > 0
        and (not pvs or pv.device in pvs)
    ]
    return need, usable


def build_lv_repair(machine: Machine, name: str, pvs: Sequence[str] = ()) -> Plan:
    lv = raid_lv(machine, name)
    full = f"{lv.vg}/{lv.name}"
    raid = lv.raid
    assert raid is not None
    if not raid.failed_images:
        raise PlanError(f"{full}: every image is there and alive: nothing to repair")
    names = [strip_dev(p) for p in pvs]
    in_vg = {pv.device for pv in machine.pvs if pv.vg == lv.vg}
    for p in names:
        if p not in in_vg:
            raise PlanError(f"{p} is no PV of volume group {lv.vg}")
    need, usable, holding = repair_room(machine, lv, names)
    for p in names:
        if p in holding:
            raise PlanError(f"{p} holds a surviving image of {full}: the new one must go elsewhere")
    free = sum(pv.free_bytes or 0 for pv in usable)
    if free < need:
        failed = len(raid.failed_images)
        where = ", ".join(f"{pv.device} {human_bytes(pv.free_bytes or 0)}" for pv in usable)
        raise PlanError(
            f"{full}: repairing {failed} failed image{'s' if failed != 1 else ''} needs "
            f"{human_bytes(need)} free on PVs that hold no surviving image of it; "
            f"there {'is' if free else 'is none'}"
            + (f" only {human_bytes(free)} ({where})" if free else "")
            + " — add a PV to the VG (vgextend) first"
        )
    lost = ", ".join(f"image {i.index} ({', '.join(i.pvs)})" for i in raid.failed_images)
    op = ops.LvRepair(lv.vg, lv.name, tuple(f"/dev/{p}" for p in names))
    plan = Plan(
        title=f"repair {full}",
        steps=(
            Step(op, f"{full}: {lost} made anew on free space of other PVs and recovered whole"),
        ),
        target=full,
        kind="lv-repair",
        params={"lv": full, "pvs": list(names)},
    )
    return with_consequences(plan, machine)


def build_lv_limits(
    machine: Machine, name: str, min_kib_s: int | None = None, max_kib_s: int | None = None
) -> Plan:
    """``lvchange --minrecoveryrate/--maxrecoveryrate``: the LV's own bounds on its syncs'
    rate (KiB/s per device; 0 unsets one). A check or repair running then ends (the
    consequences say so: lvm2 issue 184)."""
    lv = raid_lv(machine, name)
    full = f"{lv.vg}/{lv.name}"
    raid = lv.raid
    assert raid is not None
    if min_kib_s is None and max_kib_s is None:
        raise PlanError("lv-sync limits: give --min, --max or both (KiB/s; 0 unsets it)")
    for v, flag in ((min_kib_s, "--min"), (max_kib_s, "--max")):
        if v is not None and not 0 <= v <= MAX_RATE_KIB:
            raise PlanError(f"lv-sync limits {flag} {v}: a rate in KiB/s from 0 to {MAX_RATE_KIB}")
    lo = raid.min_rate_kib_s if min_kib_s is None else min_kib_s or None
    hi = raid.max_rate_kib_s if max_kib_s is None else max_kib_s or None
    if lo is not None and hi is not None and lo > hi:
        raise PlanError(f"{full}: --min {lo} KiB/s would be above --max {hi} KiB/s")
    notes = []
    if hi is not None and lo is None:
        notes.append(
            "md throttles a sync only above its min (md.c md_do_sync): without "
            "--minrecoveryrate the LV's syncs run at least at dev.raid.speed_limit_min, "
            "whatever its max"
        )
    said = []
    for v, flag in ((min_kib_s, "min"), (max_kib_s, "max")):
        if v is not None:
            said.append(f"{flag} {f'{v} KiB/s' if v else 'unset'}")
    op = ops.LvRecoveryRate(lv.vg, lv.name, min_kib_s, max_kib_s)
    plan = Plan(
        title=f"recovery rates of {full}: {', '.join(said)}",
        steps=(Step(op, f"{full}: its syncs' rate bounds, {', '.join(said)} (per device)"),),
        target=full,
        kind="lv-sync-limits",
        params={"lv": full, "min": min_kib_s, "max": max_kib_s},
        notes=tuple(notes),
    )
    return with_consequences(plan, machine)


def build_lv_replace(machine: Machine, name: str, old: str, to: Sequence[str] = ()) -> Plan:
    """``lvconvert --replace OLD VG/LV [NEW...]``: the image on OLD dropped, a new one made on
    a PV holding no image of the LV and recovered whole. lvm refuses it while the LV is not in
    sync (lvm2 lv_raid_replace(): "Unable to replace devices in ... while it is not in-sync")."""
    lv = raid_lv(machine, name)
    full = f"{lv.vg}/{lv.name}"
    raid = lv.raid
    assert raid is not None
    old_pv = strip_dev(old)
    if not lv.active:
        raise PlanError(f"{full} is not active: activate it first (lvchange -ay {full})")
    if raid.failed_images:
        raise PlanError(
            f"{full} has a failed image: repair it first (raidman plan lv-repair --lv {full})"
        )
    if raid.syncing:
        running = raid.dm.sync_action if raid.dm is not None else raid.sync_action
        raise PlanError(f"{full} is running a {running}: lvm replaces an image only in sync")
    replaced = [i for i in raid.images if old_pv in i.pvs]
    if not replaced:
        on = ", ".join(dict.fromkeys(p for i in raid.images for p in i.pvs))
        raise PlanError(f"{old_pv} holds no image of {full} (its images are on {on})")
    names = [strip_dev(p) for p in to]
    in_vg = {pv.device for pv in machine.pvs if pv.vg == lv.vg}
    holding = {p for i in raid.images for p in i.pvs}
    for p in names:
        if p not in in_vg:
            raise PlanError(f"{p} is no PV of volume group {lv.vg}")
        if p in holding:
            raise PlanError(f"{p} already holds an image of {full}: the new one must go elsewhere")
    need, usable = _room(machine, lv, len(replaced), holding, names)
    free = sum(pv.free_bytes or 0 for pv in usable)
    if free < need:
        where = ", ".join(f"{pv.device} {human_bytes(pv.free_bytes or 0)}" for pv in usable)
        raise PlanError(
            f"{full}: a new image needs {human_bytes(need)} free on PVs that hold no image of "
            f"it; there {'is' if free else 'is none'}"
            + (f" only {human_bytes(free)} ({where})" if free else "")
            + " — add a PV to the VG (vgextend) first"
        )
    op = ops.LvReplace(lv.vg, lv.name, f"/dev/{old_pv}", tuple(f"/dev/{p}" for p in names))
    which = ", ".join(f"image {i.index}" for i in replaced)
    plan = Plan(
        title=f"replace {old_pv} in {full}",
        steps=(
            Step(
                op,
                f"{full}: {which} leaves {old_pv}; a new one on "
                f"{', '.join(names) or 'free space of another PV'} is recovered from the others",
            ),
        ),
        target=full,
        kind="lv-replace",
        params={"lv": full, "old": old_pv, "to": list(names)},
    )
    return with_consequences(plan, machine)
