"""An array's rebuild risk (app.model.risk) term by term, and what a recovery reads per level
(app.model.sync_model.recovery_reads)."""

from __future__ import annotations

import math

import pytest

from app.format import risk_line, risk_member_lines
from app.model import Disk, Machine, MdArray, MdMember, Partition, SyncStatus
from app.model.risk import YEAR_S, rebuild_risk
from app.model.sync_model import component_bytes, recovery_reads
from app.report import read_smart
from backends.simulated import SimClock, SimulatedBackend

TB = 10**12


def _array(
    level: str,
    n: int,
    *,
    model: str = "WDC WD40EFRX-68N32N0",
    states: dict[int, tuple[str, ...]] | None = None,
    layout: str | None = None,
    sync: SyncStatus | None = None,
    degraded: int = 0,
) -> tuple[Machine, MdArray]:
    """``n`` 4 TB disks with one partition each, every one a member in slot i (``states``
    overrides a slot's state; a slot of None state is missing)."""
    disks, parts, members, edges = [], [], [], []
    for i in range(n):
        dn = f"sd{'abcdefgh'[i]}"
        disks.append(Disk(dn, 4 * TB, model=model, rotational=True, transport="sata"))
        parts.append(Partition(f"{dn}1", dn, 1, 2048, 4 * TB - 2 * 2**20))
        state = (states or {}).get(i, ("in_sync",))
        if state:
            members.append(MdMember(f"{dn}1", i, state, size_kib=(4 * TB - 4 * 2**20) // 1024))
            edges += [(dn, f"{dn}1"), (f"{dn}1", "md0")]
    data = {"raid1": 1, "raid5": n - 1, "raid6": n - 2, "raid10": n // 2}[level]
    a = MdArray(
        "md0",
        level,
        size_bytes=data * 3 * TB,
        raid_disks=n,
        layout=layout,
        members=tuple(members),
        sync=sync,
        degraded=degraded,
    )
    m = Machine("h", "6.1", tuple(disks), tuple(parts), (a,), edges=tuple(edges))
    return m, a


def test_recovery_reads_per_level() -> None:
    """raid5.c reads every survivor whole; raid1_sync_request the first in-sync mirror;
    raid10_sync_request one copy of each chunk, from the target's copy set."""
    c = 3 * TB
    four = [("a", 0), ("b", 1), ("c", 2)]
    assert recovery_reads("raid5", 4, None, four, [3], c) == {"a": c, "b": c, "c": c}
    assert recovery_reads("raid6", 4, None, four[:2], [2, 3], c) == {"a": c, "b": c}
    assert recovery_reads("raid1", 3, None, [("b", 1), ("a", 0)], [2], c) == {"b": 0, "a": c}
    # RAID-10 n2 of 4: slot 1's copies live on slot 0 only (pairs (0,1), (2,3))
    assert recovery_reads("raid10", 4, "n2", four, [1], c) == {"a": c, "b": 0, "c": 0}
    assert recovery_reads("raid5", 4, None, four, [], c) == {"a": 0, "b": 0, "c": 0}


def test_a_replace_reads_the_member_it_replaces() -> None:
    """A replace keeps the old member in sync in its slot: raid5.c's handle_stripe()
    (s->replacing) reads that member's block and writes it to the replacement; the RAID-10
    recovery loop of raid10_sync_request() reads the first in-sync copy, the old member one of
    them."""
    c = 3 * TB
    four = [("a", 0), ("b", 1), ("c", 2), ("d", 3)]
    assert recovery_reads("raid5", 4, None, four, [2], c, "replace") == {
        "a": 0,
        "b": 0,
        "c": c,
        "d": 0,
    }
    assert recovery_reads("raid10", 4, "n2", four, [2], c, "replace") == {
        "a": 0,
        "b": 0,
        "c": c // 2,
        "d": c // 2,
    }
    # a recovery of slot 2 (no member in it) reads its partner only
    three = [x for x in four if x[1] != 2]
    assert recovery_reads("raid10", 4, "n2", three, [2], c) == {"a": 0, "b": 0, "d": c}


def test_raid6_wd_md0_every_term() -> None:
    """issue 41's bar: md0 (RAID-6 of WD Red, one failed, rebuilding onto sdf1 at 8.2 %):
    read_bytes = 4 survivors × the component × what is left, ure_expected = read_bytes × 8 ×
    1e-14 (the WD Red datasheet), corrected (RAID-6 with one failed survives one more), the
    window md's ETA; sdb's SMART counts in Scrutiny's bins."""
    b = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    m = b.probe()
    a = m.array("md0")
    assert a is not None and a.sync is not None
    r = rebuild_risk(m, a, read_smart(b, m), (1000, 200000))
    assert r is not None and r.scenario == "running" and r.rebuilt == ("sdf1",)
    comp = component_bytes(a)
    assert comp == 2929683456 * 1024 // 3
    assert [s.device for s in r.survivors] == ["sda1", "sde1", "sdd1", "sdc1"]
    left = 1 - a.sync.fraction  # type: ignore[operator]
    assert r.read_bytes_total == 4 * comp
    assert abs(r.read_bytes - 4 * comp * left) <= 4
    assert r.ure_per_bit == 1e-14 and "WD Red" in (r.ure_source or "")
    assert r.ure_expected == pytest.approx(r.read_bytes * 8 * 1e-14)
    assert 0.25 < (r.ure_expected or 0) < 0.35
    assert r.failures_left == 1 and r.corrects_one
    assert r.window_s == pytest.approx(a.sync.eta_s)
    sdb = next(x for x in r.members if x.device == "sdb1")
    assert sdb.role == "faulty"
    ev = {e.attribute: e for e in sdb.evidence}
    assert (ev[5].value, ev[5].afr) == (1816, 1.5028253400346423)
    assert (ev[197].value, ev[197].low, ev[197].high) == (24, 16, 40)
    assert sdb.failures_in(3600.0) == pytest.approx(1.5028253400346423 * 3600 / YEAR_S)
    j = r.to_json()
    assert {"read_bytes", "ure_rate", "ure_expected", "corrects_one", "window_s"} <= j.keys()
    line = risk_line(r)
    assert "4 survivors still read 3.3 TiB × 8 bits × 1 per 10^14 bits (WD Red datasheet)" in line
    assert "= 0.29 unreadable sectors expected" in line
    assert "corrects one meanwhile: yes" in line
    assert any(
        ln.startswith("sdb1 (faulty") and "1816 (bin 1101–4500)" in ln
        for ln in risk_member_lines(r)
    )


def test_a_degraded_raid5_does_not_correct_one() -> None:
    m, a = _array("raid5", 4, states={3: ()}, degraded=1)
    r = rebuild_risk(m, a)
    assert r is not None and r.scenario == "after-a-disk-is-added" and r.rebuilt == ("slot 3",)
    assert r.read_bytes == 3 * 3 * TB and r.failures_left == 0 and not r.corrects_one
    assert r.ure_expected == pytest.approx(3 * 3 * TB * 8 * 1e-14)  # 0.72: about 1 in 1.4
    assert "corrects one meanwhile: no (RAID-5 has no redundancy left" in risk_line(r)


def test_a_healthy_raid6_says_what_one_failure_would_cost() -> None:
    m, a = _array("raid6", 6)
    r = rebuild_risk(m, a, limits=(1000, 200000))
    assert r is not None and r.scenario == "if-a-member-fails" and r.rebuilt == ("sdf1",)
    assert r.read_bytes == 5 * (4 * 3 * TB // 4) and r.failures_left == 1
    # the window: 3 TB at md's default max (200,000 KiB/s held: the members can do more)
    assert r.window_s is not None and math.isclose(r.window_s, 3 * TB / 1024 / 200000, rel_tol=0.05)
    assert r.window_why == "forecast at md's limit"


def test_a_survivor_of_an_unlisted_model_makes_the_expected_count_unknown() -> None:
    m, a = _array("raid1", 2, model="Hitachi HDS721050DLE630")
    r = rebuild_risk(m, a)
    assert r is not None and r.ure_expected is None and r.unknown_rates == ("sda1",)
    assert r.to_json()["ure_expected"] is None
    assert "rate unknown for sda1 (model not in the datasheet table) = unknown" in risk_line(r)


def test_no_risk_without_redundancy() -> None:
    m, a = _array("raid5", 3)
    raid0 = MdArray("md1", "raid0", size_bytes=TB, raid_disks=2)
    assert rebuild_risk(m, raid0) is None
    assert rebuild_risk(m, a) is not None
