"""md RAID: data offset, bitmap, parity RAID on SSDs, stripe cache, mdadm.conf, metadata."""

from __future__ import annotations

from collections.abc import Iterator

from app.format import human_bytes, speed
from app.model import levels
from app.model.devices import SECTOR, Machine, MdArray
from app.model.sync_model import forecast_sync, members_rated_kib_s
from app.parsers.mdadm import MdConfArray
from app.plans import ops
from app.plans.builders import persist
from app.plans.builders.mdconf_edit import build_remove_stale, initramfs_step
from app.plans.builders.sync_actions import FILE_BITMAP_DEPRECATED
from app.plans.geometry import (
    STRIPE_CACHE_DEFAULT,
    STRIPE_CACHE_ENTRIES,
    stripe_cache_devices,
    stripe_cache_memory,
)
from app.plans.guards.preflight import BUSY_ACTIONS
from app.plans.plan import Plan, Step
from app.rules.finding import Finding
from app.rules.inputs import AuditInputs
from app.rules.mdconf import devname_kernel, norm_uuid
from app.rules.stack import MiB, human, member_disk, striped_geometry

PARITY = levels.PARITY
PAGE = 4096


def _conf_by_uuid(entries: tuple[MdConfArray, ...]) -> dict[str, MdConfArray]:
    """mdadm.conf's ARRAY lines by normalised UUID, the first of each (one pass, not one per
    array: 1,250 arrays against 1,250 lines were 1.6 M comparisons)."""
    out: dict[str, MdConfArray] = {}
    for e in entries:
        u = norm_uuid(e.uuid)
        if u is not None:
            out.setdefault(u, e)
    return out


def _conf_entry(by_uuid: dict[str, MdConfArray], a: MdArray) -> MdConfArray | None:
    u = norm_uuid(a.uuid)
    return by_uuid.get(u) if u is not None else None


def _data_offset(machine: Machine, a: MdArray) -> Iterator[Finding]:
    chunk = a.chunk_bytes
    for m in a.members:
        if m.data_offset_sectors is None:
            continue
        off = m.data_offset_sectors * SECTOR
        disk = member_disk(machine, m.device)
        phys = disk.physical_sector if disk is not None else SECTOR
        if off % phys:
            yield Finding(
                "error",
                "md-data-offset-misaligned",
                a.name,
                f"{a.name}: data on {m.device} does not start on a physical sector",
                f"{m.device}'s data offset is {m.data_offset_sectors} sectors ({off} bytes), not a "
                f"multiple of its {phys}-byte physical sector ({off} mod {phys} = {off % phys}). "
                "Changing the data offset needs a reshape (mdadm --grow --data-offset) or "
                "recreating the array; no one-key fix is offered.",
                fix_destroys_data=True,
            )
        elif chunk and off % chunk and off % MiB:
            yield Finding(
                "warning",
                "md-data-offset-chunk",
                a.name,
                f"{a.name}: data offset on {m.device} is not chunk aligned",
                f"{m.device}'s data offset is {off} bytes, a multiple of neither the "
                f"{human(chunk)} chunk ({off} mod {chunk} = {off % chunk}) nor 1 MiB, so every "
                "chunk straddles SSD pages / erase blocks of the member. Changing it needs a "
                "reshape or recreating the array; no one-key fix is offered.",
                fix_destroys_data=True,
            )


BITMAP_COST = (
    "A bitmap is not free: an internal bitmap has been measured costing up to 30% of "
    "sequential write speed (a 5-disk RAID-6 went from 124 to 157 MiB/s once its bitmap "
    "moved off the array). The remedy today is a larger --bitmap-chunk (fewer bitmap "
    "updates: mdadm --grow --bitmap=none, then --bitmap=internal --bitmap-chunk=64M), not a "
    f"bitmap file on another disk: {FILE_BITMAP_DEPRECATED}."
)


def _bitmap_op(a: MdArray) -> ops.SetBitmap:
    return ops.SetBitmap(a.path, "internal")


