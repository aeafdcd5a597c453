"""Filesystem geometry vs the md array underneath (directly, through LVM or LUKS).

ext4: stride = chunk / block, stripe-width = stride × data disks (mke2fs(8) ``-E stride=,
stripe_width=``; ``tune2fs -E`` changes both on an existing filesystem). XFS: sunit = chunk,
swidth = chunk × data disks, fixed at mkfs time. LVM: the PV's first extent (pe_start) must
start on a full stripe, and ``md_chunk_alignment`` makes pvcreate do that on md devices.

mkfs.xfs ignores the device's stripe hints on a data volume under 1 GiB ("small data volume,
ignoring data volume stripe unit ..."; xfsprogs mkfs/xfs_mkfs.c ``calc_stripe_factors``: the
gains are not worth the risk of an undersized log, seen with xfsprogs 6.1 on a real kernel): an
XFS that small with no stripe unit at all is mkfs's own default, not a mismatch. A stripe unit
that is set but wrong is still one, whatever the size.
"""

from __future__ import annotations

from collections.abc import Iterator

from app.model import levels
from app.model.devices import Machine
from app.parsers.fsinfo import EXT_TYPES, fs_info_what
from app.plans import ops
from app.plans.geometry import XFS_AUTO_STRIPE_MIN_BYTES, Geometry, PlanError
from app.plans.plan import Plan, Step
from app.rules.finding import Finding
from app.rules.inputs import AuditInputs
from app.rules.stack import array_below, device_path, human, striped_geometry


def _data_disks_text(level: str, n: int | None, layout: str | None, dd: int) -> str:
    if n is None:
        return f"{levels.label(level)}: {dd} data disks"
    return f"{levels.data_disks_rule(level, n, layout)} data disks (optimal I/O = {dd} chunks)"


