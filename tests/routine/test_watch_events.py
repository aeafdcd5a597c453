"""raidman's own alert events (issue 27 item 4: SelfTestFailed, WearHigh, SmartFailing,
BoostNotRestored, FindingNew) as ``raidman monitor`` raises them: the simulated machine and a
manual clock, the monitor's look then the routine's (tests/routine/rig.py), the program's argv
and environment as delivered."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.routine.config import parse_config
from app.sync.boost import SYSCTL_MAX, BoostRecord, BoostStore
from app.wear.check_window import CheckWindow
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
    assert (
        "sda" in detail and "at LBA 123456789" in detail and f"at {hours} power-on hours" in detail
    )
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


@pytest.mark.parametrize(
    ("extra", "config", "sent"),
    [
        (0.6, "", True),  # 1.6 × the member > the default 1.5
        (0.0, "", False),  # a rebuild alone writes 1.00 × the member
        (0.4, "", False),  # 1.4 ×: below N
        (0.6, "[alerts]\nwear_high = 2.0\n", False),  # N from raidman.toml
        (0.6, "[alerts]\nwear_high = 1.2\n", True),
    ],
)
def test_wear_high_above_n_times_a_member(
    tmp_path: Path, extra: float, config: str, sent: bool
) -> None:
    """raid5-cable: md127 rebuilds its re-added member in full (1.00 × its size, the kernel's
    count of the member); the array's own writes during the rebuild (``extra`` × the member,
    striped onto it as onto the others) add to what the sync wrote to it."""
    cfg = dataclasses.replace(parse_config(config), check_every_s=0)
    rig = Rig(tmp_path, "raid5-cable", cfg)
    machine = rig.b.probe()
    (array,) = machine.arrays
    assert array.sync is not None and array.sync.action == "recover"
    (target,) = array.sync.targets
    part = machine.partition(target)
    assert part is not None
    size = part.size_bytes
    rig.tick()
    rig.run(600, step=60)
    rig.b.state.add_io(target, 0, int(extra * size))  # the file system's writes meanwhile
    rig.run(10 * 86400, step=60, until=lambda: bool(rig.said("RebuildFinished")))
    rig.run(120, step=60)
    got = rig.said("WearHigh")
    if not sent:
        assert got == [], got
        assert not [c for c in rig.sent.calls if c[1]["RAIDMAN_EVENT"] == "WearHigh"]
        rig.close()
        return
    (env,) = rig.delivered("WearHigh")
    assert (env["RAIDMAN_ARRAY"], env["RAIDMAN_COMPONENT"]) == ("/dev/md127", f"/dev/{target}")
    assert env["RAIDMAN_ACTION"] == "recover"
    assert int(env["RAIDMAN_BYTES_WRITTEN"]) == pytest.approx((1 + extra) * size, rel=0.01)
    assert f"wrote {1 + extra:.2f} × the size of {target}" in env["RAIDMAN_DETAIL"]
    assert len(got) == 1
    rig.close()


def _boosted(tmp_path: Path, previous: dict[str, str]) -> Rig:
    """raid10-evo's md127 resyncs with its speed ceiling raised by a boost (the record root's
    TUI wrote: what to put back when the resync ends)."""
    store = BoostStore(tmp_path / "boost.json")
    rig = Rig(tmp_path, "raid10-evo", boosts=store)
    r = rig.b.run(["sysctl", "-w", "dev.raid.speed_limit_max=500000"])
    assert r.returncode == 0, r.stderr
    store.add(
        BoostRecord(
            "md127",
            "resync",
            rig.b.now(),
            previous=previous,
            applied={f"sysctl:{SYSCTL_MAX}": "500000"},
        )
    )
    return rig


def test_boost_not_restored_a_minute_after_its_sync_ended(tmp_path: Path) -> None:
    # the record says to put back a stripe cache a RAID-10 does not have: the restore fails
    # (tee: No such file or directory) at every sample, and the raised ceiling stays
    rig = _boosted(
        tmp_path,
        {f"sysctl:{SYSCTL_MAX}": "200000", "sysfs:/sys/block/md127/md/stripe_cache_size": "256"},
    )
    rig.tick()
    rig.run(3 * 3600, step=5, until=lambda: bool(rig.said("RebuildFinished")))
    ended = rig.b.now()
    assert any("could not restore the boosted limits" in ln for ln in rig.lines), rig.lines[-5:]
    rig.run(55, step=5)
    assert rig.said("BoostNotRestored") == []  # a restore may still work within the minute
    rig.run(60, step=5, until=lambda: bool(rig.said("BoostNotRestored")))
    assert rig.b.now() - ended >= 60
    (env,) = rig.delivered("BoostNotRestored")
    assert env["RAIDMAN_ARRAY"] == "/dev/md127" and env["RAIDMAN_COMPONENT"] == ""
    assert f"sysctl:{SYSCTL_MAX}" in env["RAIDMAN_DETAIL"] and "resync" in env["RAIDMAN_DETAIL"]
    rig.run(1800, step=30)
    assert len(rig.said("BoostNotRestored")) == 1  # said once while the record stays
    rig.close()


def test_a_restored_boost_is_no_alert(tmp_path: Path) -> None:
    rig = _boosted(tmp_path, {f"sysctl:{SYSCTL_MAX}": "200000"})
    rig.tick()
    rig.run(3 * 3600, step=5, until=lambda: bool(rig.said("RebuildFinished")))
    rig.run(600, step=5)
    assert rig.b.read_text(f"/proc/sys/{SYSCTL_MAX.replace('.', '/')}") == "200000\n"
    assert any("boosted limits restored" in ln for ln in rig.lines)
    assert rig.said("BoostNotRestored") == []
    rig.close()


def test_check_mismatch_and_finding_new_when_mismatches_rise(tmp_path: Path) -> None:
    """raid5-cable's md127 after its rebuild: checked a month ago with 0 mismatches (in the
    history), a check now finds 256: CheckStarted / CheckFinished for the check (never mdadm's
    RebuildStarted / RebuildFinished: issue 38),
    CheckMismatch with the count, and the new error-level finding (mismatches rising on a parity
    level) as FindingNew, said once."""
    rig = Rig(tmp_path, "raid5-cable")
    machine = rig.b.probe()
    md = machine.array("md127")
    assert md is not None and md.level == "raid5"
    month_ago = rig.b.now() - 30 * 86400
    sid = rig.store.start_sync("md127", "check", ["sda1"], month_ago, array_uuid=md.uuid)
    rig.store.end_sync(sid, month_ago + 3600, "finished")
    rig.store.set_check_window(sid, CheckWindow(0, 1000, 1000, 0))
    rig.tick()
    rig.run(10 * 86400, step=60, until=lambda: bool(rig.said("RebuildFinished")))
    assert rig.said("FindingNew") == [] and rig.said("CheckMismatch") == []

    rig.b.state.arrays["md127"].mismatch_sectors_on_check = 256
    r = rig.b.run(["tee", "/sys/block/md127/md/sync_action"], stdin="check\n")
    assert r.returncode == 0, r.stderr
    rig.run(10 * 86400, step=60, until=lambda: bool(rig.said("CheckMismatch")))
    (started,) = rig.delivered("CheckStarted")
    assert started["RAIDMAN_ACTION"] == "check"
    assert started["RAIDMAN_MDADM_EVENT"] == "RebuildStarted"
    assert rig.said("RebuildStarted") == []  # the rebuild was running at the first look
    assert [e["RAIDMAN_ACTION"] for e in rig.delivered("RebuildFinished")] == ["recover"]
    (ended,) = rig.delivered("CheckFinished")
    assert (ended["RAIDMAN_ACTION"], ended["RAIDMAN_PERCENT"]) == ("check", "100.0%")
    (mism,) = rig.delivered("CheckMismatch")
    assert (mism["RAIDMAN_ARRAY"], mism["RAIDMAN_MISMATCH_CNT"]) == ("/dev/md127", "256")
    rig.run(120, step=10, until=lambda: bool(rig.said("FindingNew")))
    (new,) = rig.delivered("FindingNew")
    assert new["RAIDMAN_ARRAY"] == "/dev/md127"
    assert "found 256 mismatched sectors (the one before: 0)" in new["RAIDMAN_DETAIL"]
    rig.run(3600, step=60)
    assert len(rig.said("FindingNew")) == 1  # the same finding stays: not new again
    rig.close()