def _bitmap(machine: Machine, a: MdArray) -> Iterator[Finding]:
    if a.level not in levels.REDUNDANT or a.bitmap is not None or a.is_container:
        return
    if a.consistency_policy in ("journal", "ppl"):
        return  # these replace the bitmap and exclude it
    fix_argv = _bitmap_op(a).argv()
    busy = a.sync is not None and a.sync.action in BUSY_ACTIONS
    later = (
        f" Not now: {a.name} is running a {a.sync.action}, and md answers EBUSY to a bitmap "
        f"change while it runs; after the {a.sync.action} ends, run: {' '.join(fix_argv)}"
        if busy and a.sync is not None
        else ""
    )
    size = f" ({human(a.size_bytes)})" if a.size_bytes else ""
    member = _member_bytes(a)
    if a.is_external:
        # IMSM/DDF volumes made by the firmware (iRST) get no bitmap (article 000); mdadm 4.2
        # and later can add one to an IMSM volume (super-intel.c add_internal_bitmap_imsm)
        imsm = "imsm" in (a.metadata or "") or _container_is_imsm(machine, a)
        can_add = (
            f" mdadm 4.2 and later can add one to an IMSM volume: mdadm --grow {a.path} "
            "--bitmap=internal (older mdadm refuses)."
            if imsm
            else " mdadm cannot add one to this metadata; weigh moving the data to native md "
            "with a bitmap."
        )
        yield Finding(
            "advice",
            "md-no-bitmap",
            a.name,
            f"{a.name} ({a.level}, {a.metadata}) has no write-intent bitmap",
            f"{a.name} is a firmware RAID volume ({a.metadata}); iRST creates these without a "
            "bitmap, so a member that drops out briefly is rebuilt in full: one "
            "RAID-5 rebuild after a loose SATA cable wrote 1.5 TiB to a single SSD. Reconnect "
            "cables firmly." + can_add + " " + BITMAP_COST,
        )
        return
    if a.level in levels.MIRRORED:
        all_ssd = bool(a.members) and all(
            (d := member_disk(machine, m.device)) is not None and d.is_ssd for m in a.members
        )
        rewrite = f" ({human(member)})" if member else ""
        yield Finding(
            "advice",
            "md-no-bitmap",
            a.name,
            f"{a.name} ({a.level}) has no write-intent bitmap",
            f"Without a bitmap a member that drops out briefly and is re-added (mdadm refuses "
            f"--re-add then; --add is used) is rebuilt in full: the whole member{rewrite} is "
            "rewritten — measured on a real kernel as 1.00 × the member's capacity — and an "
            "unclean shutdown resyncs every block. "
            + (
                "SSD RAID-10 is often run without a bitmap on purpose (a full re-sync "
                "is fast on SSDs and the bitmap costs write speed); that is the trade-off: "
                "keep it off for write speed, add one to spare the flash a full rewrite. "
                if all_ssd
                else ""
            )
            + BITMAP_COST
            + later,
            None if busy else _add_bitmap_plan(a),
        )
        return
    yield Finding(
        "warning",
        "md-no-bitmap",
        a.name,
        f"{a.name} ({a.level}) has no write-intent bitmap",
        f"Without a bitmap, a member that drops out briefly (cable, controller reset) and is "
        f"re-added is rebuilt in full — every block of {a.name}{size} is read and the member "
        "rewritten — and an unclean shutdown resyncs the whole array (a RAID-5 wants a "
        "bitmap). " + BITMAP_COST + " It can be added to a running array." + later,
        None if busy else _add_bitmap_plan(a),
    )


def _container_is_imsm(machine: Machine, a: MdArray) -> bool:
    """A volume "external:/md127/0" whose container md127 holds IMSM metadata."""
    c = machine.array(a.container) if a.container else None
    return c is not None and "imsm" in (c.metadata or "")


def _member_bytes(a: MdArray) -> int | None:
    sizes = [m.size_kib * 1024 for m in a.members if m.size_kib]
    return max(sizes) if sizes else None


