"""SMART write and wear counters -> bytes and "percent of rated life used". Pure functions.

The unit of an ATA attribute is what its name (from smartmontools' drive database) says:

=============================================  ==================  ============================
name (any id)                                  unit                bytes per raw unit
=============================================  ==================  ============================
Total_LBAs_Written, Total_Host_Sector_Write,   LBA                 the logical sector size
Host_Writes_LBAs (241, Micron/Crucial 246)
Host_Writes_32MiB (Intel 241/225)              32 MiB              33,554,432
Host_Writes_MiB / _GiB, Lifetime_Writes_GiB,   MiB / GiB           1,048,576 / 1,073,741,824
Total_Writes_GiB
*_GB (Total_Writes_GB, ...)                    GB                  None: 10^9 or 2^30 is not said
Host_Writes, Lifetime_Writes, Total_Writes     unknown             None
NAND_Writes_1GiB / _32MiB, Flash_Writes_GiB,   (NAND, not host)    as the suffix says; used only
TLC_Writes_32MiB, NAND_Writes                                      when no host counter exists
=============================================  ==================  ============================

NVMe ``data_units_written`` is in units of 1000 × 512 bytes (NVMe base spec, "Data Units Written").
SCSI ``gigabytes_processed`` of the write error counter log is in 10^9 bytes.

Unknown units are never guessed: the counter is returned with ``bytes=None`` and the raw value.
A short table of model quirks (below) withholds the bytes where the drive database's name is known
not to match what the firmware counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from app.model.endurance import Rating, rated_tbw
from app.model.sizes import human_bytes
from app.model.smart import SmartAttribute, SmartReading

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB
NVME_DATA_UNIT = 512_000


@dataclass(frozen=True, slots=True)
class WriteCounter:
    """A disk's lifetime write counter. ``bytes`` is None when the unit is not known."""

    bytes: int | None
    raw: int
    source: (
        str  # "241 Total_LBAs_Written", "nvme:data_units_written", "scsi:write.gigabytes_processed"
    )
    unit: str  # "LBA×512", "32 MiB", "GiB", "512,000 B", "10^9 B", "unknown"
    kind: str = "host"  # "host" (what the host sent) or "nand" (what the flash wrote)
    note: str | None = None  # why bytes is None, when a quirk applies
    # bytes per step of the counter (its granularity): 512,000 for NVMe, the sector for LBAs;
    # None when the unit is not known
    unit_bytes: int | None = None


@dataclass(frozen=True, slots=True)
class WearCounter:
    """Rated life used, 0..100 (can exceed 100 on NVMe)."""

    used_percent: int
    source: str  # "177 Wear_Leveling_Count", "nvme:percentage_used"
    normalized: int | None = None  # the ATA normalized value it came from


# (regex on the model, attribute id) -> why the name's unit cannot be trusted for that model
_QUIRKS: tuple[tuple[re.Pattern[str], frozenset[int], str], ...] = (
    (
        re.compile(r"^SSDSCKJB"),
        frozenset({233, 241}),
        "Dell-firmware Intel S3520: smartctl names it Total_LBAs_Written but the count is far too "
        "small for 512-byte LBAs (129,493 after 21,213 power-on hours); unit unknown",
    ),
    (
        re.compile(r"^WDC\s+WDS\d"),
        frozenset({241, 242}),
        "WD SSD: smartctl names it Total_LBAs_Written, WD firmware counts larger units (GiB per "
        "netdata's note); unit not confirmed",
    ),
)


def _size_suffix(name: str) -> tuple[int | None, str] | None:
    """Bytes per unit from a name's suffix, or None if the name has no size suffix."""
    n = name.lower()
    m = re.search(r"_(\d*)(mib|gib|gb|mb|tib)$", n)
    if not m:
        return None
    mult = int(m.group(1)) if m.group(1) else 1
    unit = m.group(2)
    label = f"{mult} {unit.replace('ib', 'iB').upper().replace('IB', 'iB')}" if mult != 1 else ""
    if unit == "mib":
        return mult * MiB, label or "MiB"
    if unit == "gib":
        return mult * GiB, label or "GiB"
    if unit == "tib":
        return mult * 1024 * GiB, label or "TiB"
    # "GB"/"MB": decimal or binary? drivedb does not say -> do not guess
    return None, f"{m.group(1)}{unit.upper()} (10^n or 2^n not stated)"


