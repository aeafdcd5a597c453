"""Opening the wear database (issue 11, deliverable 8): only a genuinely corrupt file is moved
aside, under a name that never overwrites another; locked or full is a note and a retry, never a
move; an unsafe state dir or file (symlink, other owner, group-writable) is refused."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from app import statefiles
from app.wear import dbfile
from app.wear.dbfile import is_transient
from app.wear.snapshots import SnapshotStore


def _make_db(path: Path) -> None:
    s = SnapshotStore.open(path)
    s.record_snapshot("SER1", "sda", {"bytes_written": 1}, ts=1.0)
    s.close()


def _asides(d: Path) -> list[Path]:
    return sorted(p for p in d.iterdir() if ".corrupt-" in p.name)


def test_locked_database_is_retried_never_moved_aside(tmp_path: Path) -> None:
    """Another process holds an exclusive transaction (rollback journal, so even reads wait)."""
    p = tmp_path / "state.db"
    holder = sqlite3.connect(p, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO t VALUES (1)")
    try:
        s = SnapshotStore.open(p, attempts=2, retry_delay_s=0, busy_timeout_s=0.05)
    finally:
        holder.rollback()
        holder.close()
    assert s.path is None  # this run in memory
    assert len(s.notes) == 2
    assert "locked" in s.notes[0] and "retrying" in s.notes[0]
    assert "not corrupt" in s.notes[1] and "gave up after 2 attempts" in s.notes[1]
    assert _asides(tmp_path) == []
    s.record_snapshot("SER1", "sda", {}, ts=2.0)  # still usable
    assert sqlite3.connect(p).execute("SELECT COUNT(*) FROM t").fetchone() == (0,)


def test_lock_released_during_retries_opens_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "state.db"
    _make_db(p)
    calls = {"n": 0}
    real = SnapshotStore._check

    def flaky(conn: sqlite3.Connection) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise sqlite3.OperationalError("database is locked")
        real(conn)

    monkeypatch.setattr(SnapshotStore, "_check", staticmethod(flaky))
    s = SnapshotStore.open(p, retry_delay_s=0)
    assert s.path == p and len(s.notes) == 1 and "retrying" in s.notes[0]
    assert [x.serial for x in s.snapshots_for("SER1")] == ["SER1"]  # the history is kept
    assert _asides(tmp_path) == []


def test_disk_full_is_a_note_not_a_move(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "state.db"
    _make_db(p)

    def full(conn: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(SnapshotStore, "_check", staticmethod(full))
    monkeypatch.setattr(
        SnapshotStore, "_memory", classmethod(lambda cls: sqlite3.connect(":memory:"))
    )
    s = SnapshotStore.open(p, attempts=3, retry_delay_s=0)
    assert s.path is None and len(s.notes) == 3
    assert all("disk is full" in n for n in s.notes)
    assert _asides(tmp_path) == [] and p.exists()


def test_transient_classification() -> None:
    assert is_transient(sqlite3.OperationalError("database is locked"))
    assert is_transient(sqlite3.OperationalError("database or disk is full"))
    assert not is_transient(sqlite3.DatabaseError("file is not a database"))
    assert not is_transient(sqlite3.DatabaseError("integrity check: page 3 is never used"))


def test_two_corrupt_starts_in_one_second_keep_both_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 11: two starts in one second overwrote the saved copy."""
    monkeypatch.setattr(statefiles.time, "time", lambda: 1_700_000_000.0)
    p = tmp_path / "state.db"
    for junk in (b"first junk " * 200, b"second junk " * 200):
        p.write_bytes(junk)
        s = SnapshotStore.open(p)
        assert s.path == p and "moved aside" in s.notes[0]
        s.close()
        p.unlink()
        for side in dbfile.side_files(p):
            if side.exists():
                side.unlink()
    copies = _asides(tmp_path)
    assert [c.name for c in copies] == [
        "state.db.corrupt-1700000000",
        "state.db.corrupt-1700000000-2",
    ]
    assert copies[0].read_bytes().startswith(b"first") and copies[1].read_bytes().startswith(
        b"second"
    )


def test_symlinked_database_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"not yours")
    d = tmp_path / "state"
    d.mkdir(mode=0o700)
    (d / "state.db").symlink_to(victim)
    s = SnapshotStore.open(d / "state.db")
    assert s.path is None and "symlink" in s.notes[0]
    assert victim.read_bytes() == b"not yours"
    assert (d / "state.db").is_symlink() and _asides(d) == []


def test_symlinked_wal_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "state.db"
    _make_db(p)
    wal = tmp_path / "state.db-wal"
    if wal.exists():
        wal.unlink()
    wal.symlink_to(tmp_path / "elsewhere")
    s = SnapshotStore.open(p)
    assert s.path is None and "symlink" in s.notes[0]


def test_group_writable_state_dir_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "state"
    d.mkdir()
    os.chmod(d, 0o777)
    s = SnapshotStore.open(d / "state.db")
    assert s.path is None and "writable by group or others" in s.notes[0]
    assert not (d / "state.db").exists()


def test_new_state_dir_is_private(tmp_path: Path) -> None:
    s = SnapshotStore.open(tmp_path / "new" / "state.db")
    assert s.path is not None
    assert (os.stat(tmp_path / "new").st_mode & 0o777) == 0o700