def _add_bitmap_plan(a: MdArray) -> Plan:
    return Plan(
        f"Add an internal write-intent bitmap to {a.name}",
        (Step(_bitmap_op(a), "add an internal write-intent bitmap"),),
        target=a.name,
        kind="audit-md-bitmap",
    )


def _parity_on_ssd(machine: Machine, a: MdArray) -> Iterator[Finding]:
    if a.level not in PARITY - {"raid4"}:
        return
    disks = [member_disk(machine, m.device) for m in a.members]
    if not disks or any(d is None or not d.is_ssd for d in disks):
        return
    slotted = [
        (m.device, (m.size_kib * 1024) if m.size_kib else d.size_bytes)
        for m in a.members_by_slot
        if m.slot is not None and m.role != "faulty"
        for d in (member_disk(machine, m.device),)
        if d is not None
    ]
    if not slotted:
        return
    # what its first sync wrote: the sync model's (the create plan's consequences say the same)
    first = forecast_sync(
        array=a.name,
        level=a.level,
        raid_disks=a.raid_disks or len(slotted),
        layout=a.layout,
        action="resync",
        members=slotted,
        initial=True,
        external_metadata=a.is_external,
    )
    low = sum(w.bytes_low for w in first.members)
    high = sum(w.bytes_high for w in first.members)
    wrote = (
        f"about {human_bytes(high)}"
        if low == high
        else f"from {human_bytes(low)} (new or trimmed SSDs) to {human_bytes(high)}"
    )
    member = max(b for _, b in slotted)
    parity = levels.LEVELS[a.level].parity
    yield Finding(
        "advice",
        "md-parity-on-ssd",
        a.name,
        f"{a.name} is {a.level.upper()} on SSDs",
        f"All {len(disks)} members are SSDs. Its initial sync wrote {wrote} of flash wear "
        f"before any data was stored — {first.why} — and a rebuild rewrites a whole member "
        f"({human_bytes(member)}) again. Each small write also costs a read-modify-write of "
        f"{parity} parity chunk(s). RAID-10 avoids that read-modify-write, not the rebuilds: "
        "a rebuild — or a re-add without a bitmap — rewrites the whole member too (Red Hat's "
        "storage guide warns of this for RAID levels 1, 4, 5 and 6).",
    )


LARGE_HDD = 1_000_000_000_000  # members of 1 TB and more: article 001's 5 × 1 TB RAID-6 case


def _raid5_on_large_hdds(machine: Machine, a: MdArray, inputs: AuditInputs) -> Iterator[Finding]:
    """Article 001: a RAID-5 survives one failure, and until the rebuild onto the new disk ends
    (up to 70 hours for large arrays) the data is at risk; RAID-6 survives two."""
    if a.level != "raid5" or not a.members:
        return
    disks = [member_disk(machine, m.device) for m in a.members]
    if any(d is None or d.rotational is not True for d in disks):
        return
    member = _member_bytes(a) or min(d.size_bytes for d in disks if d is not None)
    if member < LARGE_HDD:
        return
    recorded = inputs.sync_speed_kib_s.get(a.name)
    if a.sync is not None and a.sync.active and a.sync.speed_kib_s:
        rate = f"at {speed(a.sync.speed_kib_s)} (its current {a.sync.action} speed) that is about"
        hours = member / 1024 / a.sync.speed_kib_s / 3600
    elif recorded:
        rate = f"at {speed(recorded)} (the average of its last sync raidman recorded) that is about"
        hours = member / 1024 / recorded / 3600
    else:
        # no sync of this array seen: the sync model's recovery at the disks' rated speed (and
        # the limits where known) — a floor, not a measurement of this array
        slots = [(m.device, member) for m in a.members_by_slot if m.slot is not None]
        lim = a.sync.max_speed_kib_s if a.sync is not None else None
        f = forecast_sync(
            array=a.name,
            level=a.level,
            raid_disks=a.raid_disks or len(slots),
            layout=a.layout,
            action="recover",
            members=slots,
            targets=[slots[-1][0]] if slots else [],
            limit_kib_s=(None, lim),
            member_speed_kib_s=members_rated_kib_s(machine, [d for d, _ in slots]),
        )
        if f.duration_s_low is None or not f.speed_kib_s:
            return
        rate = (
            f"even at {speed(f.speed_kib_s)} ({f.speed_why}, no sync of this array seen; "
            "slower under load or with a small stripe_cache_size) that is at least"
        )
        hours = f.duration_s_low / 3600
    yield Finding(
        "advice",
        "md-raid5-large-hdds",
        a.name,
        f"{a.name}: RAID-5 of {len(disks)} large HDDs — consider RAID-6",
        f"{a.name} is a RAID-5 of {len(disks)} rotating disks of {human_bytes(member)} "
        f"({member / 1e12:.1f} TB) per member. "
        f"A rebuild rewrites a whole member: {rate} {hours:.0f} h, during which a second "
        "failure — or an unreadable sector on any other member — loses the array. RAID-6 "
        "survives that (rebuilds of large arrays can take up to 70 hours), and a larger "
        "stripe_cache_size wins its write speed back. Moving to RAID-6 needs one more disk: "
        "mdadm --grow --level=6 --raid-devices=N+1 (a reshape); no one-key fix is offered.",
    )


