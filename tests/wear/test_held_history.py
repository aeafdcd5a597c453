"""Nothing lost (issue 23, item 9): a monitor that starts while the wear database is locked or
the disk is full held every snapshot in memory for its whole run and never wrote them (8 of 8
lost at exit after space came back). Now what is held is written as soon as the database
accepts it — at the next try during the run, or at exit — and memory is bounded."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.cli import main
from app.wear import held, snapshots
from app.wear.snapshots import SnapshotStore


def _count(p: Path, table: str) -> int:
    c = sqlite3.connect(p)
    try:
        return int(c.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        c.close()


def _locked_store(p: Path) -> tuple[SnapshotStore, sqlite3.Connection]:
    SnapshotStore.open(p).close()
    c = sqlite3.connect(p)
    c.execute("PRAGMA journal_mode=DELETE")  # a rollback journal: even readers wait
    c.close()
    holder = sqlite3.connect(p, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    s = SnapshotStore.open(p, attempts=1, retry_delay_s=0, busy_timeout_s=0.05)
    return s, holder


def test_held_history_is_written_once_the_lock_is_gone(tmp_path: Path) -> None:
    p = tmp_path / "state.db"
    s, holder = _locked_store(p)
    assert s.path is None and s.holding == p
    assert any("written to it as soon as it accepts" in n for n in s.notes)
    sid = s.start_sync("md0", "resync", ["sda1", "sdb1"], at=100.0)
    for i in range(8):
        s.record_snapshot(f"SER{i}", "sda", {"bytes_written": i}, ts=100.0 + i, sync_id=sid)
    assert s.try_attach(force=True) is None  # still locked: nothing lost, nothing said
    holder.rollback()
    holder.close()
    line = s.try_attach(force=True)
    assert line is not None and "wrote the 8 snapshot(s) and 1 sync record(s)" in line
    assert s.path == p and s.holding is None
    s.end_sync(sid, at=200.0)  # the recorder's id still names its sync in the file
    s.record_snapshot("SER9", "sda", {}, ts=201.0)
    s.close()
    assert _count(p, "snapshots") == 9
    again = SnapshotStore.open(p)
    ev = again.sync(sid)
    assert ev is not None and ev.ended_at == 200.0
    assert len(again.snapshots_for("SER3")) == 1
    again.close()


def test_held_history_is_written_at_exit(tmp_path: Path) -> None:
    p = tmp_path / "state.db"
    s, holder = _locked_store(p)
    for i in range(8):
        s.record_snapshot("SER", "sda", {}, ts=float(i))
    holder.rollback()
    holder.close()
    s.close()  # the space/lock came back before the end of the run
    assert _count(p, "snapshots") == 8


def test_memory_is_bounded_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(held, "MAX_HELD_SNAPSHOTS", 100)
    p = tmp_path / "state.db"
    s, holder = _locked_store(p)
    for i in range(1, 451):
        s.record_snapshot("SER", "sda", {}, ts=float(i))
    holder.rollback()
    holder.close()
    line = s.try_attach(force=True)
    assert line is not None and "older ones were dropped" in line
    s.close()
    c = sqlite3.connect(p)
    ts = [r[0] for r in c.execute("SELECT ts FROM snapshots ORDER BY ts")]
    c.close()
    assert 100 <= len(ts) <= 200 and ts[-1] == 450.0  # the newest are kept


def test_monitor_started_on_a_full_disk_writes_its_snapshots_at_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "state.db"
    SnapshotStore.open(db).close()
    real_check = SnapshotStore._check
    full = {"on": True}

    def check(conn: sqlite3.Connection) -> None:
        if full["on"] and conn.execute("PRAGMA database_list").fetchone()[2]:
            raise sqlite3.OperationalError("database or disk is full")
        real_check(conn)

    monkeypatch.setattr(SnapshotStore, "_check", staticmethod(check))
    monkeypatch.setattr(snapshots, "RETRY_DELAY_S", 0.0)
    real_tick = snapshots.SnapshotStore.record_snapshot

    def record(self: SnapshotStore, *a: object, **kw: object) -> int:
        full["on"] = False  # space comes back while the monitor runs
        return real_tick(self, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(SnapshotStore, "record_snapshot", record)
    assert main(["monitor", "--once", "--demo", "raid6-wd", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "accepts writes again" in out
    assert _count(db, "snapshots") >= 6  # one per disk of raid6-wd, none lost
