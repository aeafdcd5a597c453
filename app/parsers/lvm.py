"""LVM JSON reports: ``lvm fullreport`` and the separate ``pvs``/``vgs``/``lvs`` reports.

Expected invocation: ``--reportformat json --units b --nosuffix`` (all values are JSON strings;
empty string = not applicable). Values with a unit suffix ("1048576B", "<1.82t") and
``json_std`` numbers are accepted too.

``lvm fullreport`` prints one report object per VG: ``{"vg": [...], "pv": [...], "lv": [...],
"pvseg": [...], "seg": [...]}``; its pv/lv rows (``pv_all``/``lv_all``) carry no ``vg_name``,
the VG is the entry's one ``vg`` row; orphan PVs come in an entry whose ``vg`` list is empty.
Segments are joined to LVs by ``lv_uuid``.

Non-strict JSON: a trailing comma before ``]`` or ``}`` (libstorage-ng test inputs; json-c
accepts it) is tolerated: strict parsing is tried first, then once more with such commas
removed outside of strings. Anything else malformed raises ``ParseError``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.model.devices import LogicalVolume, PhysicalVolume, VolumeGroup
from app.parsers.errors import ParseError
from app.parsers.lvm_raid import link_images, raid_of_row
from app.parsers.safe import (
    MAX_INT,
    ascii_float,
    ascii_int,
    check_int,
    load_json,
    only_parse_errors,
)

SOURCE = "lvm"

Row = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class LvmSegment:
    vg: str
    lv: str  # name without brackets
    segtype: str
    stripes: int | None = None
    stripe_size: int | None = None
    start_bytes: int | None = None
    size_bytes: int | None = None
    devices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LvmReport:
    pvs: tuple[PhysicalVolume, ...] = ()
    vgs: tuple[VolumeGroup, ...] = ()
    lvs: tuple[LogicalVolume, ...] = ()
    segments: tuple[LvmSegment, ...] = ()  # every segment, in report order

    def segments_of(self, vg: str, lv: str) -> tuple[LvmSegment, ...]:
        return tuple(s for s in self.segments if s.vg == vg and s.lv == lv)


# ---- JSON and values -------------------------------------------------------------------------


def strip_trailing_commas(text: str) -> str:
    """Remove commas that directly precede ``]`` or ``}`` (whitespace between allowed),
    leaving string contents untouched."""
    out: list[str] = []
    in_str = esc = False
    pending: int | None = None  # index in out of a comma that may be trailing
    for ch in text:
        if in_str:
            out.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch in "]}" and pending is not None:
            out[pending] = ""
        if not ch.isspace():
            pending = None
        if ch == '"':
            in_str = True
        if ch == ",":
            pending = len(out)
        out.append(ch)
    return "".join(out)


def _load(text: str) -> list[Row]:
    try:
        doc = load_json(text, SOURCE)
    except ParseError:
        doc = load_json(strip_trailing_commas(text), SOURCE)
    if not isinstance(doc, dict) or not isinstance(doc.get("report"), list):
        raise ParseError(SOURCE, "no 'report' list")
    entries = doc["report"]
    for entry in entries:
        if not isinstance(entry, dict):
            raise ParseError(SOURCE, "a report entry is not an object")
    return entries


def _rows(entry: Row, key: str) -> list[Row]:
    rows = entry.get(key, [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ParseError(SOURCE, f"'{key}' is not a list of objects")
    return rows


_SIZE_RE = re.compile(r"^[<>]?([0-9]{1,20}(?:\.[0-9]{1,20})?)([bBsSkKmMgGtTpPeE]?)$", re.ASCII)
_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}


def to_bytes(v: Any, key: str = "value") -> int | None:
    """ "1048576", "1048576B", "512s", "<1.82t", "4.00m" -> bytes; "" / None -> None."""
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        raise ParseError(SOURCE, f"{key}={v!r} is not a size")
    if isinstance(v, int):
        return check_int(v, SOURCE, key)
    if isinstance(v, float):
        return check_int(round(v), SOURCE, key)
    m = _SIZE_RE.match(str(v).strip())
    if not m:
        raise ParseError(SOURCE, f"{key}={v!r} is not a size")
    num, unit = m.groups()
    if unit in ("", "b", "B"):
        mult = 1
    elif unit in ("s", "S"):
        mult = 512
    elif unit.islower():
        mult = 1024 ** _POWERS[unit]
    else:
        mult = 1000 ** _POWERS[unit.lower()]
    size = float(num) * mult
    if not math.isfinite(size):
        raise ParseError(SOURCE, f"{key}={v!r} is not a size")
    return check_int(round(size), SOURCE, key)


def _int(v: Any, key: str) -> int | None:
    if v is None or v == "":
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        return check_int(v, SOURCE, key, minimum=-MAX_INT + 1)
    n = ascii_int(str(v), signed=True)
    if n is not None:
        return n
    raise ParseError(SOURCE, f"{key}={v!r} is not a number")


def _float(v: Any, key: str) -> float | None:
    if v is None or v == "":
        return None
    f = ascii_float(str(v).rstrip("%"))
    if f is None:
        raise ParseError(SOURCE, f"{key}={v!r} is not a number")
    return f


def _str(v: Any) -> str | None:
    if v is None:
        return None
    s = str(v)
    return s if s != "" else None


def _unbracket(name: str) -> str:
    return name[1:-1] if name.startswith("[") and name.endswith("]") else name


def _dev_name(path: str) -> str:
    """ "/dev/md127" -> "md127", "/dev/mapper/vg-lv" -> "vg-lv" (the backend maps those to dm-N)."""
    return path.rsplit("/", 1)[-1] if path.startswith("/") else path


_DEVICE_ITEM = re.compile(r"^(.*?)(?:\((\d+)\))?$")


def parse_devices(v: Any) -> tuple[str, ...]:
    """ "/dev/sda(0),/dev/sdb(0)" -> ("sda", "sdb"); "[pool_tdata](0)" -> ("pool_tdata",)."""
    s = _str(v)
    if s is None:
        return ()
    out: list[str] = []
    for item in s.split(","):
        item = item.strip()
        if not item:
            continue
        m = _DEVICE_ITEM.match(item)
        base = _dev_name(m.group(1) if m else item)
        name = base if base == "[unknown]" else _unbracket(base)
        if name and name not in out:
            out.append(name)
    return tuple(out)


# ---- rows -> model ---------------------------------------------------------------------------


def _pv(row: Row, vg: str | None) -> PhysicalVolume | None:
    name = _str(row.get("pv_name"))
    if name is None:
        raise ParseError(SOURCE, "a PV row has no pv_name")
    uuid = _str(row.get("pv_uuid"))
    if uuid is None and "pv_uuid" in row:
        return None  # `pvs -a` lists every block device; one without a PV uuid is no PV
    attr = _str(row.get("pv_attr")) or ""
    missing = (
        name == "[unknown]"
        or (len(attr) >= 3 and attr[2] == "m")
        or _str(row.get("pv_missing")) == "missing"
    )
    row_vg = _str(row.get("vg_name"))
    return PhysicalVolume(
        device="[unknown]" if name == "[unknown]" else _dev_name(name),
        vg=row_vg if row_vg is not None else vg,
        size_bytes=to_bytes(row.get("pv_size"), "pv_size") or 0,
        free_bytes=to_bytes(row.get("pv_free"), "pv_free"),
        pe_start=to_bytes(row.get("pe_start"), "pe_start"),
        uuid=uuid,
        missing=missing,
    )


def _vg(row: Row) -> VolumeGroup:
    name = _str(row.get("vg_name"))
    if name is None:
        raise ParseError(SOURCE, "a VG row has no vg_name")
    extent = to_bytes(row.get("vg_extent_size"), "vg_extent_size")
    count = _int(row.get("vg_extent_count"), "vg_extent_count")
    free_count = _int(row.get("vg_free_count"), "vg_free_count")
    size = to_bytes(row.get("vg_size"), "vg_size")
    free = to_bytes(row.get("vg_free"), "vg_free")
    if size is None and extent is not None and count is not None:
        size = extent * count
    if free is None and extent is not None and free_count is not None:
        free = extent * free_count
    if extent is None:
        raise ParseError(SOURCE, f"VG {name}: no vg_extent_size")
    return VolumeGroup(
        name=name,
        size_bytes=size or 0,
        free_bytes=free or 0,
        extent_size=extent,
        extent_count=count,
        free_count=free_count,
        uuid=_str(row.get("vg_uuid")),
        pv_count=_int(row.get("pv_count"), "pv_count"),
        lv_count=_int(row.get("lv_count"), "lv_count"),
    )


_ATTR_TYPES = {
    "t": "thin-pool",
    "V": "thin",
    "m": "mirror",
    "M": "mirror",
    "r": "raid",
    "R": "raid",
    "C": "cache",
    "s": "snapshot",
    "S": "snapshot",
    "v": "virtual",
    "d": "vdo-pool",
    "p": "pvmove",
}


def _segment(row: Row, vg: str, lv: str) -> LvmSegment | None:
    segtype = _str(row.get("segtype"))
    stripes = _int(row.get("stripes"), "stripes")
    stripe_size = to_bytes(row.get("stripe_size"), "stripe_size")
    devices = parse_devices(row.get("devices"))
    if segtype is None and stripes is None and stripe_size is None and not devices:
        return None
    return LvmSegment(
        vg=vg,
        lv=lv,
        segtype=segtype or "",
        stripes=stripes,
        stripe_size=stripe_size,
        start_bytes=to_bytes(row.get("seg_start"), "seg_start"),
        size_bytes=to_bytes(row.get("seg_size"), "seg_size"),
        devices=devices,
    )


def _build_lv(row: Row, vg: str, segs: list[LvmSegment]) -> LogicalVolume:
    raw_name = _str(row.get("lv_name"))
    if raw_name is None:
        raise ParseError(SOURCE, "an LV row has no lv_name")
    name = _unbracket(raw_name)
    attr = _str(row.get("lv_attr")) or ""
    size = to_bytes(row.get("lv_size"), "lv_size")
    if size is None:
        raise ParseError(SOURCE, f"LV {vg}/{name}: no lv_size")
    # segment type: a thick snapshot is reported with its COW's "linear" segtype
    seg_types = [s.segtype for s in segs if s.segtype]
    if attr[:1] in ("s", "S"):
        segtype = "snapshot"
    elif seg_types:
        segtype = seg_types[0]
    else:
        segtype = _ATTR_TYPES.get(attr[:1], "linear")
        if segtype == "linear" and any((s.stripes or 1) > 1 for s in segs):
            segtype = "striped"
    stripes_set = {s.stripes for s in segs if s.stripes is not None}
    sizes_set = {s.stripe_size for s in segs if s.stripe_size is not None}
    minor = _int(row.get("lv_kernel_minor"), "lv_kernel_minor")
    devices: list[str] = []
    for s in segs:
        devices.extend(d for d in s.devices if d not in devices)
    pool = _str(row.get("pool_lv"))
    origin = _str(row.get("origin"))
    return LogicalVolume(
        name=name,
        vg=vg,
        size_bytes=size,
        segtype=segtype,
        attr=attr,
        kernel_name=f"dm-{minor}" if minor is not None and minor >= 0 else None,
        uuid=_str(row.get("lv_uuid")),
        active=len(attr) >= 5 and attr[4] == "a",
        hidden=raw_name.startswith("["),
        pool=_unbracket(pool) if pool else None,
        origin=_unbracket(origin) if origin else None,
        stripes=stripes_set.pop() if len(stripes_set) == 1 else None,
        stripe_size=sizes_set.pop() if len(sizes_set) == 1 else None,
        data_percent=_float(row.get("data_percent"), "data_percent"),
        devices=tuple(devices),
        raid=raid_of_row(row, segtype, attr),
    )


def _lvs_from_rows(
    lv_rows: list[Row], seg_rows: list[Row], entry_vg: str | None
) -> tuple[list[LogicalVolume], list[LvmSegment]]:
    """LV rows (several rows of one LV = its segments, as ``lvs --segments`` or parse4 print)
    plus, for fullreport, seg rows joined by lv_uuid."""
    order: list[tuple[str, str]] = []
    first: dict[tuple[str, str], Row] = {}
    segs: dict[tuple[str, str], list[LvmSegment]] = {}
    by_uuid: dict[str, tuple[str, str]] = {}
    all_segs: list[LvmSegment] = []
    for row in lv_rows:
        vg = _str(row.get("vg_name")) or entry_vg
        raw = _str(row.get("lv_name"))
        if vg is None:
            full = _str(row.get("lv_full_name"))
            vg = full.split("/", 1)[0] if full and "/" in full else None
        if vg is None or raw is None:
            raise ParseError(SOURCE, f"LV row without VG or name: {dict(row)!r}")
        uuid = _str(row.get("lv_uuid"))
        key = (vg, uuid or _unbracket(raw))
        if key not in first:
            first[key] = row
            order.append(key)
            segs[key] = []
            if uuid:
                by_uuid[uuid] = key
        seg = _segment(row, vg, _unbracket(raw))
        if seg is not None:
            segs[key].append(seg)
            all_segs.append(seg)
    for row in seg_rows:
        uuid = _str(row.get("lv_uuid"))
        if uuid is None or uuid not in by_uuid:
            raise ParseError(SOURCE, f"segment of unknown LV (lv_uuid={uuid!r})")
        key = by_uuid[uuid]
        seg = _segment(row, key[0], _unbracket(_str(first[key].get("lv_name")) or ""))
        if seg is not None:
            segs[key].append(seg)
            all_segs.append(seg)
    lvs = list(link_images(_build_lv(first[k], k[0], segs[k]) for k in order))
    return lvs, all_segs


@only_parse_errors(SOURCE)
def parse_fullreport(text: str) -> LvmReport:
    """``lvm fullreport --reportformat json --units b --nosuffix``."""
    pvs: list[PhysicalVolume] = []
    vgs: list[VolumeGroup] = []
    lvs: list[LogicalVolume] = []
    segs: list[LvmSegment] = []
    for entry in _load(text):
        vg_rows = _rows(entry, "vg")
        if len(vg_rows) > 1:
            raise ParseError(SOURCE, "a fullreport entry with more than one VG")
        vg = _vg(vg_rows[0]) if vg_rows else None
        if vg is not None:
            vgs.append(vg)
        vg_name = vg.name if vg else None
        pvs.extend(p for r in _rows(entry, "pv") if (p := _pv(r, vg_name)) is not None)
        lv_rows = _rows(entry, "lv")
        if lv_rows and vg_name is None:
            raise ParseError(SOURCE, "LVs in a report entry without a VG")
        e_lvs, e_segs = _lvs_from_rows(lv_rows, _rows(entry, "seg"), vg_name)
        lvs.extend(e_lvs)
        segs.extend(e_segs)
    return LvmReport(tuple(pvs), tuple(vgs), tuple(lvs), tuple(segs))


@only_parse_errors(SOURCE)
def parse_pvs(text: str) -> tuple[PhysicalVolume, ...]:
    """``pvs --reportformat json --units b --nosuffix [-a]`` (rows need pv_name; vg_name "" = orphan)."""
    out: list[PhysicalVolume] = []
    for entry in _load(text):
        out.extend(p for r in _rows(entry, "pv") if (p := _pv(r, None)) is not None)
    return tuple(out)


@only_parse_errors(SOURCE)
def parse_vgs(text: str) -> tuple[VolumeGroup, ...]:
    return tuple(_vg(r) for entry in _load(text) for r in _rows(entry, "vg"))


@only_parse_errors(SOURCE)
def parse_lvs(text: str) -> LvmReport:
    """``lvs --reportformat json --units b --nosuffix [-a] [--segments]``: rows of one LV merge."""
    lvs: list[LogicalVolume] = []
    segs: list[LvmSegment] = []
    for entry in _load(text):
        e_lvs, e_segs = _lvs_from_rows(_rows(entry, "lv"), _rows(entry, "seg"), None)
        lvs.extend(e_lvs)
        segs.extend(e_segs)
    return LvmReport(lvs=tuple(lvs), segments=tuple(segs))
