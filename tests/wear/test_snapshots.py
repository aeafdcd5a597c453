"""The wear database: location rules, reopen, corrupt and missing files."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from app.wear.records import SyncMember
from app.wear.snapshots import SnapshotStore, default_db_path, default_state_dir


def test_location_rules(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "x"))
    assert default_db_path() == tmp_path / "x" / "state.db"
    monkeypatch.delenv("RAIDMAN_STATE_DIR")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert default_state_dir() == Path("/var/lib/raidman")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_state_dir() == tmp_path / "xdg" / "raidman"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_state_dir() == tmp_path / "home" / ".local" / "state" / "raidman"


def test_env_dir_used_by_open(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "deep" / "er"))
    s = SnapshotStore.open()
    assert s.path == tmp_path / "deep" / "er" / "state.db" and s.path.exists()
    assert s.notes == []


def test_survives_reopen(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    s = SnapshotStore.open(db)
    s.record_snapshot(
        "S1", "sdd", {"bytes_written": 603302987 * 512, "wear_used": 3}, ts=10.0, reason="start"
    )
    sid = s.start_sync("md127", "recover", [SyncMember("sdd1", "sdd", "S1")], at=20.0)
    s.record_snapshot(
        "S1", "sdd", {"bytes_written": 3763859973 * 512}, ts=20.0, reason="sync-start", sync_id=sid
    )
    s.end_sync(sid, at=3000.0)
    s.close()

    s2 = SnapshotStore.open(db)
    assert s2.notes == []
    snaps = s2.snapshots_for("S1")
    assert [x.ts for x in snaps] == [10.0, 20.0]
    assert snaps[0].bytes_written == 603302987 * 512 and snaps[0].wear_used == 3
    assert snaps[1].sync_id == sid and snaps[1].reason == "sync-start"
    assert s2.snapshots_for("S1", since=15.0) == [snaps[1]]
    (ev,) = s2.syncs_for("md127")
    assert (ev.action, ev.started_at, ev.ended_at, ev.outcome) == (
        "recover",
        20.0,
        3000.0,
        "finished",
    )
    assert ev.members == (SyncMember("sdd1", "sdd", "S1"),)
    assert s2.syncs_for("md0") == [] and s2.running_syncs() == []


@pytest.mark.parametrize(
    "content", [b"this is not a database" * 100, b"SQLite format 3\x00" + b"\xff" * 4000]
)
def test_corrupt_file_is_moved_aside_and_rebuilt(tmp_path: Path, content: bytes) -> None:
    db = tmp_path / "state.db"
    db.write_bytes(content)
    s = SnapshotStore.open(db)
    assert len(s.notes) == 1 and "moved aside" in s.notes[0]
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("state.db.corrupt-")]
    assert len(aside) == 1 and aside[0].read_bytes() == content
    s.record_snapshot("S", "sda", {"bytes_written": 1}, ts=1.0)
    assert [x.bytes_written for x in s.snapshots_for("S")] == [1]
    s.close()
    assert SnapshotStore.open(db).notes == []


def test_foreign_sqlite_file_is_replaced(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE snapshots (x INTEGER)")
    c.commit()
    c.close()
    s = SnapshotStore.open(db)
    assert s.notes and "moved aside" in s.notes[0]
    s.record_snapshot("S", "sda", {}, ts=1.0)


def test_unwritable_dir_falls_back_to_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    s = SnapshotStore.open(blocker / "sub" / "state.db")  # parent is a file: cannot mkdir
    assert s.path is None and s.notes and "memory" in s.notes[0]
    s.record_snapshot("S", "sda", {"bytes_written": 5}, ts=1.0)
    assert s.snapshots_for("S")[0].bytes_written == 5


def test_running_sync_and_lookups(tmp_path: Path) -> None:
    s = SnapshotStore.open(tmp_path / "state.db")
    sid = s.start_sync("md0", "resync", ["sda", "sdb"], at=5.0)
    assert [e.id for e in s.running_syncs()] == [sid]
    assert s.sync(sid) is not None and s.sync(sid).running  # type: ignore[union-attr]
    s.record_snapshot("A", "sda", {"bytes_written": 1}, ts=1.0)
    s.record_snapshot("A", "sda", {"bytes_written": 2}, ts=6.0)
    s.record_snapshot("A", "sda", {"bytes_written": 3}, ts=9.0, reason="sync-end", sync_id=sid)
    assert s.latest_snapshot("A", at_or_before=5.0).bytes_written == 1  # type: ignore[union-attr]
    assert s.first_snapshot_after("A", 5.5).bytes_written == 2  # type: ignore[union-attr]
    assert s.sync_snapshot(sid, "A", "sync-end").bytes_written == 3  # type: ignore[union-attr]
    assert s.serials() == ["A"]


def test_a_batch_not_synced_to_disk_is_still_committed_and_the_next_ones_are_synced(
    tmp_path: Path,
) -> None:
    """Issue 13: a running sync's figures so far are rewritten every second without an fsync
    (WAL, synchronous=NORMAL for that commit only): they are committed (another connection sees
    them), a failure inside rolls them back, and every other write is synced again (FULL)."""
    db = tmp_path / "state.db"
    store = SnapshotStore.open(db)
    sid = store.start_sync("md0", "resync", (SyncMember("sda", "sda", "S1"),), 0.0)

    def level() -> int:
        return int(store._conn.execute("PRAGMA synchronous").fetchone()[0])

    full = level()
    assert full == 2  # FULL: sqlite's default, kept for the edges
    with store.batch(durable=False):
        assert level() == 1  # NORMAL inside
        store.set_kernel_writes(sid, {"sda": 1}, {"sda": 7})
    assert level() == full
    other = sqlite3.connect(db)
    (kw,) = other.execute("SELECT kernel_writes FROM sync_events WHERE id=?", (sid,)).fetchone()
    assert '"end": {"sda": 7}' in kw
    with pytest.raises(RuntimeError), store.batch(durable=False):
        store.set_kernel_writes(sid, {"sda": 1}, {"sda": 9})
        raise RuntimeError("boom")
    assert level() == full
    (kw,) = other.execute("SELECT kernel_writes FROM sync_events WHERE id=?", (sid,)).fetchone()
    assert '"end": {"sda": 7}' in kw
    other.close()
    store.close()