def _ext4(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    for dev, sb in inputs.ext4.items():
        a = array_below(machine, dev)
        if a is None:
            continue
        geo = Geometry.of(a)
        if geo is None:
            continue
        chunk, dd = geo.chunk_bytes, geo.data_disks
        bs = sb.block_size
        try:
            want_s, want_w = geo.ext4(bs)
        except PlanError:
            continue  # md.py reports chunk vs block; no integral stride exists
        have_s = sb.stride or 0
        have_w = sb.stripe_width or 0
        if (have_s, have_w) == (want_s, want_w):
            continue
        path = device_path(machine, dev)
        via = "" if dev == a.name else f" (through {' → '.join(_chain(machine, dev, a.name))})"
        have = "not set" if not have_s and not have_w else f"stride={have_s}, stripe_width={have_w}"
        yield Finding(
            "warning",
            "ext4-stride-mismatch",
            dev,
            f"ext4 on {dev}: stride/stripe-width do not match {a.name}",
            f"The ext4 filesystem on {path}{via} has {have}; {a.name} has a {human(chunk)} "
            f"chunk and {_data_disks_text(a.level, a.raid_disks, a.layout, dd)}, so with "
            f"{bs}-byte blocks stride = {chunk} / {bs} = {want_s} and stripe_width = "
            f"{want_s} × {dd} = {want_w}. The allocator uses these to place data on whole "
            "stripes; wrong values spread writes into partial stripes. tune2fs changes them "
            "without touching data (takes effect at the next mount).",
            Plan(
                f"Set stride={want_s}, stripe_width={want_w} on {path}",
                (
                    Step(
                        ops.TuneExt4Stride(path, want_s, want_w),
                        f"match the ext4 RAID hints to {a.name}'s geometry",
                    ),
                ),
                target=dev,
                kind="audit-ext4-stride",
                params={"stride": want_s, "stripe_width": want_w},
            ),
        )


def _unread(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    """An ext4/XFS on md whose superblock could not be read: say so, as other rules do."""
    for fs in machine.filesystems:
        if fs.fstype not in (*EXT_TYPES, "xfs") or fs.device in inputs.ext4:
            continue
        if fs.device in inputs.xfs:
            continue
        a = array_below(machine, fs.device)
        if a is None or Geometry.of(a) is None:
            continue
        what = fs_info_what(fs)
        tool = what.split(":", 1)[0]
        why = inputs.unknown.get(what, "not read")
        hints = "stride/stripe-width" if fs.fstype in EXT_TYPES else "sunit/swidth"
        yield Finding(
            "advice",
            "audit-incomplete",
            "",  # like the other checks that could not run: no badge on the device
            f"Could not check the {fs.fstype} geometry on {fs.device}",
            f"{tool} could not read the {fs.fstype} superblock on {device_path(machine, fs.device)} "
            f"({why}), so whether its {hints} match {a.name} is not checked. Run the audit "
            "as root to check it.",
        )


def _fs_larger_than_device(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    """A filesystem superblock that claims more blocks than its device holds: a stale superblock
    left by an earlier, bigger array or partition on the same disks (a real kernel showed an
    ext4 claiming 382 MiB on a 255 MiB md made on the disks of a former bigger array). Mounting
    it reads and writes past the device's end (the kernel refuses: "bad geometry: block count
    ... exceeds size of device")."""
    for dev, sb in inputs.ext4.items():
        claimed = sb.block_count * sb.block_size if sb.block_count else None
        yield from _larger(machine, dev, "ext4", claimed)
    for dev, g in inputs.xfs.items():
        yield from _larger(machine, dev, "XFS", g.size_bytes)


def _larger(machine: Machine, dev: str, fstype: str, claimed: int | None) -> Iterator[Finding]:
    size = getattr(machine.device(dev), "size_bytes", None)
    if claimed is None or not isinstance(size, int) or size <= 0 or claimed <= size:
        return
    yield Finding(
        "warning",
        "fs-larger-than-device",
        dev,
        f"{fstype} on {dev} claims {human(claimed)}, the device has {human(size)}",
        f"The {fstype} superblock on /dev/{dev} describes a filesystem of {human(claimed)} "
        f"({claimed} bytes), but /dev/{dev} is only {human(size)} ({size} bytes). Such a "
        "superblock is usually left over from an earlier, bigger array or partition on the "
        "same disks; the kernel refuses to mount it, and blocks past the end cannot be read "
        "or written. If the data matters, copy what can be read first; if it is a leftover, "
        "remove it (wipefs) before making a new filesystem. No one-key fix is offered.",
        fix_destroys_data=True,
    )


def _xfs(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    for dev, g in inputs.xfs.items():
        a = array_below(machine, dev)
        if a is None:
            continue
        geo = Geometry.of(a)
        if geo is None:
            continue
        chunk, dd = geo.chunk_bytes, geo.data_disks
        want_u, want_w = geo.xfs_bytes()
        if (g.sunit_bytes, g.swidth_bytes) == (want_u, want_w):
            continue
        small = g.size_bytes is not None and g.size_bytes < XFS_AUTO_STRIPE_MIN_BYTES
        if small and not g.sunit_blocks and not g.swidth_blocks:
            continue  # mkfs.xfs's own default under 1 GiB (see the module doc)
        have = (
            "no stripe unit"
            if not g.sunit_blocks
            else f"sunit={g.sunit_blocks} swidth={g.swidth_blocks} blocks "
            f"({human(g.sunit_bytes)} / {human(g.swidth_bytes)})"
        )
        yield Finding(
            "warning",
            "xfs-stripe-mismatch",
            dev,
            f"XFS on {dev}: sunit/swidth do not match {a.name}",
            f"The XFS filesystem on {device_path(machine, dev)} has {have}; {a.name} has a "
            f"{human(chunk)} chunk and {_data_disks_text(a.level, a.raid_disks, a.layout, dd)}, "
            f"so sunit should be {human(want_u)} ({want_u // g.bsize} blocks) and swidth "
            f"{human(want_w)} ({want_w // g.bsize} blocks). XFS fixes its geometry at mkfs: "
            "the real fix is mkfs.xfs -d su=…,sw=… after a backup, which destroys the data, "
            f"so no one-key fix is offered. Mounting with -o sunit={want_u // 512},"
            f"swidth={want_w // 512} (512-byte units) aligns new allocations only.",
            fix_destroys_data=True,
        )


def _chain(machine: Machine, top: str, bottom: str) -> list[str]:
    """The device names from ``top`` down to ``bottom`` along parent edges."""
    path = [top]
    cur = top
    for _ in range(16):
        if cur == bottom:
            break
        parents = [
            p for p in machine.parents_of(cur) if p == bottom or bottom in machine.ancestors_of(p)
        ]
        if not parents:
            break
        cur = parents[0]
        path.append(cur)
    return path


def _pv(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    md_pvs = []
    for pv in machine.pvs:
        a = array_below(machine, pv.device)
        if a is None:
            continue
        md_pvs.append((pv, a))
        geo = striped_geometry(a)
        if geo is None or pv.pe_start is None:
            continue
        stripe = geo[0] * geo[1]
        if pv.pe_start % stripe == 0:
            continue
        yield Finding(
            "warning",
            "lvm-pe-start",
            pv.device,
            f"PV {pv.device}: first extent is not stripe aligned",
            f"The PV on {pv.device} starts its first extent at {human(pv.pe_start)} "
            f"(pe_start), not a multiple of {a.name}'s full stripe {human(stripe)} "
            f"({human(geo[0])} chunk × {geo[1]} data disks); {pv.pe_start} mod {stripe} = "
            f"{pv.pe_start % stripe}. Every LV on it is offset within the stripes. Fixing it "
            "means pvcreate --dataalignment again, which destroys the VG's data on this PV "
            "(or pvmove everything away first); no one-key fix is offered.",
            fix_destroys_data=True,
        )
        vg = machine.vg(pv.vg) if pv.vg else None
        if vg is not None and vg.extent_size and vg.extent_size % stripe:
            yield Finding(
                "advice",
                "lvm-extent-stripe",
                pv.device,
                f"VG {vg.name}: extent size is not a multiple of {a.name}'s stripe",
                f"Extents are {human(vg.extent_size)}, {a.name}'s full stripe is "
                f"{human(stripe)}: only LVs whose first extent falls on a stripe boundary "
                "are aligned.",
            )
    if not md_pvs:
        return
    if inputs.lvm is None:
        why = inputs.unknown.get("lvmconfig", "not read")
        said = (
            "lvmconfig (LVM's own tool, package lvm2) was not found"
            if why == "lvmconfig not found"
            else f"lvmconfig could not be read ({why})"
        )
        yield Finding(
            "advice",
            "audit-incomplete",
            "",
            "Could not check LVM alignment settings",
            f"{said}: LVM's md_chunk_alignment and issue_discards settings are not checked.",
        )
        return
    names = ", ".join(pv.device for pv, _ in md_pvs)
    for key, what in (
        ("devices/md_chunk_alignment", "align PV data to the md stripe"),
        ("devices/data_alignment_detection", "align PV data to the kernel's I/O hints"),
    ):
        if inputs.lvm.get_bool(key) is False:
            yield Finding(
                "advice",
                "lvm-alignment-off",
                "",
                f"LVM {key.split('/')[1]} is off",
                f"lvm.conf sets {key.split('/')[1]} = 0, so pvcreate does not {what}; the "
                f"existing PVs on md ({names}) keep their pe_start, but new ones will not be "
                f"aligned. Set {key.split('/')[1]} = 1 in the devices section of "
                "/etc/lvm/lvm.conf.",
            )


def _pv_larger_than_device(machine: Machine) -> Iterator[Finding]:
    """A PV label that claims more than its device holds: typically left from an earlier, bigger
    array on the same disks (seen on a real kernel: a 508 MiB PV on a 255 MiB RAID-1 made on the
    disks of a former 2-disk RAID-0). LVM would place extents past the device's end."""
    for pv in machine.pvs:
        if pv.missing:
            continue
        dev = machine.device(pv.device)
        size = getattr(dev, "size_bytes", None)
        if not isinstance(size, int) or size <= 0 or pv.size_bytes <= size:
            continue
        vg = f" (VG {pv.vg})" if pv.vg else ""
        yield Finding(
            "warning",
            "lvm-pv-larger-than-device",
            pv.device,
            f"PV on {pv.device} claims {human(pv.size_bytes)}, the device has {human(size)}",
            f"The LVM label on /dev/{pv.device}{vg} records a PV of {human(pv.size_bytes)} "
            f"({pv.size_bytes} bytes), but /dev/{pv.device} is only {human(size)} ({size} "
            "bytes). Such a label is usually left over from an earlier, bigger array or "
            "partition on the same disks; extents past the end cannot be read or written. If "
            "the data on it matters, check it (pvck, vgcfgbackup) before anything else; if it "
            "is a leftover, remove it (wipefs / pvremove -ff). No one-key fix is offered.",
            fix_destroys_data=True,
        )


def check(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    yield from _pv_larger_than_device(machine)
    yield from _fs_larger_than_device(machine, inputs)
    yield from _unread(machine, inputs)
    yield from _ext4(machine, inputs)
    yield from _xfs(machine, inputs)
    yield from _pv(machine, inputs)
