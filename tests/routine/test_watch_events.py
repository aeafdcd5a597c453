"""raidman's own alert events (issue 27 item 4: SelfTestFailed, WearHigh, SmartFailing,
BoostNotRestored, FindingNew) as ``raidman monitor`` raises them: the simulated machine and a
manual clock, the monitor's look then the routine's (tests/routine/rig.py), the program's argv
and environment as delivered."""

from __future__ import annotations

from pathlib import Path

from tests.routine.rig import Rig


def _short_test(rig: Rig, disk: str, fail_at: int | None) -> None:
    rig.b.state.disks[disk].smart.fail_test_at_lba = fail_at
    r = rig.b.run(["smartctl", "-t", "short", f"/dev/{disk}"])
    assert r.returncode == 0 and "Testing has begun" in r.stdout, r.stdout + r.stderr


def test_self_test_failed_once_per_failed_test_with_lba_and_hours(tmp_path: Path) -> None:
    rig = Rig(tmp_path, "imsm", interval_s=600)  # a SMART snapshot of every disk each 10 min
    rig.tick()
    assert rig.store.latest_snapshot("S2RBNX0H700001Q") is not None  # sda's, last test passed
    rig.run(900, step=30)
    assert rig.said("SelfTestFailed") == []

    _short_test(rig, "sda", 123456789)  # two minutes; a read failure at that LBA
    rig.run(1200, step=30, until=lambda: bool(rig.said("SelfTestFailed")))
    (env,) = rig.delivered("SelfTestFailed")
    hours = rig.b.smart("sda").self_tests[0].lifetime_hours  # type: ignore[index]
    assert hours is not None
    assert (env["RAIDMAN_ARRAY"], env["RAIDMAN_COMPONENT"]) == ("/dev/md126", "/dev/sda")
    assert env["RAIDMAN_TEST"] == "Short offline"
    assert env["RAIDMAN_LBA_FIRST_ERROR"] == "123456789"
    assert env["RAIDMAN_POWER_ON_HOURS"] == str(hours)
    assert env["RAIDMAN_ARRAYS"] == "md126,md125,md127"  # the volumes, then their container
    detail = env["RAIDMAN_DETAIL"]
    assert "sda" in detail and "at LBA 123456789" in detail and f"at {hours} power-on hours" in detail
    assert "Completed: read failure" in detail and "under md126, md125, md127" in detail
    argv = next(c[0] for c in rig.sent.calls if c[1] is env or c[1] == env)
    assert argv == (Rig.PROGRAM, "SelfTestFailed", "/dev/md126", "/dev/sda")

    # the same failed test in every later snapshot: not raised again (not merely folded)
    rig.run(3 * 3600, step=60)
    assert len(rig.said("SelfTestFailed")) == 1
    assert not [ln for ln in rig.said("SelfTestFailed") if "/dev/sdb" in ln]

    # a newer test that fails again (hours later, another LBA): raised again
    _short_test(rig, "sda", 987654321)
    rig.run(1200, step=30, until=lambda: len(rig.said("SelfTestFailed")) == 2)
    assert "at LBA 987654321" in rig.said("SelfTestFailed")[1]
    # then one that passes: nothing
    _short_test(rig, "sda", None)
    rig.run(3600, step=60)
    assert rig.b.smart("sda").self_tests[0].passed  # type: ignore[index]
    assert len(rig.said("SelfTestFailed")) == 2
    rig.close()


def test_self_test_failed_at_the_first_look_and_smart_failing(tmp_path: Path) -> None:
    """raid6-wd's sdb: SMART health FAILED and its last self-test stopped at an unreadable
    sector, both before the monitor started: both said at the first look (as mdadm says
    DegradedArray for an array first seen degraded), once each."""
    rig = Rig(tmp_path, "raid6-wd")
    rig.tick()
    (fail,) = rig.delivered("SmartFailing")
    assert (fail["RAIDMAN_ARRAY"], fail["RAIDMAN_COMPONENT"]) == ("/dev/md0", "/dev/sdb")
    (st,) = rig.delivered("SelfTestFailed")
    assert st["RAIDMAN_COMPONENT"] == "/dev/sdb" and st["RAIDMAN_LBA_FIRST_ERROR"] == "1234567890"
    assert rig.said("SelfTestFailed") and rig.said("SmartFailing")
    rig.run(2 * 3600, step=60)
    assert len(rig.said("SmartFailing")) == 1 and len(rig.said("SelfTestFailed")) == 1
    assert {e["RAIDMAN_COMPONENT"] for e in rig.delivered("SmartFailing")} == {"/dev/sdb"}
    rig.close()
