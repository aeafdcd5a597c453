"""Check history (issue 27 item 2-3): every check/repair window recorded in the wear database,
a window that resumes at md's sync_min continuing the same record, shown in report --json
(arrays[].checks), the Sync tab's line, the metrics and the findings."""

from __future__ import annotations

import re
from pathlib import Path

from app.metrics import collect, gather_input, render
from app.model.devices import Machine, MdArray, MdMember
from app.monitor import WearMonitor
from app.report import full_report_json
from app.wear.check_findings import check_findings
from app.wear.check_window import CheckWindow
from app.wear.checks import check_records, checks_of, history_line
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimClock, SimulatedBackend

MD = "/sys/block/md126/md"


def _tee(b: SimulatedBackend, attr: str, value: str) -> None:
    r = b.run(["tee", f"{MD}/{attr}"], stdin=value + "\n")
    assert r.returncode == 0, r.stderr


def _until_idle(b: SimulatedBackend, clock: SimClock, mon: WearMonitor) -> None:
    for _ in range(5000):
        clock.advance(30)
        mon.tick()
        if all(a.sync is None for a in b.sample().arrays):
            mon.tick()
            return
    raise AssertionError("the check never ended")


def test_interrupted_check_resumed_at_sync_min_is_one_record(tmp_path: Path) -> None:
    clock = SimClock.manual()
    b = SimulatedBackend.from_scenario("imsm", clock=clock)
    b.state.arrays["md126"].mismatch_sectors_on_check = 256
    store = SnapshotStore.open(tmp_path / "state.db")
    lines: list[str] = []
    mon = WearMonitor(b, store, interval_s=3600, log=lines.append)
    mon.tick()
    _tee(b, "sync_action", "check")
    for _ in range(6):
        clock.advance(30)
        mon.tick()
    _tee(b, "sync_action", "idle")  # the window's end: md keeps the position in sync_min
    clock.advance(1)
    mon.tick()
    stopped_at = int(b.read_text(f"{MD}/sync_min") or 0)
    assert stopped_at > 0
    clock.advance(120)
    mon.tick()
    _tee(b, "sync_action", "check")
    _until_idle(b, clock, mon)
    assert (b.read_text(f"{MD}/sync_min") or "").strip() == "0"  # finished: md forgets the position

    uuid = b.probe().array("md126").uuid  # type: ignore[union-attr]
    (rec,) = checks_of(store, "md126", uuid)
    assert rec.finished and rec.resumed == 1
    first, second = rec.windows
    assert first.outcome == "interrupted" and second.outcome == "finished"
    assert second.window is not None and first.window is not None
    # where md began each window: md/sync_min while it runs (0, then where the first stopped)
    assert first.window.from_sector == 0 and second.window.from_sector == stopped_at
    assert second.window.continues == first.id
    assert first.window.to_sector is not None and first.window.to_sector <= stopped_at
    # md counts mismatches per window (reset as each begins): the record sums them
    assert rec.mismatch_cnt == sum(w.window.mismatch_cnt or 0 for w in rec.windows) > 0
    assert rec.duration_s == sum((w.ended_at or 0) - w.started_at for w in rec.windows)
    assert any(
        re.search(r"check resumes at [0-9.]+% \(sector \d+\): check #1, window 2", ln)
        for ln in lines
    ), lines

    machine = b.probe()
    doc = full_report_json(b, machine, smart=False, findings=False, store=store)
    (arr,) = [a for a in doc["arrays"] if a["name"] == "md126"]
    (check,) = arr["checks"]
    assert [w["from_sector"] for w in check["windows"]][1] == second.window.from_sector
    assert {"start", "end", "duration_s", "outcome", "mismatch_cnt", "windows", "members"} <= set(
        check
    )
    assert {m["device"] for m in check["members"]} == {"sda", "sdb"}
    assert check["outcome"] == "finished" and check["mismatch_cnt"] == rec.mismatch_cnt

    text = render(collect(gather_input(b, machine, store, smart="none", findings=False)))
    assert (
        f'raidman_md_last_check_mismatches{{array="md126",uuid="{uuid}",level="raid1"}} {rec.mismatch_cnt}'
        in text
    )
    assert (
        f'raidman_md_last_check_timestamp_seconds{{array="md126",uuid="{uuid}",level="raid1"}} {int(rec.end or 0)}'
        in text
    )


def _check(
    store: SnapshotStore,
    at: float,
    mism: int | None,
    outcome: str = "finished",
    level_arr: str = "md0",
) -> int:
    sid = store.start_sync(level_arr, "check", ["sda1"], at, array_uuid="u0")
    store.end_sync(sid, at + 3600, outcome)
    store.set_check_window(sid, CheckWindow(0, 1000, 1000 if outcome == "finished" else 2000, mism))
    return sid


