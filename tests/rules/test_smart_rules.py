"""SMART findings (issue 12 "Missing today"): health FAILED, pre-fail counters, CRC errors,
endurance used. Article 000 (/work/shared/seeds/000_*.txt) read Wear_Leveling_Count and
Total_LBAs_Written after a loose SATA cable made a RAID-5 member drop out and one resync
rewrote the whole SSD."""

from __future__ import annotations

import pytest

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


# ---- bytes written against the model's rated TBW (app.model.endurance) ---------------------------


def _evo(device: str, lbas: int, model: str = "Samsung SSD 850 EVO 500GB") -> SmartReading:
    """An 850 EVO 500 GB (article 000's drives; Samsung's warranty table rates it 150 TBW)."""
    return SmartReading(
        device,
        True,
        protocol="ATA",
        model=model,
        health="PASSED",
        attributes=(SmartAttribute(241, "Total_LBAs_Written", 99, 99, 0, lbas),),
    )


def test_bytes_written_past_rated_tbw_is_an_error_with_the_figures() -> None:
    # 412 TB in 512-byte LBAs against 150 TBW: 275 %
    r = _evo("sda", 412 * 10**12 // 512)
    (f,) = [f for f in _findings(r) if f.code == "smart-tbw"]
    assert f.severity == "error"
    assert f.title == "sda: 374.7 TiB written of 150 TBW rated (136.4 TiB) = 275%"
    assert "Samsung 850 EVO 500GB" in f.detail and "241 Total_LBAs_Written" in f.detail
    assert "member of md0" in f.detail and "semiconductor.samsung.com" in f.detail


@pytest.mark.parametrize(
    ("tb", "severity"),
    [
        (40, None),
        (75, "advice"),
        (119, "advice"),
        (120, "warning"),
        (149, "warning"),
        (150, "error"),
    ],
)
def test_tbw_thresholds(tb: int, severity: str | None) -> None:
    r = _evo("sdb", tb * 10**12 // 512 + 1)
    got = [f.severity for f in _findings(r) if f.code == "smart-tbw"]
    assert got == ([severity] if severity else [])


def test_unknown_model_or_unit_gives_no_tbw_finding() -> None:
    assert not [
        f for f in _findings(_evo("sda", 10**12, "Samsung SSD 840 Series")) if f.code == "smart-tbw"
    ]
    no_unit = SmartReading(
        "sdb",
        True,
        model="Samsung SSD 850 EVO 500GB",
        attributes=(SmartAttribute(241, "Host_Writes", 99, 99, 0, 10**12),),  # unit unknown
    )
    assert not [f for f in _findings(no_unit) if f.code == "smart-tbw"]


def test_nvme_with_percentage_used_is_judged_by_it_not_by_tbw() -> None:
    r = SmartReading(
        "nvme0n1",
        True,
        protocol="NVMe",
        model="Samsung SSD 970 EVO Plus 250GB",
        nvme={"data_units_written": 400 * 10**12 // 512_000, "percentage_used": 12},
    )
    assert [f.code for f in _findings(r)] == []


def test_imsm_demo_has_one_worn_ssd_in_report_json_text_and_metrics(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The imsm demo's sdb (850 EVO 500 GB, 128 TB written, 150 TBW rated) shows the finding."""
    import json

    from app.cli import main

    assert main(["--demo", "imsm", "report", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    tbw = [f for f in data["findings"] if f["code"] == "smart-tbw"]
    assert [(f["device"], f["severity"], f["title"]) for f in tbw] == [
        ("sdb", "warning", "sdb: 116.4 TiB written of 150 TBW rated (136.4 TiB) = 85%")
    ]
    disks = {d["name"]: d["smart"] for d in data["disks"]}
    assert (disks["sdb"]["rated_tbw"], disks["sdb"]["rated_tbw_used_percent"]) == (150, 85)
    assert disks["sda"]["rated_tbw_used_percent"] == 0
    main(["--demo", "imsm", "report"])
    text = capsys.readouterr().out
    # the drive's own wear figure and host writes against the rated TBW, each said for what it
    # is (issue 41: "wear 64 % used" and "150 TBW rated: 85 % used" said neither)
    assert (
        "wear reported by the drive: 64% of its rated life used (177 Wear_Leveling_Count)" in text
    )
    assert "host writes against the rated 150 TBW: 85% used" in text
    # issue 39: one unit system on one report (the disk line says "written 116.4 TiB")
    assert "written 116.4 TiB" in text
    assert "[warning] sdb: 116.4 TiB written of 150 TBW rated (136.4 TiB) = 85%" in text
    assert " TB written" not in text
    main(["--demo", "imsm", "metrics"])
    metrics = capsys.readouterr().out
    assert 'raidman_disk_endurance_used_ratio{disk="sdb"' in metrics
    line = next(
        x
        for x in metrics.splitlines()
        if x.startswith('raidman_disk_endurance_used_ratio{disk="sdb"')
    )
    assert line.endswith(" 0.85")
