"""``raidman report``'s risk and workload: each array's rebuild risk (``arrays[].risk``,
app.model.risk) and each disk's workload ledger (``disks[].workload``, app.model.workload), as
JSON and as the text report's two sections.

The reads are cheap and through the backend: md's system speed limits (the rebuild window's
forecast), /proc/uptime and one sample of /proc/diskstats (the kernel's counters since boot,
a hard disk's workload where SMART keeps none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.backend import Backend
from app.format import risk_line, risk_member_lines
from app.model.devices import Machine
from app.model.live import DiskIO
from app.model.risk import RebuildRisk, rebuild_risk
from app.model.smart import SmartReading
from app.model.workload import Workload, workloads
from app.plans.render import read_limits


def read_uptime(backend: Backend) -> float | None:
    """Seconds since boot (/proc/uptime's first field); None when not read."""
    try:
        text = backend.read_text("/proc/uptime")
        v = float((text or "").split()[0])
    except (Exception, IndexError):
        return None
    return v if 0 < v < 100 * 365 * 86400 else None


def disk_counters(backend: Backend) -> dict[str, DiskIO]:
    """The kernel's I/O counters of every block device now (one sample)."""
    try:
        return {d.name: d for d in backend.sample().disk_io}
    except Exception:  # a backend must not raise; the report goes on without them
        return {}


def risks(
    backend: Backend | None, machine: Machine, readings: Mapping[str, SmartReading]
) -> dict[str, RebuildRisk]:
    system = read_limits(backend, machine).system
    out: dict[str, RebuildRisk] = {}
    for a in machine.arrays:
        r = rebuild_risk(machine, a, readings, system)
        if r is not None:
            out[a.name] = r
    return out


def disk_workloads(
    backend: Backend, machine: Machine, readings: Mapping[str, SmartReading]
) -> dict[str, Workload]:
    return workloads(machine, readings, disk_counters(backend), read_uptime(backend))


def add_json(
    out: dict[str, Any], found: Mapping[str, RebuildRisk], loads: Mapping[str, Workload]
) -> None:
    """``arrays[].risk`` (null for an array without redundancy) and ``disks[].workload``."""
    for a in out["arrays"]:
        r = found.get(a["name"])
        a["risk"] = None if r is None else r.to_json()
    for d in out["disks"]:
        w = loads.get(d["name"])
        d["workload"] = None if w is None else w.to_json()


def risk_text(found: Mapping[str, RebuildRisk]) -> list[str]:
    out: list[str] = []
    for r in found.values():
        out.append(risk_line(r))
        out += [f"  {ln}" for ln in risk_member_lines(r)]
    return out


def _tb(x: float | None) -> str:
    return "?" if x is None else f"{x:.1f} TB"


def workload_line(w: Workload) -> str:
    """ "sda: 29.1 TB/yr read + written of 180 TB/yr rated (16 %; WD Red datasheet) — the
    kernel's /proc/diskstats since boot (9.0 days); a monthly check adds 12.0 TB/yr (6.7 %)"."""
    c = w.counted
    if w.tb_per_year is None:
        head = f"{w.disk}: TB per year unknown ({w.note or 'no counters'})"
    elif c is not None and c.read_bytes is None:
        head = f"{w.disk}: at least {_tb(w.tb_per_year)}/yr (writes only) — {c.source}"
    else:
        head = f"{w.disk}: {_tb(w.tb_per_year)}/yr read + written — {c.source if c else '?'}"
    parts = [head]
    if w.kind == "hdd":
        if w.rated_tb_per_year is not None:
            share = f" = {w.rated_share:.0%} of it" if w.rated_share is not None else ""
            parts.append(f"rated {w.rated_tb_per_year} TB/yr{share}")
        else:
            parts.append("rated workload unknown (model not in the datasheet table)")
        if w.check_tb_per_year is not None:
            of = f" = {w.check_share:.0%} of the rating" if w.check_share is not None else ""
            parts.append(f"a {w.check_schedule} check adds {_tb(w.check_tb_per_year)}/yr{of}")
    elif w.kind == "ssd":
        parts.append(ssd_wear_text(w))
    return "; ".join(parts)


def ssd_wear_text(w: Workload) -> str:
    """The SSD's two wear figures, each said for what it is: "wear reported by the drive: 64 %
    of its rated life used (177 Wear_Leveling_Count); host writes against the rated 150 TBW:
    85 % used"."""
    own = (
        f"wear reported by the drive: {w.wear_percent}% of its rated life used ({w.wear_source})"
        if w.wear_percent is not None
        else "wear: not reported by the drive"
    )
    if w.rated_tbw is None:
        tbw = "rated TBW unknown (model not in the endurance table)"
    else:
        used = f"{w.tbw_used_percent}% used" if w.tbw_used_percent is not None else "use unknown"
        tbw = f"host writes against the rated {w.rated_tbw} TBW: {used}"
        if w.years_to_tbw is not None:
            tbw += f", about {w.years_to_tbw:.1f} years left at {_tb(w.written_tb_per_year)}/yr"
    return f"{own}; {tbw}"


def workload_text(loads: Mapping[str, Workload]) -> list[str]:
    return [workload_line(w) for w in loads.values()]
