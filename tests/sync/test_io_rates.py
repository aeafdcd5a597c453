"""Live I/O (issue 26 item 5): rates from two /proc/diskstats samples, as iostat -x derives
them (Documentation/admin-guide/iostats.rst: field 4 reads completed, 6 sectors read, 7 ms
reading, 8 writes completed, 10 sectors written, 11 ms writing, 13 ms doing I/O)."""

from __future__ import annotations

import pytest

from app.model.live import DiskIO
from app.report import machine_to_json
from app.report_io import add_io_json, io_rates, io_text
from app.sync.throughput import rate_between
from backends.linux.io import parse_diskstats
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock

BEFORE = "   8      16 sdb 1000 0 80000 500 2000 0 160000 4000 0 3000 4500 0 0 0 0 0 0\n"
AFTER = "   8      16 sdb 1100 0 88000 560 2400 0 192000 4840 2 3500 5400 0 0 0 0 0 0\n"


def test_rates_from_two_diskstats_lines() -> None:
    (a,) = parse_diskstats(BEFORE)
    (b,) = parse_diskstats(AFTER)
    assert (a.read_time_ms, a.write_time_ms, a.busy_time_ms) == (500, 4000, 3000)
    r = rate_between(a, b, 2.0)
    assert r is not None
    assert r.read_bytes_s == 8000 * 512 / 2 and r.write_bytes_s == 32000 * 512 / 2
    assert (r.read_iops, r.write_iops) == (50.0, 200.0)
    assert r.util == pytest.approx(25.0)  # 500 ms busy of 2000
    assert r.await_ms == pytest.approx((60 + 840) / 500)  # ms waited / requests completed
    reset = DiskIO("sdb", 0, 0)
    assert rate_between(b, reset, 1.0) is None


def test_report_io_matches_the_counters_over_the_same_second() -> None:
    clk = SimClock.manual()
    be = SimulatedBackend.from_scenario("raid6-wd", clock=clk)
    machine = be.probe()
    first = {d.name: d for d in be.sample().disk_io}
    rates = io_rates(be, sleep=clk.advance)
    second = {d.name: d for d in be.sample().disk_io}
    sda = rates["sda"]
    assert sda.read_bytes_s == pytest.approx(second["sda"].read_bytes - first["sda"].read_bytes)
    assert sda.read_bytes_s > 10 * 2**20  # the recovery reads every in-sync member
    assert rates["sdf"].write_bytes_s == pytest.approx(
        second["sdf"].write_bytes - first["sdf"].write_bytes
    )
    report = machine_to_json(machine)
    add_io_json(report, rates, machine)
    sdf = next(d for d in report["disks"] if d["name"] == "sdf")
    assert sdf["io"]["write_bytes_s"] == round(rates["sdf"].write_bytes_s)
    assert set(sdf["io"]) == {
        "read_bytes_s", "write_bytes_s", "read_iops", "write_iops", "util", "await_ms"
    }  # fmt: skip
    member = next(m for m in report["arrays"][0]["members"] if m["device"] == "sdf1")
    assert member["io"] is not None and member["io"]["write_bytes_s"] > 0
    lines = io_text(rates, machine)
    assert lines[-1].split()[0] == "sdb"  # the failed disk, idle: last (busiest first)


def test_no_second_sample_no_rates() -> None:
    class Broken:
        def sample(self) -> object:
            raise OSError("gone")

    assert io_rates(Broken(), sleep=lambda s: None) == {}  # type: ignore[arg-type]
