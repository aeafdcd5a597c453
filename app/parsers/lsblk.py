"""``lsblk --json --bytes -o LSBLK_COLUMNS``: every block device, its tree and its filesystems.

Handles both JSON flavours: util-linux ≥ 2.37/2.40 (integers, booleans, ``mountpoints`` arrays
that may hold ``null``) and older ones (numbers and flags as strings, a single ``mountpoint``).
``--paths`` output ("/dev/sda", "/dev/mapper/vg-lv") is reduced to kernel names via ``kname``.

lsblk prints a device with several parents (an md array, a dm device on several PVs) once
under *each* parent: ``LsblkReport.nodes`` holds every device once (by kernel name) and
``edges`` holds every (parent, child) pair once, so nothing is lost and nothing doubled.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.model.devices import SECTOR, Disk, Filesystem, Partition
from app.parsers.errors import ParseError
from app.parsers.safe import MAX_INT, ascii_int, check_int, load_json, only_parse_errors

SOURCE = "lsblk"

# What the Linux backend asks for: ``lsblk --json --bytes -o ",".join(LSBLK_COLUMNS)``.
# All exist in util-linux 2.38 (checked with ``lsblk -h`` on Debian 12). PARTN is only in
# ≥ 2.39, so it is NOT requested: the partition number is taken from ``partn`` when a newer
# lsblk prints it and otherwise derived from the kernel name (sda1 -> 1, nvme0n1p2 -> 2;
# /sys/class/block/<part>/partition is the authority if a backend needs more).
LSBLK_COLUMNS: tuple[str, ...] = (
    "NAME",
    "KNAME",
    "PKNAME",
    "TYPE",
    "SIZE",
    "START",
    "MODEL",
    "SERIAL",
    "VENDOR",
    "WWN",
    "ROTA",
    "TRAN",
    "LOG-SEC",
    "PHY-SEC",
    "MIN-IO",
    "OPT-IO",
    "ALIGNMENT",
    "DISC-GRAN",
    "DISC-MAX",
    "SCHED",
    "RM",
    "RO",
    "PTTYPE",
    "PTUUID",
    "PARTTYPE",
    "PARTTYPENAME",
    "PARTLABEL",
    "PARTUUID",
    "FSTYPE",
    "FSVER",
    "UUID",
    "LABEL",
    "FSSIZE",
    "FSUSED",
    "FSAVAIL",
    "MOUNTPOINTS",
    "MAJ:MIN",
)

DISK_TYPES = frozenset({"disk", "loop", "rom"})
# signatures that mark a device as a building block, not a filesystem one mounts
NOT_FILESYSTEMS = frozenset({"crypto_LUKS", "BitLocker"})


@dataclass(frozen=True, slots=True)
class LsblkNode:
    """One block device as lsblk describes it (names are kernel names, strings trimmed)."""

    name: str  # kernel name (sda, nvme0n1p2, dm-0, md127)
    display_name: str  # lsblk NAME without /dev/ (e.g. "vg-root" for a dm device)
    type: str  # disk, part, loop, rom, raid1, lvm, crypt, ...
    size_bytes: int | None
    maj_min: str | None = None
    pkname: str | None = None
    fstype: str | None = None
    fsver: str | None = None
    uuid: str | None = None
    label: str | None = None
    mountpoints: tuple[str, ...] = ()
    fssize: int | None = None
    fsused: int | None = None
    fsavail: int | None = None
    start: int | None = None  # 512-byte sectors
    partn: int | None = None
    parttype: str | None = None
    parttypename: str | None = None
    partlabel: str | None = None
    partuuid: str | None = None
    pttype: str | None = None
    ptuuid: str | None = None
    model: str | None = None
    serial: str | None = None
    vendor: str | None = None
    wwn: str | None = None
    rota: bool | None = None
    tran: str | None = None
    log_sec: int | None = None
    phy_sec: int | None = None
    min_io: int | None = None
    opt_io: int | None = None
    alignment: int | None = None
    disc_gran: int | None = None
    disc_max: int | None = None
    sched: str | None = None
    rm: bool | None = None
    ro: bool | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class LsblkReport:
    nodes: tuple[LsblkNode, ...]
    disks: tuple[Disk, ...]
    partitions: tuple[Partition, ...]
    filesystems: tuple[Filesystem, ...]
    edges: tuple[tuple[str, str], ...]  # (parent kernel name, child kernel name)
    # partitions lsblk printed without START (older output, or a column list without it): they
    # are in ``nodes`` but not in ``partitions``; the backend can read /sys/class/block/*/start
    incomplete: tuple[str, ...] = ()

    def node(self, name: str) -> LsblkNode | None:
        for n in self.nodes:
            if n.name == name:
                return n
        return None

    def children_of(self, name: str) -> tuple[str, ...]:
        return tuple(c for p, c in self.edges if p == name)

    def parents_of(self, name: str) -> tuple[str, ...]:
        return tuple(p for p, c in self.edges if c == name)


# ---- value coercion (both JSON flavours) ------------------------------------------------------


def _str(v: Any) -> str | None:
    if v is None:
        return None
    s = str(v).strip()
    return s or None


def _int(v: Any, key: str, who: str) -> int | None:
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        raise ParseError(SOURCE, f"{who}: {key} is a boolean, expected a number")
    if isinstance(v, int):
        return check_int(v, SOURCE, f"{who}: {key}", minimum=-MAX_INT + 1)
    if isinstance(v, str) and (n := ascii_int(v, signed=True)) is not None:
        return n
    raise ParseError(SOURCE, f"{who}: {key}={v!r} is not a number")


def _bool(v: Any, key: str, who: str) -> bool | None:
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return v
    if v in ("0", 0):
        return False
    if v in ("1", 1):
        return True
    raise ParseError(SOURCE, f"{who}: {key}={v!r} is not a boolean")


def _kernel_name(v: Any) -> str | None:
    s = _str(v)
    if s is None:
        return None
    return s.rsplit("/", 1)[-1] if s.startswith("/dev/") else s


def _mountpoints(d: Mapping[str, Any]) -> tuple[str, ...]:
    mps = d.get("mountpoints")
    if isinstance(mps, list):
        return tuple(m for m in mps if isinstance(m, str) and m)
    mp = d.get("mountpoint")
    return (mp,) if isinstance(mp, str) and mp else ()


def _node(d: Any) -> LsblkNode:
    if not isinstance(d, dict):
        raise ParseError(SOURCE, f"a device entry is {type(d).__name__}, not an object")
    kname = _kernel_name(d.get("kname")) or _kernel_name(d.get("name"))
    if kname is None:
        raise ParseError(SOURCE, "a device entry has neither name nor kname")
    typ = _str(d.get("type"))
    if typ is None:
        raise ParseError(SOURCE, f"{kname}: no type")
    name = _str(d.get("name")) or kname
    if name.startswith("/dev/"):
        name = name[len("/dev/") :]
        name = name.removeprefix("mapper/")
    return LsblkNode(
        name=kname,
        display_name=name,
        type=typ,
        size_bytes=_int(d.get("size"), "size", kname),
        maj_min=_str(d.get("maj:min")),
        pkname=_kernel_name(d.get("pkname")),
        fstype=_str(d.get("fstype")),
        fsver=_str(d.get("fsver")),
        uuid=_str(d.get("uuid")),
        label=_str(d.get("label")),
        mountpoints=_mountpoints(d),
        fssize=_int(d.get("fssize"), "fssize", kname),
        fsused=_int(d.get("fsused"), "fsused", kname),
        fsavail=_int(d.get("fsavail"), "fsavail", kname),
        start=_int(d.get("start"), "start", kname),
        partn=_int(d.get("partn"), "partn", kname),
        parttype=_str(d.get("parttype")),
        parttypename=_str(d.get("parttypename")),
        partlabel=_str(d.get("partlabel")),
        partuuid=_str(d.get("partuuid")),
        pttype=_str(d.get("pttype")),
        ptuuid=_str(d.get("ptuuid")),
        model=_str(d.get("model")),
        serial=_str(d.get("serial")),
        vendor=_str(d.get("vendor")),
        wwn=_str(d.get("wwn")),
        rota=_bool(d.get("rota"), "rota", kname),
        tran=_str(d.get("tran")),
        log_sec=_int(d.get("log-sec"), "log-sec", kname),
        phy_sec=_int(d.get("phy-sec"), "phy-sec", kname),
        min_io=_int(d.get("min-io"), "min-io", kname),
        opt_io=_int(d.get("opt-io"), "opt-io", kname),
        alignment=_int(d.get("alignment"), "alignment", kname),
        disc_gran=_int(d.get("disc-gran"), "disc-gran", kname),
        disc_max=_int(d.get("disc-max"), "disc-max", kname),
        sched=_str(d.get("sched")),
        rm=_bool(d.get("rm"), "rm", kname),
        ro=_bool(d.get("ro"), "ro", kname),
        raw={k: v for k, v in d.items() if k != "children"},
    )


_TRAILING_NUM = re.compile(r"(\d+)$")


def partition_number(name: str, parent: str | None) -> int | None:
    """sda1 -> 1, nvme0n1p2 -> 2, mmcblk0p1 -> 1, md126p3 -> 3 (None when it cannot tell)."""
    if parent and name.startswith(parent) and len(name) > len(parent):
        rest = name[len(parent) :]
        if rest[0] == "p" and parent[-1].isdigit():
            rest = rest[1:]
        return ascii_int(rest)
    m = _TRAILING_NUM.search(name)
    return ascii_int(m.group(1)) if m else None


def _disk(n: LsblkNode) -> Disk:
    return Disk(
        name=n.name,
        size_bytes=n.size_bytes or 0,
        model=n.model,
        serial=n.serial,
        vendor=n.vendor,
        wwn=n.wwn,
        rotational=n.rota,
        transport=n.tran,
        kind=n.type,
        logical_sector=n.log_sec or SECTOR,
        physical_sector=n.phy_sec or SECTOR,
        min_io=n.min_io or SECTOR,
        optimal_io=n.opt_io or 0,
        alignment_offset=n.alignment or 0,
        discard_granularity=n.disc_gran or 0,
        discard_max_bytes=n.disc_max or 0,
        scheduler=n.sched,
        removable=bool(n.rm),
        read_only=bool(n.ro),
        partition_table=n.pttype,
        ptuuid=n.ptuuid,
    )


def _partition(n: LsblkNode, parent: str | None) -> Partition | None:
    if parent is None:
        raise ParseError(SOURCE, f"partition {n.name} has no parent (no pkname, not nested)")
    if n.start is None:
        return None
    return Partition(
        name=n.name,
        parent=parent,
        number=n.partn if n.partn is not None else partition_number(n.name, parent),
        start_sector=n.start,
        size_bytes=n.size_bytes or 0,
        type=n.parttype,
        type_name=n.parttypename,
        label=n.partlabel,
        uuid=n.partuuid,
        alignment_offset=n.alignment or 0,
    )


def _filesystem(n: LsblkNode) -> Filesystem | None:
    if n.fstype is None or n.fstype.endswith("_member") or n.fstype in NOT_FILESYSTEMS:
        return None
    return Filesystem(
        device=n.name,
        fstype=n.fstype,
        uuid=n.uuid,
        label=n.label,
        mountpoints=n.mountpoints,
        size_bytes=n.fssize,
        used_bytes=n.fsused,
        avail_bytes=n.fsavail,
    )


def _walk(
    entries: Iterable[Any],
    parent: str | None,
    nodes: dict[str, LsblkNode],
    edges: dict[tuple[str, str], None],
    tree_parent: dict[str, str],
) -> None:
    for d in entries:
        n = _node(d)
        nodes.setdefault(n.name, n)
        if parent is not None:
            edges[(parent, n.name)] = None
            tree_parent.setdefault(n.name, parent)
        elif n.pkname is not None:
            edges[(n.pkname, n.name)] = None  # a partial listing (lsblk /dev/sda1)
            tree_parent.setdefault(n.name, n.pkname)
        children = d.get("children", [])
        if not isinstance(children, list):
            raise ParseError(SOURCE, f"{n.name}: 'children' is not a list")
        _walk(children, n.name, nodes, edges, tree_parent)


@only_parse_errors(SOURCE)
def parse_lsblk(text: str) -> LsblkReport:
    """Parse ``lsblk --json --bytes`` output (any column set that includes NAME/KNAME and TYPE)."""
    doc = load_json(text, SOURCE)
    if not isinstance(doc, dict) or not isinstance(doc.get("blockdevices"), list):
        raise ParseError(SOURCE, "no 'blockdevices' list")
    nodes: dict[str, LsblkNode] = {}
    edges: dict[tuple[str, str], None] = {}
    tree_parent: dict[str, str] = {}
    _walk(doc["blockdevices"], None, nodes, edges, tree_parent)
    disks = tuple(_disk(n) for n in nodes.values() if n.type in DISK_TYPES)
    parts: list[Partition] = []
    incomplete: list[str] = []
    for n in nodes.values():
        if n.type == "part":
            p = _partition(n, n.pkname or tree_parent.get(n.name))
            if p is None:
                incomplete.append(n.name)
            else:
                parts.append(p)
    fss = tuple(f for n in nodes.values() if (f := _filesystem(n)) is not None)
    return LsblkReport(
        nodes=tuple(nodes.values()),
        disks=disks,
        partitions=tuple(parts),
        filesystems=fss,
        edges=tuple(edges),
        incomplete=tuple(incomplete),
    )
