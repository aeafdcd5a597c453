"""The state database keeps what the SMART logs said with each snapshot (app.wear.smart_reads
log_counters): the newest finished self-test, a running test's remaining percent and the CRC
error count, whose first recorded value the audit compares with now (smart-crc-rising)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from app.report import first_crc_counts
from app.wear.smart_reads import counters_of
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock


def test_snapshots_keep_the_self_test_and_crc_counts(tmp_path: Path) -> None:
    be = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    sdb = be.smart("sdb")
    c = counters_of(sdb)
    assert c["self_test"]["passed"] is False and c["self_test"]["lba_first_error"] == 1234567890
    assert c["self_test_remaining"] is None and c["crc_errors"] == 0
    store = SnapshotStore.open(tmp_path / "state.db")
    try:
        assert sdb.serial
        store.record_snapshot(sdb.serial, "sdb", c, ts=1.0)
        be.state.disks["sdb"].smart.crc_errors = 7
        later = be.smart("sdb")
        store.record_snapshot(sdb.serial, "sdb", counters_of(later), ts=2.0)
        assert store.first_counter(sdb.serial, "crc_errors") == 0
        assert first_crc_counts(store, {"sdb": later}) == {"sdb": 0}
        # no earlier count for a disk never recorded
        other = dataclasses.replace(later, serial="never-seen")
        assert first_crc_counts(store, {"sdb": other}) == {}
    finally:
        store.close()


def test_crc_rising_is_a_finding(tmp_path: Path) -> None:
    from app.report import report_findings

    be = SimulatedBackend.from_scenario("raid5-cable", clock=SimClock.manual())
    machine = be.probe()
    store = SnapshotStore.open(tmp_path / "state.db")
    try:
        sdd = be.smart("sdd")
        assert sdd.serial
        store.record_snapshot(sdd.serial, "sdd", counters_of(sdd), ts=1.0)  # 23 errors
        be.state.disks["sdd"].smart.crc_errors = 40
        readings = {d: be.smart(d) for d in ("sda", "sdb", "sdc", "sdd")}
        found = report_findings(be, machine, readings, store)
        rising = [f for f in found if f.code == "smart-crc-rising"]
        assert [(f.device, f.title) for f in rising] == [
            ("sdd", "sdd: interface CRC errors rising (23 -> 40)")
        ]
    finally:
        store.close()
