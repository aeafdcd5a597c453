"""SMART findings (issue 12 "Missing today"): health FAILED, pre-fail counters, CRC errors,
endurance used. Article 000 (/work/shared/seeds/000_*.txt) read Wear_Leveling_Count and
Total_LBAs_Written after a loose SATA cable made a RAID-5 member drop out and one resync
rewrote the whole SSD."""

from __future__ import annotations

from app.model.smart import SmartAttribute, SmartReading
from app.rules import AuditInputs, Finding, audit
from tests.rules.machines import Stack


def _findings(*readings: SmartReading) -> list[Finding]:
    m = Stack().machine()
    fs = audit(m, AuditInputs(smart={r.device: r for r in readings}))
    return [f for f in fs if f.code.startswith("smart")]


def _ata(device: str, *attrs: SmartAttribute, health: str = "PASSED") -> SmartReading:
    return SmartReading(device, True, protocol="ATA", health=health, attributes=attrs)


def test_healthy_disk_has_no_smart_findings() -> None:
    r = _ata("sda", SmartAttribute(5, "Reallocated_Sector_Ct", 100, 100, 10, 0))
    assert _findings(r) == []
    assert _findings(SmartReading("sdb", False, "smartctl not found")) == []


def test_failed_health_and_attribute_at_threshold_are_errors() -> None:
    r = _ata("sdb", SmartAttribute(1, "Raw_Read_Error_Rate", 6, 6, 51, 1234), health="FAILED")
    codes = {(f.code, f.severity, f.device) for f in _findings(r)}
    assert ("smart-failed", "error", "sdb") in codes
    assert ("smart-attribute-failing", "error", "sdb") in codes
    assert any("member of md0" in f.detail for f in _findings(r))


def test_prefail_counts_and_crc_errors() -> None:
    r = _ata(
        "sdc",
        SmartAttribute(5, "Reallocated_Sector_Ct", 99, 99, 10, 8),
        SmartAttribute(197, "Current_Pending_Sector", 100, 100, 0, 2),
        SmartAttribute(199, "UDMA_CRC_Error_Count", 100, 100, 0, 31),
    )
    by = {f.code: f for f in _findings(r)}
    assert by["smart-prefail"].severity == "warning"
    assert "8 reallocated sectors" in by["smart-prefail"].detail
    assert "2 sectors pending reallocation" in by["smart-prefail"].detail
    assert (
        by["smart-crc-errors"].severity == "advice"
        and "SATA cable" in by["smart-crc-errors"].detail
    )


def test_endurance_used_from_nvme_and_ata_wear_levelling() -> None:
    nvme = SmartReading(
        "sda", True, protocol="NVMe", nvme={"percentage_used": 85, "media_errors": 0}
    )
    [f] = _findings(nvme)
    assert (f.code, f.severity) == ("smart-wear", "warning") and "85%" in f.title
    worn = _ata("sdd", SmartAttribute(177, "Wear_Leveling_Count", 0, 0, 0, 3000))
    [g] = _findings(worn)
    assert (g.code, g.severity) == ("smart-wear", "error")
    fresh = _ata("sdd", SmartAttribute(177, "Wear_Leveling_Count", 99, 99, 0, 12))
    assert _findings(fresh) == []