_LBA_NAMES = ("total_lbas_written", "total_host_sector_write", "host_writes_lbas", "lbas_written")
_NAND_WORDS = ("nand_writes", "flash_writes", "tlc_writes", "slc_writes", "nand_written")
_HOST_WORDS = (
    "host_writes",
    "lifetime_writes",
    "total_writes",
    "total_lbas_written",
    "host_sector_write",
)


def _classify(attr: SmartAttribute, sector: int) -> WriteCounter | None:
    name = attr.name
    n = name.lower()
    raw = attr.raw
    if raw is None:
        return None
    source = f"{attr.id} {name}"
    if any(w in n for w in _NAND_WORDS):
        kind = "nand"
    elif any(w in n for w in _HOST_WORDS) or n in _LBA_NAMES:
        kind = "host"
    else:
        return None
    if n in _LBA_NAMES or "lbas" in n or "sector_write" in n:
        return WriteCounter(raw * sector, raw, source, f"LBA×{sector}", kind, unit_bytes=sector)
    suffix = _size_suffix(name)
    if suffix is not None:
        per, label = suffix
        return WriteCounter(raw * per if per else None, raw, source, label, kind, unit_bytes=per)
    return WriteCounter(None, raw, source, "unknown", kind)


def _quirk(reading: SmartReading, attr_id: int) -> str | None:
    model = reading.model or ""
    for rx, ids, why in _QUIRKS:
        if attr_id in ids and rx.search(model):
            return why
    return None


def _scsi_step(text: str) -> int:
    """smartctl prints SCSI gigabytes processed with decimals ("1234.567"): one step of the
    last digit, in bytes."""
    try:
        exp = Decimal(text.strip()).as_tuple().exponent
    except (InvalidOperation, AttributeError):
        return 1_000_000_000
    return 1_000_000_000 if not isinstance(exp, int) else 10 ** max(0, 9 + min(exp, 0))


def _scsi_bytes(text: str) -> int | None:
    try:
        d = Decimal(text.strip())
    except (InvalidOperation, AttributeError):
        return None
    if d < 0:
        return None
    return int(d * 1_000_000_000)


def bytes_written(reading: SmartReading) -> WriteCounter | None:
    """The disk's lifetime host-write counter, in bytes where its unit is known."""
    if reading.nvme.get("data_units_written") is not None:
        du = reading.nvme["data_units_written"]
        return WriteCounter(
            du * NVME_DATA_UNIT,
            du,
            "nvme:data_units_written",
            "512,000 B",
            unit_bytes=NVME_DATA_UNIT,
        )
    if reading.scsi_gigabytes_written is not None:
        b = _scsi_bytes(reading.scsi_gigabytes_written)
        if b is not None:
            return WriteCounter(
                b,
                b // 1_000_000_000,
                "scsi:write.gigabytes_processed",
                "10^9 B",
                unit_bytes=_scsi_step(reading.scsi_gigabytes_written),
            )
    sector = reading.logical_sector or 512
    candidates: list[WriteCounter] = []
    for a in reading.attributes:
        c = _classify(a, sector)
        if c is None:
            continue
        why = _quirk(reading, a.id)
        if why is not None:
            c = WriteCounter(None, c.raw, c.source, "unknown", c.kind, why)
        candidates.append(c)
    if not candidates:
        return None

    def rank(c: WriteCounter) -> tuple[int, int, int]:
        aid = int(c.source.split(" ", 1)[0])
        pref = {241: 0, 246: 1, 225: 2}.get(aid, 3)
        return (0 if c.kind == "host" else 1, 0 if c.bytes is not None else 1, pref)

    return sorted(candidates, key=rank)[0]


