"""A disk's workload ledger: terabytes read and written per year, from its own counters, against
what its maker rates it for, and what a check schedule adds.

- **Hard disks** are rated for a workload: TB transferred per year, reads and writes alike
  (app.model.drive_ratings: WD Red 180, Red Pro 300, nearline 550). Most report no lifetime
  read/write counters in SMART (a WD Red has neither 241 nor 242), so the kernel's
  /proc/diskstats since boot over the uptime is the measure there; at least a day of it,
  else "too short to say".
- **SSDs** are rated for writes: TBW (app.model.endurance). Their SMART counters (NVMe data units
  read/written; ATA 241/242 in LBAs) over the power-on hours are a lifetime average.
- **A check** reads every member whole (md's check: ``md_do_sync`` over every sector, each
  personality reading all devices of a requested sync): a monthly check of a 20 TB member is
  240 TB a year — above a 180 TB/yr rating by itself.

Decimal terabytes (10^12 B), as makers rate them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.model import levels, sync_model
from app.model.drive_ratings import drive_rating
from app.model.endurance import rated_tbw
from app.model.smart_units import NVME_DATA_UNIT, bytes_written, tbw_used, wear_used_percent

if TYPE_CHECKING:
    from app.model.devices import Disk, Machine
    from app.model.live import DiskIO
    from app.model.smart import SmartReading

TB = 10**12
YEAR_S = 365.25 * 86400
MIN_KERNEL_SPAN_S = 86400.0  # less uptime than a day says nothing about a year
MONTHLY_PER_YEAR = 12.0
_UNIT_S = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}
_READ_NAMES = ("total_lbas_read", "host_reads_lbas", "lbas_read")


def checks_per_year(every: str) -> float | None:
    """How many checks a year a schedule runs: "monthly" (raidman's default: first Sunday) 12;
    "7d" 52.2; "off" 0; None when the text is not a schedule (the plan's own shapes)."""
    if every == "monthly":
        return MONTHLY_PER_YEAR
    if every == "off":
        return 0.0
    if every[:-1].isdigit() and every[-1:] in _UNIT_S and int(every[:-1]) > 0:
        return YEAR_S / (int(every[:-1]) * _UNIT_S[every[-1]])
    return None


@dataclass(frozen=True, slots=True)
class Counted:
    read_bytes: int | None
    written_bytes: int | None
    span_s: float
    source: str


def _smart_reads(r: SmartReading) -> tuple[int, str] | None:
    """The drive's lifetime host-read counter in bytes, and its name."""
    if r.nvme.get("data_units_read") is not None:
        return r.nvme["data_units_read"] * NVME_DATA_UNIT, "nvme:data_units_read"
    for a in r.attributes:
        if a.name.lower() in _READ_NAMES and a.raw is not None:
            return a.raw * (r.logical_sector or 512), f"{a.id} {a.name}"
    return None


def _from_smart(r: SmartReading | None) -> Counted | None:
    if r is None or not r.available or not r.power_on_hours:
        return None
    w = bytes_written(r)
    written = w.bytes if w is not None and w.kind == "host" else None
    reads = _smart_reads(r)
    if written is None or w is None:
        return None
    if reads is not None:
        what = f"host reads and writes ({reads[1]}, {w.source})"
    else:
        what = f"host writes only ({w.source}; no read counter)"
    return Counted(
        reads[0] if reads is not None else None,
        written,
        r.power_on_hours * 3600.0,
        f"SMART {what} over {r.power_on_hours} power-on hours",
    )


def _from_kernel(io: DiskIO | None, uptime_s: float | None) -> Counted | None:
    if io is None or not uptime_s:
        return None
    days = uptime_s / 86400
    return Counted(
        io.read_bytes,
        io.write_bytes,
        uptime_s,
        f"the kernel's /proc/diskstats since boot ({days:.1f} days)",
    )


@dataclass(frozen=True, slots=True)
class Workload:
    disk: str
    kind: str  # "hdd" | "ssd" | "unknown"
    counted: Counted | None
    rated_tb_per_year: int | None  # HDD: the datasheet's workload rate
    rated_source: str | None
    rated_tbw: int | None  # SSD: rated terabytes written
    tbw_source: str | None
    check_tb_per_year: float | None  # what the check schedule reads from this disk a year
    check_schedule: str  # "monthly" (raidman's default) or the plan's
    note: str | None  # why a figure is unknown
    # SSD wear, each labelled: the drive's own percentage, and host writes against TBW
    wear_percent: int | None = None
    wear_source: str | None = None
    tbw_used_percent: int | None = None

    @property
    def tb_per_year(self) -> float | None:
        """TB read + written per year (writes only where reads are not counted: said so)."""
        c = self.counted
        if c is None or c.span_s <= 0 or c.written_bytes is None:
            return None
        total = c.written_bytes + (c.read_bytes or 0)
        return total / TB * YEAR_S / c.span_s

    @property
    def written_tb_per_year(self) -> float | None:
        c = self.counted
        if c is None or c.span_s <= 0 or c.written_bytes is None:
            return None
        return c.written_bytes / TB * YEAR_S / c.span_s

    @property
    def rated_share(self) -> float | None:
        """tb_per_year / the rated workload (HDD)."""
        t = self.tb_per_year
        return None if t is None or not self.rated_tb_per_year else t / self.rated_tb_per_year

    @property
    def check_share(self) -> float | None:
        """What the check schedule alone is of the rated workload (HDD)."""
        c = self.check_tb_per_year
        return None if c is None or not self.rated_tb_per_year else c / self.rated_tb_per_year

    @property
    def years_to_tbw(self) -> float | None:
        """SSD: years until the host writes reach the rated TBW at this write rate."""
        w = self.written_tb_per_year
        if (
            not self.rated_tbw
            or not w
            or self.counted is None
            or self.counted.written_bytes is None
        ):
            return None
        left = self.rated_tbw - self.counted.written_bytes / TB
        if self.counted.source.startswith("the kernel"):
            return None  # the kernel's count is since boot: what is left is not known from it
        return max(0.0, left) / w

    def to_json(self) -> dict[str, Any]:
        c = self.counted
        return {
            "kind": self.kind,
            "tb_per_year": self.tb_per_year,
            "written_tb_per_year": self.written_tb_per_year,
            "read_bytes": None if c is None else c.read_bytes,
            "written_bytes": None if c is None else c.written_bytes,
            "span_s": None if c is None else c.span_s,
            "source": None if c is None else c.source,
            "rated_tb_per_year": self.rated_tb_per_year,
            "rated_source": self.rated_source,
            "rated_share": self.rated_share,
            "rated_tbw": self.rated_tbw,
            "tbw_source": self.tbw_source,
            "years_to_rated_tbw": self.years_to_tbw,
            "check_schedule": self.check_schedule,
            "check_tb_per_year": self.check_tb_per_year,
            "check_share_of_rated": self.check_share,
            "wear_percent_reported": self.wear_percent,
            "wear_source": self.wear_source,
            "tbw_used_percent": self.tbw_used_percent,
            "note": self.note,
        }


def check_bytes_per_check(machine: Machine, disk: str) -> int:
    """What one check of every array on ``disk`` reads from it: each member of it whole (the
    component the array uses of it)."""
    total = 0
    for a in machine.arrays_of_disk(disk):
        if a.is_container or a.level not in levels.REDUNDANT:
            continue
        comp = sync_model.component_bytes(a)
        for m in a.members:
            if machine.disks_under(m.device) == (disk,) and m.working:
                total += comp or (m.size_kib or 0) * 1024
    return total


def workload(
    machine: Machine,
    d: Disk,
    reading: SmartReading | None,
    io: DiskIO | None = None,
    uptime_s: float | None = None,
    check_every: str = "monthly",
) -> Workload:
    """The ledger of disk ``d`` (see the module doc)."""
    kind = "ssd" if d.rotational is False else "hdd" if d.rotational else "unknown"
    smart = _from_smart(reading)
    kernel = _from_kernel(io, uptime_s)
    notes: list[str] = []
    counted: Counted | None = None
    if smart is not None and smart.read_bytes is not None:
        counted = smart
    elif kernel is not None and kernel.span_s >= MIN_KERNEL_SPAN_S:
        counted = kernel
    elif smart is not None:
        counted = smart
    elif kernel is not None:
        notes.append(
            f"no lifetime counters in SMART, and the kernel's count covers {kernel.span_s / 3600:.1f} h "
            "since boot: too short to say per year"
        )
    else:
        notes.append("no lifetime counters in SMART and no kernel counters read")
    model = d.model or (reading.model if reading is not None else None)
    rating = drive_rating(model) if kind != "ssd" else None
    tbw = rated_tbw(model) if kind != "hdd" else None
    if kind == "hdd" and (rating is None or rating.workload_tb_per_year is None):
        notes.append("rated workload unknown: the model is not in the datasheet table")
    per_year = checks_per_year(check_every)
    per_check = check_bytes_per_check(machine, d.name)
    check = per_check * per_year / TB if per_year is not None else None
    wear = wear_used_percent(reading) if reading is not None and reading.available else None
    used = tbw_used(reading) if reading is not None else None
    return Workload(
        d.name,
        kind,
        counted,
        rating.workload_tb_per_year if rating else None,
        rating.source if rating and rating.workload_tb_per_year else None,
        tbw.tbw if tbw else None,
        tbw.source if tbw else None,
        check if per_check else None,
        check_every,
        "; ".join(notes) or None,
        wear.used_percent if wear else None,
        wear.source if wear else None,
        used.used_percent if used else None,
    )


def workloads(
    machine: Machine,
    readings: Mapping[str, SmartReading],
    io: Mapping[str, DiskIO] | None = None,
    uptime_s: float | None = None,
    check_every: str = "monthly",
) -> dict[str, Workload]:
    return {
        d.name: workload(
            machine, d, readings.get(d.name), (io or {}).get(d.name), uptime_s, check_every
        )
        for d in machine.disks
        if d.kind == "disk" and d.is_storage
    }
