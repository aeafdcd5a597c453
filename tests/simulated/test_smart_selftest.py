"""A SMART self-test as a plan on the simulator: started by the executor, running in simulated
time (``smartctl -j -c -l selftest`` says how far), logged when it ends, shown in the report
and judged by the audit; raid6-wd's failing disk carries a failed one."""

from __future__ import annotations

from pathlib import Path

from app.parsers.smartctl_json import reading_from_smartctl_json
from app.plans.audit_log import AuditLog
from app.plans.builders.smart_test import build_smart_test, progress_argv
from app.plans.executor import execute
from app.plans.guards.allowlist import argv_problem
from app.plans.guards.plan_devices import plan_problems
from app.report import full_report_json
from backends.linux.smart import read_smart
from backends.simulated import SimulatedBackend, selftest
from backends.simulated.clock import SimClock


def test_short_self_test_plan_runs_and_completes(tmp_path: Path) -> None:
    clk = SimClock.manual()
    be = SimulatedBackend.from_scenario("blank", clock=clk)
    machine = be.probe()
    plan = build_smart_test(machine, "nvme0n1", "short")
    assert plan.steps[0].argv == ("smartctl", "-t", "short", "/dev/nvme0n1")
    assert not plan.destructive and plan_problems(plan, machine) == []
    before = be.smart("nvme0n1").self_tests
    rep = execute(plan, be, audit=AuditLog(tmp_path / "audit.log"))
    assert rep.ok, rep
    assert (
        '"argv": ["smartctl", "-t", "short", "/dev/nvme0n1"]'
        in (tmp_path / "audit.log").read_text()
    )

    clk.advance(30)
    res = be.run(list(progress_argv("nvme0n1")))
    running = reading_from_smartctl_json(res.stdout, "nvme0n1")
    assert running.self_test_remaining == 75  # 30 of 120 s
    again = be.run(["smartctl", "-t", "short", "/dev/nvme0n1"])
    assert again.returncode == 4 and "75% remaining" in again.stdout

    clk.advance(100)
    done = be.smart("nvme0n1")
    assert done.self_test_remaining is None
    assert done.self_tests is not None and before is not None
    assert len(done.self_tests) == len(before) + 1
    assert (done.self_tests[0].kind, done.self_tests[0].passed) == ("Short", True)
    # the Linux read path over the simulator's smartctl says the same
    linux = read_smart(be.run, "nvme0n1")
    assert linux.self_tests == done.self_tests
    j = full_report_json(be, be.probe(), findings=False)
    disk = next(d for d in j["disks"] if d["name"] == "nvme0n1")
    assert disk["smart"]["self_tests"][0] == {
        "kind": "Short",
        "status": "Completed without error",
        "passed": True,
        "lifetime_hours": done.self_tests[0].lifetime_hours,
        "lba_first_error": None,
        "remaining_percent": None,
    }
    assert disk["smart"]["nvme_health"]["critical_warning"] == 0


def test_failing_disk_in_raid6_wd() -> None:
    """raid6-wd's sdb (the member md failed): Reallocated_Sector_Ct below its threshold, 24
    pending sectors, and its last self-test stopped at an unreadable sector."""
    be = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    j = full_report_json(be, be.probe())
    sdb = next(d for d in j["disks"] if d["name"] == "sdb")["smart"]
    failing = [a["name"] for a in sdb["attributes"] if a["failing"]]
    assert failing == ["Reallocated_Sector_Ct"]
    assert sdb["self_tests"][0]["passed"] is False
    assert sdb["self_tests"][0]["lba_first_error"] == 1234567890
    assert sdb["error_count"] == 1
    codes = {(f["code"], f["device"]) for f in j["findings"]}
    assert {
        ("smart-selftest-failed", "sdb"),
        ("smart-attribute-failing", "sdb"),
        ("smart-prefail", "sdb"),
    } <= codes
    assert not any(c == "smart-selftest-failed" and d != "sdb" for c, d in codes)
    # a long test on it ends in the same read failure, after size / sequential rate
    clk = SimClock.manual()
    be = SimulatedBackend.from_scenario("raid6-wd", clock=clk)
    assert be.run(["smartctl", "-t", "long", "/dev/sdb"]).ok
    hours = selftest.duration_s(be.state.disks["sdb"], "long") / 3600
    assert 1.5 < hours < 3  # 1 TB read at the disk's sequential rate (WD10EFRX: about 2 h)
    clk.advance(3600)
    assert 30 < (be.smart("sdb").self_test_remaining or 0) < 70
    clk.advance(2 * 3600)
    last = be.smart("sdb").self_tests
    assert last is not None and last[0].kind == "Extended offline" and last[0].passed is False


def test_never_run_finding_offers_the_short_test() -> None:
    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    be.state.disks["nvme2n1"].smart.self_tests.clear()
    j = full_report_json(be, be.probe())
    (f,) = [f for f in j["findings"] if f["code"] == "smart-selftest-never"]
    assert f["device"] == "nvme2n1"
    assert f["fix"] == [["smartctl", "-t", "short", "/dev/nvme2n1"]]


def test_allowlist_takes_only_the_self_test_shape() -> None:
    assert argv_problem(("smartctl", "-t", "long", "/dev/sda")) is None
    for argv in (
        ("smartctl", "-t", "offline", "/dev/sda"),
        ("smartctl", "-s", "off", "/dev/sda"),
        ("smartctl", "-t", "short", "/dev/../etc/passwd"),
        ("smartctl", "-t", "short", "/dev/sda", "-d", "sat"),
    ):
        assert argv_problem(argv) is not None, argv
