"""Scheduled checks (issue 27 item 1) on the simulated backend: a window every 2 minutes of
30 s; the monitor starts the check, stops it at the window's end, resumes it from md's sync_min
in the next window; never on a degraded array (logged and in the history)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.monitor import WearMonitor
from app.routine.config import ConfigError, RoutineConfig, parse_config
from app.routine.schedule import autocheck_on, window_at
from app.routine.scheduler import CheckScheduler
from app.wear.checks import checks_of
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimClock, SimulatedBackend
from tests.routine.rig import Rig


def _run(
    b: SimulatedBackend, clock: SimClock, mon: WearMonitor, sched: CheckScheduler, seconds: int
) -> None:
    for _ in range(seconds // 5):
        clock.advance(5)
        mon.tick()
        v = mon.session.view
        sched.tick(b.now(), v.live, v.machine)


def test_window_stops_and_resumes_at_sync_min(tmp_path: Path) -> None:
    clock = SimClock.manual()
    b = SimulatedBackend.from_scenario("imsm", clock=clock)
    b.state.speed_limit_max = 20_000  # ~100 GB member at 20 MB/s: many windows
    store = SnapshotStore.open(tmp_path / "state.db")
    lines: list[str] = []
    mon = WearMonitor(b, store, interval_s=3600, log=lines.append)
    cfg = RoutineConfig(check_every_s=120, check_window_s=30)
    sched = CheckScheduler(b, store, cfg, log=lines.append, lock=mon.store_lock)
    mon.tick()
    _run(b, clock, mon, sched, 240)
    uuid = b.probe().array("md126").uuid  # type: ignore[union-attr]
    (rec,) = checks_of(store, "md126", uuid)
    assert [w.outcome for w in rec.windows] == ["interrupted", "interrupted"]
    first, second = rec.windows
    assert first.window and second.window
    assert (second.window.from_sector or 0) >= (first.window.to_sector or 1) > 0
    assert all(w.ended_at is not None and w.ended_at - w.started_at <= 35 for w in rec.windows)
    assert any("scheduled check resumed at sector" in ln for ln in lines), lines
    assert any("check window ended" in ln for ln in lines)
    # md125 is RAID-0: nothing to check
    assert not checks_of(store, "md125", None)


def test_never_started_on_a_degraded_array(tmp_path: Path) -> None:
    clock = SimClock.manual()
    b = SimulatedBackend.from_scenario("raid5-cable", clock=clock)  # degraded, recovering
    store = SnapshotStore.open(tmp_path / "state.db")
    lines: list[str] = []
    mon = WearMonitor(b, store, interval_s=3600, log=lines.append)
    sched = CheckScheduler(
        b, store, RoutineConfig(check_every_s=120, check_window_s=30), log=lines.append
    )
    mon.tick()
    _run(b, clock, mon, sched, 250)  # windows begin 40 s and 160 s in
    recs = checks_of(store, "md127", b.probe().array("md127").uuid)  # type: ignore[union-attr]
    assert [r.outcome for r in recs] == ["not started: the array is degraded"] * 2
    assert sum("scheduled check not started: the array is degraded" in ln for ln in lines) == 2


def test_windows_and_autocheck() -> None:
    cfg = RoutineConfig(check_every_s=120, check_window_s=30)
    assert window_at(1200.0, cfg) == (1200.0, 1230.0)
    assert window_at(1231.0, cfg) is None
    monthly = RoutineConfig()
    import datetime as dt

    sunday = dt.datetime(2026, 11, 1, 3, 0).timestamp()  # first Sunday of Nov 2026
    w = window_at(sunday, monthly)
    assert w is not None and w[1] - w[0] == 6 * 3600
    assert window_at(dt.datetime(2026, 11, 8, 3, 0).timestamp(), monthly) is None
    assert autocheck_on("AUTOCHECK=true\nSTART_DAEMON=true\n")
    assert not autocheck_on("AUTOCHECK=false\n")
    assert not autocheck_on(None)


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ('[checks]\nevery = "soon"', "checks.every: 'soon' is not a duration"),
        ("[checks]\nwindow = 5", "checks.window is not a line of text"),
        ('[alerts]\nprogram = "x; rm -rf /"', "program must be an absolute path"),
        ('[alerts]\nmailaddr = "a\\nBcc: b"', "mailaddr is not a line of text"),
        ("[checks]\nbogus = 1", "unknown key 'bogus'"),
        ("x = [" * 20 + "]" * 20, "nested deeper"),
        ("[checks", "not TOML"),
    ],
)
def test_config_out_of_shape_is_one_line(text: str, msg: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_config(text, "raidman.toml")
    assert (
        msg in str(e.value) and str(e.value).startswith("raidman.toml") and "\n" not in str(e.value)
    )


def test_config_keys() -> None:
    c = parse_config(
        '[checks]\nevery = "2m"\nwindow = "30s"\nmax_age_days = 7\narrays = ["md0"]\n'
        '[alerts]\nprogram = "/usr/local/bin/alert"\nmailaddr = "root"\ncooldown = "1m"\n'
    )
    assert (c.check_every_s, c.check_window_s, c.max_age_days, c.arrays) == (120, 30, 7, ("md0",))
    assert (c.alert_program, c.mailaddr, c.cooldown_s) == ("/usr/local/bin/alert", "root", 60)


def test_schedule_plans_pass_the_allowlist_and_nothing_else_does() -> None:
    from app.plans.builders.check_schedule import DROPIN, schedule_plan, unschedule_plan
    from app.plans.guards.allowlist import plan_step_problems
    from app.plans.guards.plan_devices import plan_problems

    for p in (schedule_plan(), schedule_plan("2m", "30s"), unschedule_plan()):
        assert plan_step_problems(p) == [] and plan_problems(p) == []
        assert not p.destructive
    assert "Environment=RAIDMAN_CHECK_EVERY=2m" in (schedule_plan("2m", "30s").steps[1].stdin or "")
    from app.plans.guards.allowlist import argv_problem

    assert argv_problem(("tee", DROPIN), "[Service]\nExecStart=/bin/sh -c id\n")
    assert argv_problem(("rm", "-rf", "/"))
    with pytest.raises(ValueError):
        schedule_plan("7d; reboot", "6h")


def test_an_array_with_its_own_schedule() -> None:
    c = parse_config('[checks]\nevery = "2m"\nwindow = "30s"\n[checks.md126]\nevery = "10m"\n')
    own = c.for_array("md126")
    assert (own.check_every_s, own.check_window_s) == (600, 30)
    assert c.for_array("md127") is c
    assert window_at(1200.0, own) == (1200.0, 1230.0) and window_at(1320.0, own) is None
    assert window_at(1320.0, c.for_array("md127")) == (1320.0, 1350.0)
    with pytest.raises(ConfigError, match=r"\[checks.md126\] has an unknown key 'arrays'"):
        parse_config('[checks.md126]\narrays = ["md1"]\n')


def _checking(rig: Rig) -> set[str]:
    """The arrays md runs (or holds, resync=DELAYED) a check of now."""
    return {
        n for n, a in rig.b.state.arrays.items() if a.job is not None and a.job.action == "check"
    }


def test_arrays_sharing_a_disk_are_checked_one_after_another(tmp_path: Path) -> None:
    """raid10-evo's md127 (sda2..sdd2) and a RAID-5 md126 made on sdb1..sdd1: three disks in
    common. Each window checks both, never at the same time (md would hold the second one
    DELAYED behind the first anyway, md.c md_do_sync, while its window passes)."""
    rig = Rig(
        tmp_path, "raid10-evo", RoutineConfig(check_every_s=6 * 3600, check_window_s=3 * 3600)
    )
    r = rig.b.run(
        ["mdadm", "--create", "/dev/md126", "--run", "--level=5", "--raid-devices=3",
         "/dev/sdb1", "/dev/sdc1", "/dev/sdd1"]
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    # md126's own ceiling, 10 MB/s: its check lasts ~50 s, several looks (one that begins and
    # ends between two looks is not seen by the recorder)
    r = rig.b.run(["tee", "/sys/block/md126/md/sync_speed_max"], stdin="10000\n")
    assert r.returncode == 0, r.stderr
    rig.tick()
    together: list[float] = []
    seen: set[str] = set()

    def look() -> None:
        now = _checking(rig)
        seen.update(now)
        if len(now) > 1:
            together.append(rig.b.now())

    for _ in range(8 * 360):  # 8 h, a look every 10 s
        rig.clock.advance(10)
        rig.tick()
        look()
    assert seen == {"md126", "md127"} and together == []
    small = checks_of(rig.store, "md126", rig.b.probe().array("md126").uuid)  # type: ignore[union-attr]
    big = checks_of(rig.store, "md127", rig.b.probe().array("md127").uuid)  # type: ignore[union-attr]
    # two windows (6 h apart) in 8 h: in each, the smaller first, the other after its end
    assert [c.finished for c in small] == [c.finished for c in big] == [True, True]
    for first, second in zip(small, big, strict=True):
        assert first.end is not None and first.end <= second.start < first.start + 3 * 3600
    assert any("md127: scheduled check started" in ln for ln in rig.lines)
    rig.close()


def test_not_started_while_the_array_resyncs_then_started(tmp_path: Path) -> None:
    """raid10-evo's md127 resyncs for ~12 more minutes: the windows in that time skip it (the
    log and the history say why), the first window after the resync checks it."""
    rig = Rig(tmp_path, "raid10-evo", RoutineConfig(check_every_s=120, check_window_s=30))
    rig.tick()
    rig.run(3600, step=5, until=lambda: bool(_checking(rig)))
    uuid = rig.b.probe().array("md127").uuid  # type: ignore[union-attr]
    recs = checks_of(rig.store, "md127", uuid)
    skipped = [r for r in recs if r.skipped]
    assert skipped and {r.outcome for r in skipped} == {"not started: the array is busy (resync)"}
    assert rig.said("RebuildFinished")  # the resync ended before the check began
    assert sum(
        "scheduled check not started: the array is busy (resync)" in ln for ln in rig.lines
    ) == len(skipped)
    rig.close()


def test_autocheck_leaves_the_checks_to_debian_until_the_reload_says_otherwise(
    tmp_path: Path,
) -> None:
    """/etc/default/mdadm AUTOCHECK=true: Debian's checkarray cron runs the monthly check, so
    raidman starts none (no two schedulers); ``ignore_autocheck = true`` in [checks], taken in
    by a reload (what SIGHUP does: Routine.configure), lets raidman schedule them."""
    cfg = RoutineConfig(check_every_s=120, check_window_s=30)
    rig = Rig(tmp_path, "imsm", cfg)
    rig.b.state.files["/etc/default/mdadm"] = "# mdadm Debian configuration\nAUTOCHECK=true\n"
    rig.routine.configure(rig.routine.cfg)  # the file is read as the configuration is taken in
    assert any(
        "left to Debian's checkarray (AUTOCHECK=true in /etc/default/mdadm)" in ln
        for ln in rig.lines
    )
    rig.tick()
    rig.run(600, step=5)
    uuid = rig.b.probe().array("md126").uuid  # type: ignore[union-attr]
    assert not _checking(rig) and not checks_of(rig.store, "md126", uuid)
    rig.routine.configure(dataclasses.replace(rig.routine.cfg, ignore_autocheck=True))
    rig.run(240, step=5, until=lambda: bool(_checking(rig)))
    assert _checking(rig) == {"md126"}
    assert any("md126: scheduled check started" in ln for ln in rig.lines)
    rig.close()


def test_not_started_while_the_array_reshapes(tmp_path: Path) -> None:
    rig = Rig(tmp_path, "blank", RoutineConfig(check_every_s=120, check_window_s=30))
    r = rig.b.run(
        ["mdadm", "--create", "/dev/md0", "--run", "--level=5", "--raid-devices=3",
         "/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1"]
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rig.clock.advance(86400)  # its initial sync is over
    for argv in (["mdadm", "/dev/md0", "--add", "/dev/nvme3n1"],
                 ["mdadm", "--grow", "/dev/md0", "--raid-devices=4"]):  # fmt: skip
        r = rig.b.run(argv)
        assert r.returncode == 0, r.stderr
    rig.tick()
    rig.run(600, step=5)
    assert not _checking(rig)
    uuid = rig.b.probe().array("md0").uuid  # type: ignore[union-attr]
    recs = checks_of(rig.store, "md0", uuid)
    assert len(recs) >= 4 and {r.outcome for r in recs} == {"not started: the array is reshaping"}
    rig.close()


def test_check_every_on_the_command_line_wins_over_autocheck(tmp_path: Path) -> None:
    """Issue 39: with AUTOCHECK=true the monitor left the checks to checkarray even with
    --check-every given (no check ever ran in the VM): the command line is the admin's word;
    a line says Debian's cron runs too."""
    import argparse

    from app.commands.monitor import routine_config

    conf = tmp_path / "raidman.toml"
    conf.write_text("")
    args = argparse.Namespace(
        config=str(conf), check_every="2m", check_window="30s", alert_program=None, mailaddr=None
    )
    cfg = routine_config(args)
    assert cfg.ignore_autocheck and cfg.schedule_from == "--check-every"
    rig = Rig(tmp_path, "imsm", cfg)
    rig.b.state.files["/etc/default/mdadm"] = "AUTOCHECK=true\n"
    rig.routine.configure(rig.routine.cfg)
    assert not any("left to Debian's checkarray" in ln for ln in rig.lines)
    assert any(
        "Debian's checkarray also runs from cron" in ln and "(--check-every given)" in ln
        for ln in rig.lines
    ), rig.lines
    rig.tick()
    rig.run(240, step=5, until=lambda: bool(_checking(rig)))
    assert _checking(rig) == {"md126"}
    rig.close()
