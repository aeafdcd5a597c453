"""A disk's workload ledger (app.model.workload): TB read + written per year from SMART's lifetime
counters or the kernel's since boot, against the datasheet's rating; what a check schedule
adds; the SSD's two wear figures, each labelled. And ``report --json``'s ``disks[].workload``
and ``arrays[].risk`` on raid6-wd (issue 41's bar)."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from app.model import Disk, Machine, MdArray, MdMember, Partition
from app.model.live import DiskIO
from app.model.smart import SmartAttribute, SmartReading
from app.model.workload import YEAR_S, checks_per_year, workload
from app.report_risk import ssd_wear_text, workload_line

TB = 10**12
DAY = 86400.0


def _hdd(size: int = 20 * TB, model: str = "WDC WD201KFGX-68BKJN0") -> tuple[Machine, Disk]:
    d = Disk("sda", size, model=model, rotational=True)
    p = Partition("sda1", "sda", 1, 2048, size - 2**21)
    b = Disk("sdb", size, model=model, rotational=True)
    q = Partition("sdb1", "sdb", 1, 2048, size - 2**21)
    a = MdArray(
        "md0",
        "raid1",
        size_bytes=size - 2**22,
        raid_disks=2,
        members=(MdMember("sda1", 0, ("in_sync",)), MdMember("sdb1", 1, ("in_sync",))),
    )
    edges = (("sda", "sda1"), ("sdb", "sdb1"), ("sda1", "md0"), ("sdb1", "md0"))
    return Machine("h", "6.1", (d, b), (p, q), (a,), edges=edges), d


def test_checks_per_year() -> None:
    assert checks_per_year("monthly") == 12
    assert checks_per_year("off") == 0
    assert checks_per_year("7d") == pytest.approx(YEAR_S / (7 * DAY))
    assert checks_per_year("2w") == pytest.approx(YEAR_S / (14 * DAY))
    assert checks_per_year("often") is None


def test_a_monthly_check_of_a_20_tb_member_is_240_tb_a_year() -> None:
    """The issue's figure: 12 × 20 TB = 240 TB/yr, 80 % of a Red Pro's 300 TB/yr by itself."""
    m, d = _hdd()
    w = workload(m, d, None, DiskIO("sda", 10 * TB, 2 * TB), 30 * DAY)
    assert w.check_tb_per_year == pytest.approx(12 * (20 * TB - 2**22) / TB)
    assert w.check_tb_per_year == pytest.approx(240, rel=1e-3)
    assert w.rated_tb_per_year == 300 and w.check_share == pytest.approx(0.8, rel=1e-3)
    # the kernel's 12 TB over 30 days since boot: 146 TB a year
    assert w.tb_per_year == pytest.approx(12 * YEAR_S / (30 * DAY))
    assert w.counted is not None and w.counted.source.startswith("the kernel's /proc/diskstats")
    line = workload_line(w)
    assert "146.1 TB/yr read + written" in line and "rated 300 TB/yr = 49% of it" in line
    assert "a monthly check adds 240.0 TB/yr = 80% of the rating" in line
    weekly = workload(m, d, None, DiskIO("sda", 10 * TB, 2 * TB), 30 * DAY, check_every="7d")
    assert weekly.check_tb_per_year == pytest.approx(240 * YEAR_S / (7 * DAY) / 12, rel=1e-3)


def test_a_short_uptime_says_too_short_rather_than_a_rate() -> None:
    m, d = _hdd()
    w = workload(m, d, None, DiskIO("sda", TB, TB), 3600.0)
    assert w.tb_per_year is None
    assert "covers 1.0 h since boot: too short to say per year" in (w.note or "")


def test_smart_lifetime_counters_win_when_they_count_reads_and_writes() -> None:
    m, d = _hdd(model="ST4000NM0035-1V4107")
    r = SmartReading(
        "sda",
        True,
        model="ST4000NM0035-1V4107",
        power_on_hours=8766,  # one year
        attributes=(
            SmartAttribute(241, "Total_LBAs_Written", raw=2 * TB // 512),
            SmartAttribute(242, "Total_LBAs_Read", raw=8 * TB // 512),
        ),
    )
    w = workload(m, d, r, DiskIO("sda", 1, 1), 30 * DAY)
    assert w.tb_per_year == pytest.approx(10 * YEAR_S / (8766 * 3600))
    assert (
        w.counted is not None and "242 Total_LBAs_Read, 241 Total_LBAs_Written" in w.counted.source
    )
    assert w.rated_tb_per_year == 550  # Exos X


def test_an_ssds_two_wear_figures_each_said_for_what_it_is() -> None:
    """issue 41: "wear 64 % used" and "150 TBW rated: 85 % used" said neither which is which."""
    d = Disk("sdb", 500107862016, model="Samsung SSD 850 EVO 500GB", rotational=False)
    m = Machine("h", "6.1", (d,))
    r = SmartReading(
        "sdb",
        True,
        model="Samsung SSD 850 EVO 500GB",
        power_on_hours=3100,
        attributes=(
            SmartAttribute(177, "Wear_Leveling_Count", value=36, raw=384),
            SmartAttribute(241, "Total_LBAs_Written", raw=128 * TB // 512),
            SmartAttribute(242, "Total_LBAs_Read", raw=TB // 512),
        ),
    )
    w = workload(m, d, r)
    assert (w.wear_percent, w.tbw_used_percent, w.rated_tbw) == (64, 85, 150)
    text = ssd_wear_text(w)
    assert text.startswith(
        "wear reported by the drive: 64% of its rated life used (177 Wear_Leveling_Count); "
        "host writes against the rated 150 TBW: 85% used"
    )
    assert w.years_to_tbw == pytest.approx(22 / (128 * YEAR_S / (3100 * 3600)))


def test_raid6_wd_report_json_has_risk_and_workload(capsys: pytest.CaptureFixture[str]) -> None:
    """issue 41's bar: arrays[md0].risk has read_bytes and ure_expected (≈ read_bytes × 8 ×
    1e-14 for WD Red); disks[sda].workload has tb_per_year and rated_tb_per_year."""
    assert main(["--demo", "raid6-wd", "report", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    risk = next(a for a in data["arrays"] if a["name"] == "md0")["risk"]
    assert risk["read_bytes"] > 3 * TB and risk["ure_rate"] == 1e-14
    assert risk["ure_expected"] == pytest.approx(risk["read_bytes"] * 8 * 1e-14)
    assert risk["corrects_one"] is True and risk["window_s"] > 0
    sda = next(d for d in data["disks"] if d["name"] == "sda")["workload"]
    assert sda["rated_tb_per_year"] == 180 and "WD Red" in sda["rated_source"]
    # raid6-wd: 540 GB read + 95 GB written in the nine days since boot, plus the rebuild's
    # reads so far (8.2 % of a 931 GiB member)
    assert 25 < sda["tb_per_year"] < 35
    assert sda["check_tb_per_year"] == pytest.approx(12 * 2929683456 * 1024 / 3 / TB)