def _mixed_sector_sizes(machine: Machine, a: MdArray) -> Iterator[Finding]:
    disks = {m.device: member_disk(machine, m.device) for m in a.members}
    known = {dev: d for dev, d in disks.items() if d is not None}
    if len(known) < 2:
        return
    logical = {d.logical_sector for d in known.values()}
    physical = {d.physical_sector for d in known.values()}
    if len(logical) < 2 and len(physical) < 2:
        return
    sizes = ", ".join(
        f"{dev} {d.logical_sector}/{d.physical_sector}" for dev, d in sorted(known.items())
    )
    yield Finding(
        "warning" if len(logical) > 1 else "advice",
        "md-mixed-sector-sizes",
        a.name,
        f"{a.name}: members with different sector sizes",
        f"The members of {a.name} report different logical/physical sector sizes ({sizes}). "
        "md takes the largest for the whole array, so the array's I/O is at least that size "
        + (
            "and mixing logical sector sizes makes replacements harder (a disk whose logical "
            "sector is larger than the array's block size may be refused). "
            if len(logical) > 1
            else "and writes smaller than the 4 KiB physical sectors become read-modify-write "
            "inside the 4Kn/512e drives. "
        )
        + "Prefer replacements with the same sector sizes; check filesystems use 4 KiB blocks.",
    )


def _stripe_cache(a: MdArray, inputs: AuditInputs) -> Iterator[Finding]:
    if a.level not in PARITY or a.stripe_cache_size is None:
        return
    if a.stripe_cache_size > STRIPE_CACHE_DEFAULT:
        return
    n = stripe_cache_devices(a) or 1
    want = STRIPE_CACHE_ENTRIES
    cost_now = stripe_cache_memory(a.stripe_cache_size, n)
    cost_new = stripe_cache_memory(want, n)
    steps = [
        Step(
            ops.SetStripeCache(a.name, want),
            f"stripe cache {a.stripe_cache_size} -> {want} pages ({human(cost_new)} RAM)",
        )
    ]
    f = persist.FILES["stripe-cache"]
    uuid = persist.mdadm_uuid(a.uuid or "")
    if uuid:
        text = persist.merged(
            f, inputs.persisted.get(f.path), {uuid: persist.stripe_cache_line(uuid, want)}
        )
        steps += persist.write_steps(f, text, f"keep {a.name}'s stripe cache at boot")
    yield Finding(
        "advice",
        "md-stripe-cache",
        a.name,
        f"{a.name}: stripe_cache_size is {a.stripe_cache_size} (the default)",
        f"The RAID-{a.level[-1]} stripe cache holds {a.stripe_cache_size} pages per member "
        f"({human(cost_now)} for {n} devices); sequential writes and rebuilds stall on it. "
        f"{want} pages cost {human(cost_new)} of RAM (pages × 4 KiB × {n} devices); raised "
        "from 256 to 8192 it has been measured taking a 5-disk RAID-6's writes from 35 to "
        "124 MiB/s and its rebuild from 24 to 63 MiB/s. The fix also writes a udev rule so the "
        f"value is set again at boot ({f.path})"
        + ("" if uuid else f"; {a.name}'s UUID is unknown, so no rule is written")
        + ".",
        Plan(
            f"Raise {a.name}'s stripe cache to {want}",
            tuple(steps),
            target=a.name,
            kind="audit-stripe-cache",
        ),
    )