def test_history_line_shows_the_trend(tmp_path: Path) -> None:
    store = SnapshotStore.open(tmp_path / "state.db")
    day = 86400.0
    for i, n in enumerate((0, 0, 128, 130)):
        _check(store, 1e9 + i * 30 * day, n)
    recs = check_records(store.syncs_for("md0", "u0"))
    line = history_line(recs, 1e9 + 93 * day + 3600)
    assert line == "last check 3 days ago, 1h 00m, 130 mismatches; before: 0, 0, 128 ↑"
    assert history_line([], 0) == "never checked"


def _machine(level: str) -> Machine:
    return Machine(
        "h1",
        "6.1",
        arrays=(
            MdArray(
                "md0", level, raid_disks=2, uuid="u0", members=(MdMember("sda1", 0, ("in_sync",)),)
            ),
        ),
    )


def test_findings_never_overdue_mismatch_rising_interrupted(tmp_path: Path) -> None:
    day = 86400.0
    t0 = 1e9
    store = SnapshotStore.open(tmp_path / "state.db")
    store.record_snapshot("S1", "sda", {}, ts=t0)
    codes = lambda m, now, **kw: {f.code: f for f in check_findings(store, m, now, **kw)}  # noqa: E731
    raid6 = _machine("raid6")
    # no record of this array (made since, on disks raidman never read): it cannot say
    assert "md-never-checked" not in codes(raid6, t0 + 40 * day)
    sid = store.start_sync("md0", "resync", ["sda1"], t0, array_uuid="u0")  # its initial sync
    store.end_sync(sid, t0 + 600, "finished")
    assert "md-never-checked" not in codes(raid6, t0 + 10 * day)  # watched 10 days: can't say
    assert "md-never-checked" in codes(raid6, t0 + 40 * day)
    assert "md-never-checked" in codes(raid6, t0 + 2 * day, max_age_days=1)

    _check(store, t0 + 0.5 * day, None, outcome="interrupted")  # begun: no longer "never"
    assert not codes(raid6, t0 + 40 * day, max_age_days=1)
    _check(store, t0 + 1 * day, 0)
    f = codes(raid6, t0 + 2 * day)
    assert not f
    assert "md-check-overdue" in codes(raid6, t0 + 40 * day)
    _check(store, t0 + 3 * day, 64)
    f = codes(raid6, t0 + 4 * day)
    assert f["md-check-mismatches"].severity == "error"  # rising, on parity
    raid1 = _machine("raid1")
    f = codes(raid1, t0 + 4 * day)
    assert set(f) == {"md-check-mismatches-rising"}
    assert "swap" in f["md-check-mismatches-rising"].detail
    _check(store, t0 + 5 * day, 64)  # the same count again: not rising; on RAID-1 nothing
    assert not codes(raid1, t0 + 6 * day)
    assert codes(raid6, t0 + 6 * day)["md-check-mismatches"].severity == "warning"
    for i in range(3):
        _check(store, t0 + (7 + i) * day, None, outcome="interrupted")
    assert "md-check-interrupted" in codes(raid1, t0 + 10 * day)


def test_a_window_stopped_after_the_last_look_ends_where_md_resumes(tmp_path: Path) -> None:
    """The check went on between the monitor's last look and the stop (the VM saw 80640 as the
    last position and md resumed at 81320): the first window's end is raised to where md
    resumes it (md/sync_min, md.c md_do_sync: resync_min = curr_resync_completed), so the
    windows meet: none looks skipped."""
    clock = SimClock.manual()
    b = SimulatedBackend.from_scenario("imsm", clock=clock)
    store = SnapshotStore.open(tmp_path / "state.db")
    mon = WearMonitor(b, store, interval_s=3600, log=lambda _line: None)
    mon.tick()
    _tee(b, "sync_action", "check")
    for _ in range(3):
        clock.advance(30)
        mon.tick()
    clock.advance(20)  # md checks on; nobody looks
    _tee(b, "sync_action", "idle")
    clock.advance(1)
    mon.tick()
    stopped_at = int(b.read_text(f"{MD}/sync_min") or 0)
    uuid = b.probe().array("md126").uuid  # type: ignore[union-attr]
    (rec,) = checks_of(store, "md126", uuid)
    (only,) = rec.windows
    assert only.window is not None and 0 < (only.window.to_sector or 0) < stopped_at
    clock.advance(60)
    _tee(b, "sync_action", "check")
    clock.advance(5)
    mon.tick()
    (rec,) = checks_of(store, "md126", uuid)
    first, second = rec.windows
    assert first.window is not None and second.window is not None
    assert first.window.to_sector == second.window.from_sector == stopped_at
