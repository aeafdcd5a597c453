"""``raidman monitor --once`` on a wear database another process holds locked (issue 11,
deliverable 8): a clear message and exit status 1, no traceback, the database left in place."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.cli import main
from app.wear import snapshots
from app.wear.snapshots import SnapshotStore


def test_monitor_once_on_a_locked_db_says_so_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the same path as with the shipped 3 × 5 s of waiting, in a fraction of the time
    monkeypatch.setattr(snapshots, "BUSY_TIMEOUT_S", 0.2)
    monkeypatch.setattr(snapshots, "RETRY_DELAY_S", 0.05)
    db = tmp_path / "state.db"
    SnapshotStore.open(db).close()  # a valid (WAL) database
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process writing: every other writer waits
    try:
        rc = main(["monitor", "--once", "--demo", "raid10-evo", "--db", str(db)])
    finally:
        holder.rollback()
        holder.close()
    out, err = capsys.readouterr()
    assert rc == 1
    assert "Traceback" not in out + err
    assert f"cannot record to the wear database {db}: database is locked" in err
    assert "another process holds it" in err
    assert not list(tmp_path.glob("state.db.corrupt-*"))
    # once the lock is gone the same command works and records
    assert main(["monitor", "--once", "--demo", "raid10-evo", "--db", str(db)]) == 0
    store = SnapshotStore.open(db)
    assert store.serials()
