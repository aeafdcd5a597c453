"""The SmartReading of a simulated disk and the counters smartctl reports for it."""

from __future__ import annotations

from typing import Any

from app.model.smart import SmartAttribute, SmartReading
from backends.simulated import selftest
from backends.simulated.records import SimDisk
from backends.simulated.state import SimState


def smart_counters(st: SimState, d: SimDisk) -> dict[str, int]:
    """The disk's SMART counters now (ATA LBAs, wear, hours; NVMe data units)."""
    s = d.smart
    f = s.lba_count_factor
    lbas_w = s.lbas_written + (d.smart_written_bytes * f.numerator) // (f.denominator * d.logical)
    lbas_r = s.lbas_read + d.smart_read_bytes // d.logical
    counted_bytes = (lbas_w - s.lbas_written) * d.logical
    wlc_raw = s.wlc_raw + counted_bytes // d.size_bytes
    hours = s.power_on_hours + int((st.t - st.t0) // 3600)
    out = {
        "lbas_written": lbas_w,
        "lbas_read": lbas_r,
        "wlc_raw": wlc_raw,
        "wlc_value": max(1, 100 - (wlc_raw * 100) // s.rated_pe) if s.rated_pe else 0,
        "hours": hours,
        "duw": s.data_units_written + d.smart_written_bytes // 512000,
        "dur": s.data_units_read + d.smart_read_bytes // 512000,
    }
    used = s.percentage_used
    if s.nvme_tbw_per_percent:
        used += d.smart_written_bytes // s.nvme_tbw_per_percent
    out["pct_used"] = used
    return out


def build_smart(st: SimState, d: SimDisk) -> SmartReading:
    s = d.smart
    if not s.available:
        return SmartReading(
            device=d.name,
            available=False,
            reason=s.reason,
            model=d.model,
            serial=d.serial,
            capacity_bytes=d.size_bytes,
            rotational=d.rotational,
            exit_status=2,
            taken_at=st.t,
        )
    c = smart_counters(st, d)
    if s.protocol == "NVMe":
        nvme = {
            "critical_warning": 0,
            "temperature": s.temperature_c,
            "available_spare": 100,
            "available_spare_threshold": 10,
            "percentage_used": c["pct_used"],
            "data_units_read": c["dur"],
            "data_units_written": c["duw"],
            "host_reads": c["dur"] * 8,
            "host_writes": c["duw"] * 8,
            "power_cycles": 42,
            "power_on_hours": c["hours"],
            "unsafe_shutdowns": 3,
            "media_errors": 1 if s.fail_test_at_lba is not None else 0,
            "num_err_log_entries": len(selftest.errors(d, c["hours"])),
        }
        return SmartReading(
            device=d.name,
            available=True,
            protocol="NVMe",
            model=d.model,
            serial=d.serial,
            firmware=d.firmware,
            health=s.health,
            temperature_c=s.temperature_c,
            power_on_hours=c["hours"],
            logical_sector=d.logical,
            capacity_bytes=d.size_bytes,
            rotational=False,
            nvme=nvme,
            exit_status=0,
            taken_at=st.t,
            **_logs(st, d, c["hours"]),
        )
    rv = s.reallocated_value
    attrs = [
        SmartAttribute(
            5, "Reallocated_Sector_Ct", rv, rv, 10, s.reallocated, str(s.reallocated), True
        ),
        SmartAttribute(9, "Power_On_Hours", 99, 99, 0, c["hours"], str(c["hours"])),
        SmartAttribute(12, "Power_Cycle_Count", 99, 99, 0, 311, "311"),
    ]
    if s.rated_pe:
        attrs.append(
            SmartAttribute(
                177,
                "Wear_Leveling_Count",
                c["wlc_value"],
                c["wlc_value"],
                0,
                c["wlc_raw"],
                str(c["wlc_raw"]),
            )
        )
    attrs.append(
        SmartAttribute(
            190 if not d.rotational else 194,
            "Airflow_Temperature_Cel" if not d.rotational else "Temperature_Celsius",
            100 - s.temperature_c if not d.rotational else 250 - s.temperature_c * 2,
            100 - s.temperature_c if not d.rotational else 250 - s.temperature_c * 2,
            0,
            s.temperature_c,
            str(s.temperature_c),
        )
    )
    attrs.append(
        SmartAttribute(197, "Current_Pending_Sector", 100, 100, 0, s.pending, str(s.pending))
    )
    attrs.append(
        SmartAttribute(199, "UDMA_CRC_Error_Count", 100, 100, 0, s.crc_errors, str(s.crc_errors))
    )
    if not d.rotational:
        attrs.append(
            SmartAttribute(
                241, "Total_LBAs_Written", 99, 99, 0, c["lbas_written"], str(c["lbas_written"])
            )
        )
        attrs.append(
            SmartAttribute(242, "Total_LBAs_Read", 99, 99, 0, c["lbas_read"], str(c["lbas_read"]))
        )
    return SmartReading(
        device=d.name,
        available=True,
        protocol="ATA",
        model=d.model,
        serial=d.serial,
        firmware=d.firmware,
        health=s.health,
        temperature_c=s.temperature_c,
        power_on_hours=c["hours"],
        logical_sector=d.logical,
        capacity_bytes=d.size_bytes,
        rotational=d.rotational,
        attributes=tuple(attrs),
        exit_status=0,
        taken_at=st.t,
        **_logs(st, d, c["hours"]),
    )


def _logs(st: SimState, d: SimDisk, hours: int) -> dict[str, Any]:
    """The self-test and error logs a reading carries (backends/simulated/selftest.py)."""
    selftest.settle(st, d, hours)
    errs = selftest.errors(d, hours)
    return {
        "self_tests": selftest.entries(d, hours),
        "self_test_remaining": selftest.remaining(st, d),
        "error_count": len(errs),
        "errors": errs,
    }
