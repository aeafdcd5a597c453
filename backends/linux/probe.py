"""The full probe of a Linux machine: as few processes as possible, everything else from files.

Processes: ONE ``lsblk --json --bytes -o LSBLK_COLUMNS`` (retried without a column an old
lsblk rejects), only when lsblk shows an LVM2_member (or lsblk failed) ONE ``lvm fullreport``,
and one ``tune2fs -l`` / ``xfs_info`` per ext/XFS filesystem (its block size and RAID geometry;
the audit reuses that reading). Files: ``/sys/block/md*/md/...``, ``/proc/mdstat``,
``/sys/block/dm-*/dm/``, ``/proc/self/mountinfo``, ``/proc/swaps``, ``/sys/block/*/holders``
(``backends.linux.usage``), ``/run/udev/data/b<maj:min>`` for md names.
"""

from __future__ import annotations

import importlib
import re
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from types import ModuleType
from typing import Any

from app.model.devices import (
    CryptMapping,
    Disk,
    Filesystem,
    LogicalVolume,
    Machine,
    MdArray,
    Partition,
    PhysicalVolume,
    ProbeNote,
    VolumeGroup,
)
from app.model.usage import MOUNTS, KernelUsage
from app.parsers.blkid import BlkidEntry, parse_blkid_export
from app.parsers.errors import ParseError
from app.parsers.fsinfo import FsInfo, fs_info_argv, parse_fs_info, with_geometry
from app.parsers.lsblk import LSBLK_COLUMNS, NOT_FILESYSTEMS, LsblkNode, parse_lsblk
from backends.base import CommandResult
from backends.linux.dm_raid import with_raid_details
from backends.linux.md import (
    SYS_BLOCK,
    dev_md_links,
    fresher_progress,
    md_names,
    mdstat_progress,
    read_array,
)
from backends.linux.source import NOT_FOUND, Source
from backends.linux.usage import read_usage

LSBLK_TIMEOUT = 30.0
LVM_TIMEOUT = 60.0
FS_INFO_TIMEOUT = 20.0

# Every field of every sub-report: the parser picks what it needs; lvm accepts these since 2.02.158.
LVM_FULLREPORT_ARGV: tuple[str, ...] = (
    "lvm",
    "fullreport",
    "--reportformat",
    "json",
    "--units",
    "b",
    "--nosuffix",
    "--configreport",
    "vg",
    "-o",
    "vg_all",
    "--configreport",
    "pv",
    "-o",
    "pv_all,vg_name",
    "--configreport",
    "lv",
    "-o",
    "lv_all,vg_name",
    "--configreport",
    "seg",
    "-o",
    "seg_all,lv_uuid,lv_name,vg_name",
    "--configreport",
    "pvseg",
    "-o",
    "pvseg_all,pv_uuid,pv_name",
)

_UNKNOWN_COLUMN = re.compile(r"unknown column:?\s*['\"]?([A-Za-z0-9:%_-]+)", re.IGNORECASE)