def _metadata(a: MdArray) -> Iterator[Finding]:
    if a.metadata not in ("0.90", "0.9", "1.0"):
        return
    if a.metadata.startswith("0.9"):
        why = (
            "0.90 superblocks limit members to 2 TiB (4 TiB on newer kernels) and 28 devices, "
            "are byte-order dependent and sit at the end of the device, where a whole-disk "
            "filesystem or partition table can be mistaken for the member's."
        )
    else:
        why = (
            "1.0 superblocks sit at the end of the device; that is intended for arrays the "
            "firmware or boot loader must read as a plain filesystem (an ESP or /boot mirror), "
            "otherwise 1.2 (4 KiB from the start) is the safer default."
        )
    yield Finding(
        "advice",
        "md-old-metadata",
        a.name,
        f"{a.name} uses metadata {a.metadata}",
        why + " Converting means recreating the array (or an in-place --update=metadata for "
        "0.90 -> 1.0 on a stopped array); no one-key fix is offered.",
        fix_destroys_data=False,
    )


def _stale_conf_lines(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    """ARRAY entries of mdadm.conf whose UUID no running array has and no device's superblock
    carries (mdadm --examine --scan): the array is gone; the plan removes the entries."""
    text, path = inputs.mdadm_conf_text, inputs.mdadm_conf_path
    if text is None or path is None or not inputs.mdadm_conf or inputs.mdadm_examine is None:
        return  # no file, or which arrays the disks carry was not read: nothing is judged stale
    known = {norm_uuid(a.uuid) for a in machine.arrays}
    known |= {norm_uuid(e.uuid) for e in inputs.mdadm_examine}
    stale = [e for e in inputs.mdadm_conf if e.uuid and norm_uuid(e.uuid) not in known]
    if not stale:
        return
    try:
        plan: Plan | None = build_remove_stale(path, text, [e.uuid for e in stale if e.uuid])
    except ValueError:
        plan = None
    lines = "; ".join(e.line for e in stale)
    yield Finding(
        "advice",
        "md-conf-stale",
        "",
        f"{path} lists {len(stale)} array{'s' if len(stale) != 1 else ''} that no disk carries",
        f"No running array has the UUID of these ARRAY lines and no device carries a superblock "
        f"of it (mdadm --examine --scan): {lines}. At boot mdadm (and the initramfs, which "
        "holds a copy of mdadm.conf) looks for arrays that are gone. The plan keeps a backup, "
        "writes the file without these lines and rebuilds the initramfs.",
        plan,
    )


def _mdadm_conf(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    arrays = [a for a in machine.arrays if a.container is None or a.is_container]
    if not arrays:
        return
    yield from _stale_conf_lines(machine, inputs)
    if inputs.mdadm_conf is None:
        why = inputs.unknown.get("mdadm.conf", "not read")
        yield Finding(
            "advice",
            "audit-incomplete",
            "",
            "Could not check mdadm.conf",
            f"mdadm.conf could not be read ({why}); arrays missing from it are not detected.",
        )
        return
    conf = inputs.mdadm_conf
    conf_path = inputs.mdadm_conf_path or "/etc/mdadm/mdadm.conf"
    missing: list[MdArray] = []
    by_uuid = _conf_by_uuid(conf)
    for a in arrays:
        e = _conf_entry(by_uuid, a)
        if e is None:
            missing.append(a)
            continue
        pinned = devname_kernel(e.devname)
        if pinned is not None and pinned != a.name:
            yield Finding(
                "warning",
                "md-name-mismatch",
                a.name,
                f"{a.name} is listed in mdadm.conf as {e.devname}",
                f"{conf_path} names the array with UUID {e.uuid} {e.devname}, but it was "
                f"assembled as {a.name}. That is the md127/md126 renaming: the initramfs "
                "assembled it before (or without) the mdadm.conf that names it — usually the "
                "initramfs copy of mdadm.conf is stale, or the array's homehost does not match. "
                "Rebuilding the initramfs fixes it at the next boot (or stop the array and "
                "assemble it again with mdadm --assemble --scan).",
                Plan(
                    "Rebuild the initramfs with the current mdadm.conf",
                    (initramfs_step(conf_path),),
                    target=a.name,
                    kind="audit-mdadm-conf",
                ),
            )
    if not missing:
        return
    scan = _conf_by_uuid(inputs.mdadm_scan) if inputs.mdadm_scan is not None else None
    for a in missing:
        line: str | None = None
        if scan is not None:
            e = _conf_entry(scan, a)
            line = e.line if e is not None else None
        try:  # a line mdadm printed is tool output: taken only in the shape mdadm prints
            op: ops.Op = ops.AppendConfLine(conf_path, line or "")
            why = f"append the ARRAY line for {a.name}"
        except ops.OpError:
            op = ops.AppendArrayFromDetail(conf_path, a.path)
            why = f"append the ARRAY line for {a.name} (from mdadm --detail --brief)"
        step = Step(op, why)
        where = (
            "there is no mdadm.conf"
            if inputs.mdadm_conf_path is None
            else (f"{conf_path} has no ARRAY line with its UUID {a.uuid or '(unknown)'}")
        )
        yield Finding(
            "warning",
            "md-not-in-mdadm-conf",
            a.name,
            f"{a.name} is not listed in mdadm.conf",
            f"{where}. Such arrays are assembled under whatever name is free at boot "
            "(md127, md126, ...), and a boot-critical array may not be assembled by the "
            "initramfs at all." + (f" The line to add: {line}" if line else ""),
            Plan(
                f"Add {a.name} to {conf_path}",
                (step, initramfs_step(conf_path)),
                target=a.name,
                kind="audit-mdadm-conf",
            ),
        )


def check(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    for a in machine.arrays:
        if a.is_container:
            continue
        yield from _data_offset(machine, a)
        yield from _bitmap(machine, a)
        yield from _parity_on_ssd(machine, a)
        yield from _raid5_on_large_hdds(machine, a, inputs)
        yield from _mixed_sector_sizes(machine, a)
        yield from _stripe_cache(a, inputs)
        yield from _metadata(a)
        geo = striped_geometry(a)
        if geo is not None:
            for fs_dev in _filesystems_on(machine, a.name):
                bs = _fs_block(inputs, machine, fs_dev)
                if bs and geo[0] % bs:
                    yield Finding(
                        "warning",
                        "md-chunk-fs-block",
                        a.name,
                        f"{a.name}: chunk is not a multiple of the filesystem block on {fs_dev}",
                        f"The {human(geo[0])} chunk of {a.name} is not a multiple of the "
                        f"{bs}-byte block of the filesystem on {fs_dev}: blocks straddle "
                        "members. The chunk can be changed by a reshape (mdadm --grow "
                        "--chunk), which takes long and needs a backup; no one-key fix.",
                        fix_destroys_data=True,
                    )
    yield from _mdadm_conf(machine, inputs)


def _filesystems_on(machine: Machine, array: str) -> list[str]:
    out = []
    for fs in machine.filesystems:
        if fs.device == array or array in machine.ancestors_of(fs.device):
            out.append(fs.device)
    return out


def _fs_block(inputs: AuditInputs, machine: Machine, dev: str) -> int | None:
    if dev in inputs.ext4:
        return inputs.ext4[dev].block_size
    if dev in inputs.xfs:
        return inputs.xfs[dev].bsize
    fs = machine.filesystem(dev)
    return fs.block_size if fs is not None else None