_WEAR_RULES: tuple[tuple[int | None, str, str], ...] = (
    # (id or None for any, name (lower), how): "used=100-v" or "used=100-raw"
    (177, "wear_leveling_count", "100-v"),
    (233, "media_wearout_indicator", "100-v"),
    (202, "percent_lifetime_remain", "100-v"),
    # Phison (Kingston KC400/A400): raw = life left %, the normalized value can stay at 100
    # (KC400 in the corpus: normalized 100, raw 74, Average_Erase_Count 808) -> the smaller one
    (231, "ssd_life_left", "100-min"),
    (None, "percent_life_remaining", "100-v"),
    (None, "remaining_lifetime_perc", "100-raw"),
    (None, "percent_lifetime_used", "raw"),
)


def wear_used_percent(reading: SmartReading) -> WearCounter | None:
    """Percent of rated endurance used (NVMe percentage_used; ATA 177/233/202/231 normalized)."""
    if reading.nvme.get("percentage_used") is not None:
        return WearCounter(reading.nvme["percentage_used"], "nvme:percentage_used")
    for rule_id, rule_name, how in _WEAR_RULES:
        for a in reading.attributes:
            if a.name.lower() != rule_name or (rule_id is not None and a.id != rule_id):
                continue
            if how == "100-v" and a.value is not None and 0 <= a.value <= 100:
                return WearCounter(100 - a.value, f"{a.id} {a.name}", a.value)
            if how == "100-min" and a.value is not None and 0 <= a.value <= 100:
                left = a.value
                if a.raw is not None and 0 <= a.raw <= 100:
                    left = min(left, a.raw)
                return WearCounter(100 - left, f"{a.id} {a.name}", a.value)
            if how == "100-raw" and a.raw is not None and 0 <= a.raw <= 100:
                return WearCounter(100 - a.raw, f"{a.id} {a.name}", a.value)
            if how == "raw" and a.raw is not None and 0 <= a.raw <= 200:
                return WearCounter(a.raw, f"{a.id} {a.name}", a.value)
    return None


@dataclass(frozen=True, slots=True)
class TbwUsed:
    """Host bytes written against the model's rated TBW (``app.model.endurance``)."""

    bytes_written: int
    rating: Rating
    counter: str  # the SMART counter the bytes come from ("241 Total_LBAs_Written")

    @property
    def used_percent(self) -> int:
        return round(100 * self.bytes_written / self.rating.bytes)

    @property
    def text(self) -> str:
        """ "374.7 TiB written of 150 TBW rated (136.4 TiB) = 275%": the app's units (IEC, as
        the report's "written" and every other size), the maker's rating as it is said beside
        them (TBW counts decimal terabytes; "TiB and TB on one report" was issue 39)."""
        return (
            f"{human_bytes(self.bytes_written)} written of {self.rating.tbw} TBW rated "
            f"({human_bytes(self.rating.bytes)}) = {self.used_percent}%"
        )


def tbw_used(reading: SmartReading) -> TbwUsed | None:
    """The disk's host writes against its model's rated TBW; None when the model is not in the
    table or the drive has no host-write counter in a known unit (NAND writes do not count)."""
    if not reading.available:
        return None
    rating = rated_tbw(reading.model)
    if rating is None:
        return None
    w = bytes_written(reading)
    if w is None or w.bytes is None or w.kind != "host":
        return None
    return TbwUsed(w.bytes, rating, w.source)


def endurance_used_percent(reading: SmartReading) -> int | None:
    """Share of the rated endurance used, one number: NVMe's own percentage_used when the drive
    reports it; otherwise the larger of the ATA wear attribute and bytes written against the
    model's rated TBW (either may be missing). None when neither is known."""
    wear = wear_used_percent(reading)
    if wear is not None and wear.source == "nvme:percentage_used":
        return wear.used_percent
    tbw = tbw_used(reading)
    values = [x.used_percent for x in (wear, tbw) if x is not None]
    return max(values) if values else None
