"""The plan preview's consequences (what ``raidman plan``, ``apply`` and the TUI preview show) say
the risk of each rebuild a plan starts, and what a check schedule reads a year from each disk
before it is enabled (issue 41 items 3 and 5)."""

from __future__ import annotations

import pytest

from app.plans.builders.check_schedule import schedule_plan
from app.plans.builders.members import build_add, build_re_add
from app.plans.render import current_consequences
from backends.simulated import SimClock, SimulatedBackend


def _retire() -> tuple[SimulatedBackend, object]:
    b = SimulatedBackend.from_scenario("retire", clock=SimClock.manual())
    return b, b.probe()


def test_adding_a_disk_to_a_degraded_raid1_says_its_rebuild_risk() -> None:
    """retire's md0 runs on sda1 alone: the recovery onto sdd reads all of sda1 (400 GiB), and
    a read error meanwhile is not corrected (a RAID-1 with one mirror left)."""
    b, m = _retire()
    plan = current_consequences(build_add(m, "md0", "sdd"), m, b)  # type: ignore[arg-type]
    c = plan.consequences
    assert c is not None
    (r,) = c.risks
    assert (r.array, r.scenario, r.rebuilt) == ("md0", "planned", ("sdd",))
    assert r.read_bytes == 400 * 2**30 and not r.corrects_one
    assert [s.device for s in r.survivors] == ["sda1"] and r.ure_expected is None  # 850 EVO
    (line,) = [ln for ln in c.lines() if "rebuild risk" in ln]
    assert line.startswith("md0 rebuild risk (the rebuild this plan starts onto sdd): 1 survivor")
    assert "read 400.0 GiB × 8 bits × rate unknown for sda1" in line
    assert "corrects one meanwhile: no (RAID-1 has no redundancy left" in line
    assert c.to_json()["risks"][0]["read_bytes"] == 400 * 2**30


def test_a_bitmap_re_add_reads_only_its_dirty_share() -> None:
    b, m = _retire()
    plan = current_consequences(build_re_add(m, "md0", "sdb1"), m, b)  # type: ignore[arg-type]
    (r,) = plan.consequences.risks  # type: ignore[union-attr]
    (f,) = plan.consequences.syncs  # type: ignore[union-attr]
    written = f.members[-1].bytes_high
    assert 0 < written < 400 * 2**30
    assert r.read_bytes == pytest.approx(written, rel=1e-6)


def test_a_check_schedule_says_what_it_reads_a_year_before_it_is_enabled() -> None:
    """raid6-wd's WD Reds: a check every 7 days reads each member's 1 TB 52 times a year: 29 %
    of WD Red's 180 TB/yr workload rating; the faulty sdb is read by no check."""
    b = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    m = b.probe()
    c = current_consequences(schedule_plan("7d", "6h"), m, b).consequences
    assert c is not None
    assert c.workload[0] == (
        "checks every 7d read 52.2 TB a year from sda = 29% of its rated 180 TB/yr "
        "(WD Red datasheet)"
    )
    assert [w.split(" from ")[1].split(" ")[0] for w in c.workload] == [
        "sda",
        "sdc",
        "sdd",
        "sde",
        "sdf",
    ]
    monthly = current_consequences(schedule_plan("monthly", "6h"), m, b).consequences
    assert monthly is not None and "read 12.0 TB a year from sda = 7% of its" in monthly.workload[0]
    assert current_consequences(schedule_plan("off", "6h"), m, b).consequences.workload == ()  # type: ignore[union-attr]