def _optional_parser(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"app.parsers.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"app.parsers.{name}":
            raise
        return None


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def lsblk_argv(columns: Iterable[str]) -> tuple[str, ...]:
    return ("lsblk", "--json", "--bytes", "-o", ",".join(columns))


def run_lsblk(source: Source, notes: list[ProbeNote]) -> CommandResult | None:
    """lsblk with the parser's columns, dropping any the installed lsblk does not know."""
    columns = list(LSBLK_COLUMNS)
    for _ in range(len(columns)):
        r = source.run(lsblk_argv(columns), timeout=LSBLK_TIMEOUT)
        if r.ok:
            return r
        if r.returncode == NOT_FOUND:
            notes.append(ProbeNote("lsblk", "lsblk not installed: disks and partitions not shown"))
            return None
        m = _UNKNOWN_COLUMN.search(r.stderr)
        if m and m.group(1).upper() in columns and m.group(1).upper() not in ("NAME", "TYPE"):
            bad = m.group(1).upper()
            columns.remove(bad)
            notes.append(ProbeNote("lsblk", f"this lsblk has no {bad} column", "info"))
            continue
        notes.append(
            ProbeNote(
                "lsblk",
                f"lsblk failed (exit {r.returncode}): {_first_line(r.stderr) or 'no message'}",
                "error",
            )
        )
        return None
    return None


def run_lvm(source: Source, notes: list[ProbeNote]) -> Any | None:
    """``lvm fullreport`` parsed by app.parsers.lvm; None (with a note) when unavailable."""
    r = source.run(LVM_FULLREPORT_ARGV, timeout=LVM_TIMEOUT)
    if r.returncode == NOT_FOUND:
        notes.append(ProbeNote("lvm", "lvm not installed: LVM layer not shown"))
        return None
    if not r.ok and not r.stdout.strip():
        notes.append(
            ProbeNote(
                "lvm",
                f"lvm fullreport failed (exit {r.returncode}): "
                f"{_first_line(r.stderr) or 'no message'}: LVM layer not shown",
            )
        )
        return None
    parser = _optional_parser("lvm")
    if parser is None:
        notes.append(ProbeNote("lvm", "LVM parser not installed: LVM layer not shown"))
        return None
    try:
        report = parser.parse_fullreport(r.stdout)
    except ParseError as e:
        notes.append(ProbeNote("lvm", f"cannot read lvm fullreport: {e}", "error"))
        return None
    if not r.ok:
        notes.append(
            ProbeNote("lvm", f"lvm fullreport exit {r.returncode}: {_first_line(r.stderr)}", "info")
        )
    return report


class _DmInfo:
    def __init__(self, kernel: str, name: str | None, uuid: str | None, slaves: tuple[str, ...]):
        self.kernel = kernel
        self.name = name
        self.uuid = uuid
        self.slaves = slaves


def read_dm(source: Source) -> dict[str, _DmInfo]:
    out: dict[str, _DmInfo] = {}
    for n in source.listdir(SYS_BLOCK):
        if not n.startswith("dm-"):
            continue
        name = source.read_text(f"{SYS_BLOCK}/{n}/dm/name")
        uuid = source.read_text(f"{SYS_BLOCK}/{n}/dm/uuid")
        slaves = source.listdir(f"{SYS_BLOCK}/{n}/slaves")
        out[n] = _DmInfo(
            n,
            name.strip() if name is not None else None,
            (uuid.strip() or None) if uuid is not None else None,
            slaves,
        )
    return out


def _dedupe(edges: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple(dict.fromkeys(edges))


def _remap_device(
    dev: str, known: set[str], dm_by_name: dict[str, str], md_links: dict[str, str]
) -> str:
    """A PV/segment device name from lvm (basename of a /dev path) as a kernel name."""
    if dev in known or dev.startswith("["):
        return dev
    if dev in dm_by_name:  # /dev/mapper/<name>
        return dm_by_name[dev]
    md_by_link = {v: k for k, v in md_links.items()}
    if dev in md_by_link:  # /dev/md/<name>
        return md_by_link[dev]
    return dev


def read_fs_info(
    source: Source, filesystems: tuple[Filesystem, ...]
) -> tuple[tuple[Filesystem, ...], dict[str, FsInfo | CommandResult | str]]:
    """Each ext/XFS filesystem's geometry (tune2fs -l / xfs_info), once per probe: the
    filesystems with block size, stride/stripe width or sunit/swidth filled, and per device the
    parsed reading, the failed run, or why its output was unreadable (the audit reuses these)."""
    out: list[Filesystem] = []
    readings: dict[str, FsInfo | CommandResult | str] = {}
    for fs in filesystems:
        argv = fs_info_argv(fs)
        if argv is None:
            out.append(fs)
            continue
        r = source.run(argv, timeout=FS_INFO_TIMEOUT)
        if not r.ok:
            readings[fs.device] = r  # not root, tool missing, not recorded: the audit says why
            out.append(fs)
            continue
        try:
            info = parse_fs_info(fs, r.stdout)
        except ParseError as e:
            readings[fs.device] = f"unreadable output: {e}"
            out.append(fs)
            continue
        readings[fs.device] = info
        out.append(with_geometry(fs, info))
    return tuple(out), readings


def mounted_untyped(
    usage: KernelUsage, filesystems: tuple[Filesystem, ...], devices: set[str]
) -> tuple[Filesystem, ...]:
    """The mounted filesystems lsblk did not type (its FSTYPE comes from udev's blkid cache:
    empty without udev, e.g. a VM whose ext4 on /dev/vda is /), as the kernel mounted them:
    mountinfo's type and mountpoints. Only block devices the probe knows; swap is no mount."""
    typed = {f.device for f in filesystems}
    out: list[Filesystem] = []
    for name, fstype in usage.fstypes:
        if name in typed or name not in devices or not fstype:
            continue
        typed.add(name)
        out.append(Filesystem(device=name, fstype=fstype, mountpoints=usage.mountpoints(name)))
    return tuple(out)


BLKID_ARGV = ("blkid", "-p", "-o", "export")
BLKID_AT_MOST = 64  # devices probed in one blkid run (each opens the device and reads its start)
BLKID_TIMEOUT = 20.0
# A device's answer is kept this long per source (device name, maj:min, size): blkid -p reads
# the device, and asking at every probe would keep a spun-down blank disk awake.
BLKID_RECHECK_S = 600.0
_BlkidKey = tuple[str, str | None, int | None]
_blkid_seen: weakref.WeakKeyDictionary[Source, dict[_BlkidKey, tuple[float, BlkidEntry | None]]]
_blkid_seen = weakref.WeakKeyDictionary()


def _blkid_cache(source: Source) -> dict[_BlkidKey, tuple[float, BlkidEntry | None]]:
    try:
        return _blkid_seen.setdefault(source, {})
    except TypeError:  # a source that cannot be weakly referenced: no memory, ask every time
        return {}


def unmounted_untyped(
    source: Source,
    nodes: Mapping[str, LsblkNode],
    filesystems: tuple[Filesystem, ...],
    edges: Sequence[tuple[str, str]],
    usage: KernelUsage,
    notes: list[ProbeNote],
) -> tuple[Filesystem, ...]:
    """The filesystems on devices that lsblk did not type and the kernel has not mounted
    (without udev lsblk's FSTYPE is empty: an ext4 on /dev/vdb showed as a bare disk), read from
    the superblock by ``blkid -p`` through the backend, one run for them all. Only devices with
    nothing on top of them (no partitions, array, mapping or holder), swap included as the
    type blkid says; what is an md or LVM member is not a filesystem."""
    typed = {f.device for f in filesystems}
    below = {lower for lower, _ in edges}
    held = {dev for dev, _ in usage.holders}
    cands = sorted(
        n.name
        for n in nodes.values()
        if n.name not in typed
        and n.name not in below
        and n.name not in held
        and not n.fstype
        and n.type not in ("rom", "loop")
        and (n.size_bytes or 0) > 0
    )[:BLKID_AT_MOST]
    if not cands:
        return ()
    seen = _blkid_cache(source)
    now = time.monotonic()
    keys = {n: (n, nodes[n].maj_min, nodes[n].size_bytes) for n in cands}
    known = {
        n: seen[k][1] for n, k in keys.items() if k in seen and now - seen[k][0] < BLKID_RECHECK_S
    }
    ask = [n for n in cands if n not in known]
    found: tuple[BlkidEntry, ...] = tuple(e for e in known.values() if e is not None)
    if ask:
        got = _run_blkid(source, ask, notes)
        if got is None:
            return ()
        by_dev = {e.device: e for e in got}
        for n in ask:
            seen[keys[n]] = (now, by_dev.get(n))
        found += got
    wanted = set(cands)
    out: list[Filesystem] = []
    for ent in found:
        if ent.device not in wanted or not ent.type:
            continue
        if ent.type.endswith("_member") or ent.type in NOT_FILESYSTEMS or ent.usage == "raid":
            continue
        wanted.discard(ent.device)
        out.append(
            Filesystem(
                device=ent.device,
                fstype=ent.type,
                uuid=ent.uuid,
                label=ent.label,
                mountpoints=usage.mountpoints(ent.device),
            )
        )
    return tuple(out)


def _run_blkid(
    source: Source, devices: list[str], notes: list[ProbeNote]
) -> tuple[BlkidEntry, ...] | None:
    """One ``blkid -p`` for ``devices``; None when it could not answer (a note says why)."""
    r = source.run([*BLKID_ARGV, *(f"/dev/{n}" for n in devices)], timeout=BLKID_TIMEOUT)
    if r.returncode == NOT_FOUND:  # no blkid, or a capture made before raidman asked it
        return None
    if r.returncode not in (0, 2):  # 2: some device holds nothing blkid knows
        why = (r.stderr or "").strip().splitlines()
        notes.append(
            ProbeNote(
                "blkid",
                f"unmounted filesystems lsblk does not type are unknown: "
                f"{why[0][:120] if why else f'exit {r.returncode}'}",
                "info",
            )
        )
        return None
    try:
        return parse_blkid_export(r.stdout)
    except ParseError as err:
        notes.append(ProbeNote("blkid", f"cannot read blkid output: {err}", "info"))
        return None


_ATA_PORT = re.compile(r"/(ata[0-9]{1,4})/")


def ata_port(link: str | None) -> str | None:
    """The libata port in a block device's sysfs path (``/sys/dev/block/8:32`` ->
    ``../../devices/pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0/block/sdc``:
    ``ata3``); None for a device not behind libata (NVMe, virtio, USB storage)."""
    m = _ATA_PORT.search(link or "")
    return m.group(1) if m else None


def with_ata_ports(
    source: Source, disks: tuple[Disk, ...], nodes: dict[str, LsblkNode]
) -> tuple[Disk, ...]:
    """Each SCSI disk (``sdX``) with its libata port, from the link of its major:minor under
    /sys/dev/block (an ssh probe has read those links in its one round trip; a replay has what
    its capture recorded). The kernel's "ataN.NN:" lines then name the disk."""
    out = []
    for d in disks:
        node = nodes.get(d.name)
        if d.name.startswith("sd") and node is not None and node.maj_min:
            port = ata_port(source.readlink(f"/sys/dev/block/{node.maj_min}"))
            if port is not None:
                d = replace(d, ata_port=port)
        out.append(d)
    return tuple(out)


def probe(source: Source) -> Machine:
    return probe_with_fs_info(source)[0]


def probe_with_fs_info(source: Source) -> tuple[Machine, dict[str, FsInfo | CommandResult | str]]:
    """The probe, plus each filesystem's geometry reading (see ``read_fs_info``)."""
    notes: list[ProbeNote] = []
    host, kernel = source.uname()
    euid = source.euid()
    taken_at = source.now()

    # ---- lsblk: disks, partitions, filesystems, the device graph ---------------------
    disks: tuple[Disk, ...] = ()
    partitions: tuple[Partition, ...] = ()
    filesystems: tuple[Filesystem, ...] = ()
    nodes: dict[str, LsblkNode] = {}
    edges: list[tuple[str, str]] = []
    lsblk = run_lsblk(source, notes)
    if lsblk is not None:
        try:
            rep = parse_lsblk(lsblk.stdout)
        except ParseError as e:
            notes.append(ProbeNote("lsblk", f"cannot read lsblk output: {e}", "error"))
        else:
            disks, partitions, filesystems = rep.disks, rep.partitions, rep.filesystems
            nodes = {n.name: n for n in rep.nodes}
            disks = with_ata_ports(source, disks, nodes)
            edges.extend(rep.edges)
            for name in getattr(rep, "incomplete", ()):
                notes.append(ProbeNote("lsblk", f"{name}: no start sector: not shown", "info"))

    # ---- md: sysfs first, /proc/mdstat kept for display and as the fallback ------------
    mdstat_text = source.read_text("/proc/mdstat")
    md_links = dev_md_links(source)
    arrays: list[MdArray] = []
    names = md_names(source)
    for name in names:
        arr, md_notes = read_array(source, name, md_links)
        notes.extend(md_notes)
        if arr is not None:
            arrays.append(arr)
    if mdstat_text is not None and (not names or not arrays):
        from app.parsers.mdstat import mdstat_to_arrays, parse_mdstat

        try:
            fallback = mdstat_to_arrays(parse_mdstat(mdstat_text))
        except ParseError as e:
            notes.append(ProbeNote("mdstat", f"cannot read /proc/mdstat: {e}"))
            fallback = ()
        if fallback:
            arrays = list(fallback)
            notes.append(
                ProbeNote("sysfs", "md sysfs unreadable: arrays as /proc/mdstat shows them", "info")
            )
    progress = mdstat_progress(mdstat_text)
    arrays = [replace(a, sync=fresher_progress(a.sync, progress.get(a.name))) for a in arrays]
    for a in arrays:
        for m in a.members:
            edges.append((m.device, a.name))

    # ---- device mapper: LV kernel names, dm-crypt -------------------------------------
    dm = read_dm(source)
    dm_by_name = {d.name: k for k, d in dm.items() if d.name}
    crypts: list[CryptMapping] = []
    for k, d in dm.items():
        for s in d.slaves:
            edges.append((s, k))
        if d.uuid and d.uuid.startswith("CRYPT-"):
            kind = d.uuid.split("-")[1] if d.uuid.count("-") >= 2 else None
            crypts.append(
                CryptMapping(
                    name=d.name or k,
                    kernel_name=k,
                    backing=d.slaves[0] if d.slaves else "",
                    type=kind,
                )
            )
    for n in nodes.values():  # lsblk TYPE crypt without a readable dm/uuid
        if n.type == "crypt" and n.name not in {c.kernel_name for c in crypts}:
            crypts.append(CryptMapping(n.display_name or n.name, n.name, n.pkname or "", None))

    # ---- LVM: one fullreport, only when there is something to report -------------------
    pvs: tuple[PhysicalVolume, ...] = ()
    vgs: tuple[VolumeGroup, ...] = ()
    lvs: tuple[LogicalVolume, ...] = ()
    has_pv = any(n.fstype == "LVM2_member" for n in nodes.values())
    if has_pv or lsblk is None or any(d.uuid and d.uuid.startswith("LVM-") for d in dm.values()):
        report = run_lvm(source, notes)
        if report is not None:
            known = set(nodes) | {a.name for a in arrays} | set(dm)
            pvs = tuple(
                replace(pv, device=_remap_device(pv.device, known, dm_by_name, md_links))
                for pv in report.pvs
            )
            vgs = tuple(report.vgs)
            out_lvs = []
            for lv in report.lvs:
                kname = lv.kernel_name or dm_by_name.get(lv.dm_name)
                devices = tuple(_remap_device(d, known, dm_by_name, md_links) for d in lv.devices)
                out_lvs.append(replace(lv, kernel_name=kname, devices=devices))
            lvs = with_raid_details(
                source,
                tuple(out_lvs),
                notes,
                lambda d: _remap_device(d, known, dm_by_name, md_links),
            )
            if not vgs:
                notes.append(ProbeNote("lvm", "no LVM volume groups", "info"))
    else:
        notes.append(ProbeNote("lvm", "no LVM physical volumes: lvm not run", "info"))

    # ---- the kernel's mounts, swaps and holders (mountpoints authoritative over lsblk's) --
    usage = read_usage(source, {n.maj_min: n.name for n in nodes.values() if n.maj_min})
    mounts_unread = [why for what, why in usage.unread if what == MOUNTS]
    if mounts_unread:
        notes.append(ProbeNote("procfs", f"{mounts_unread[0]}: mountpoints from lsblk"))
    else:
        filesystems = tuple(
            replace(f, mountpoints=usage.mountpoints(f.device)) for f in filesystems
        )
    # swaps/holders that could not be read are not notes: pre-flight refuses and says why
    filesystems, fs_info = read_fs_info(source, filesystems)
    # after the geometry reads: an ssh probe fetches those in its one round trip from lsblk's
    # answer, which does not know these (their block size/stride stay unknown)
    if not mounts_unread:
        filesystems += mounted_untyped(usage, filesystems, set(nodes) | {a.name for a in arrays})
    filesystems += unmounted_untyped(source, nodes, filesystems, edges, usage, notes)

    notes.extend(source.take_notes())
    machine = Machine(
        host=host,
        kernel=kernel,
        disks=disks,
        partitions=partitions,
        arrays=tuple(arrays),
        pvs=pvs,
        vgs=vgs,
        lvs=lvs,
        crypts=tuple(crypts),
        filesystems=filesystems,
        edges=_dedupe(edges),
        notes=tuple(dict.fromkeys(notes)),
        mdstat=mdstat_text,
        taken_at=taken_at,
        is_root=euid == 0,
        usage=usage,
    )
    return machine, fs_info
