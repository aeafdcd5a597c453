"""A disk that fills while the monitor runs loses no record (issue 37, item 9): the writes the
database refuses for the moment (SQLITE_FULL here, as a full disk gives it; a lock alike) are
held in memory in their order and written when it accepts them; meanwhile the store still reads
the file (no check history vanishes). Before, each refused write raised, and 21.6 s of a
running sync's records were lost.

The disk is "full" through SQLite's own ``PRAGMA max_page_count``: the same SQLITE_FULL
("database or disk is full") a full filesystem gives, without filling one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.wear import held_writes
from app.wear.snapshots import SnapshotStore

COUNTERS = {"written": 1, "pad": "x" * 900}  # ~1 KB: a new page every few snapshots


def _fill(store: SnapshotStore) -> None:
    conn = store._conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count={pages}")
    with pytest.raises(sqlite3.OperationalError, match="full"):  # it is full for SQLite too
        for i in range(50):
            conn.execute(
                "INSERT INTO snapshots (ts, serial, device, counters) VALUES (?,?,?,?)",
                (0, "probe", "x", "y" * 4000 + str(i)),
            )


def _free(store: SnapshotStore) -> None:
    store._conn.execute("PRAGMA max_page_count=1073741823")


def test_records_made_while_the_disk_is_full_are_written_when_it_has_room(
    tmp_path: Path,
) -> None:
    db = tmp_path / "state.db"
    store = SnapshotStore.open(db)
    first = store.start_sync("md0", "check", ["sda"], 100.0)
    store.record_snapshot("S1", "sda", COUNTERS, ts=100.0, reason="sync-start", sync_id=first)
    _fill(store)
    # 22 seconds of a monitor at 1 Hz: the running sync's writes so far each second (one batch,
    # as the recorder writes them), a snapshot every 5 s, the sync ending, the next starting
    second = None
    for t in range(101, 123):
        with store.batch(durable=False):
            store.set_kernel_writes(first, {"sda": 0}, {"sda": t})
            if t % 5 == 0:
                store.record_snapshot("S1", "sda", {**COUNTERS, "written": t}, ts=float(t))
        if t == 115:
            store.end_sync(first, float(t), "finished", 1.0)
            second = store.start_sync("md1", "resync", ["sdb"], float(t))
            store.record_snapshot("S2", "sdb", COUNTERS, ts=float(t), sync_id=second)
        # the file is still read while the writes wait: the first sync is there, running
        assert [s.id for s in store.syncs_for("md0")] == [first]
    assert second is not None and second != first
    line = store.try_attach()
    assert line is not None and "records are held in memory" in line
    assert "database or disk is full" in line
    assert store.refused is not None
    assert store.try_attach(force=True) is None  # still full: still held

    _free(store)
    line = store.try_attach(force=True)
    assert line is not None and "accepts writes again" in line
    assert store.refused is None
    store.close()

    again = SnapshotStore.open(db)
    (s1,) = again.syncs_for("md0")
    assert (s1.id, s1.ended_at, s1.outcome) == (first, 115.0, "finished")
    assert dict(s1.kernel_end) == {"sda": 122}
    (s2,) = again.syncs_for("md1")
    assert (s2.id, s2.started_at, s2.ended_at) == (second, 115.0, None)
    snaps = again.snapshots_for("S1")
    assert [s.ts for s in snaps] == [100.0, 105.0, 110.0, 115.0, 120.0]
    assert [s.sync_id for s in again.snapshots_for("S2")] == [second]
    again.close()


def test_held_writes_are_bounded_and_a_running_syncs_updates_fold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(held_writes, "MAX_HELD_WRITES", 10)
    store = SnapshotStore.open(tmp_path / "state.db")
    sid = store.start_sync("md0", "check", ["sda"], 0.0)
    _fill(store)
    store.record_snapshot("S1", "sda", COUNTERS, ts=0.0)  # refused: from here on, held
    for t in range(1, 3601):  # an hour of "writes so far": one held update, not 3,600
        store.set_kernel_writes(sid, {"sda": 0}, {"sda": t})
    assert len(store._held.ops) == 2
    for t in range(1, 20):
        store.record_snapshot("S1", "sda", COUNTERS, ts=float(t))
    assert len(store._held.ops) == 10 and store._held.dropped == 11
    _free(store)
    line = store.try_attach(force=True)
    line = store.try_attach(force=True) if line and "held in memory" in line else line
    assert line is not None and "wrote 10 held record(s) (11 older snapshots were dropped" in line
    (s,) = store.syncs_for("md0")
    assert dict(s.kernel_end) == {"sda": 3600}
    assert [x.ts for x in store.snapshots_for("S1")] == [float(t) for t in range(11, 20)]


def test_a_held_sync_whose_id_was_taken_meanwhile_gets_another(tmp_path: Path) -> None:
    """The TUI and the monitor share the file: another process may take the id a held sync
    record was given; the record gets a new one and its held snapshots follow it."""
    db = tmp_path / "state.db"
    store = SnapshotStore.open(db)
    _fill(store)
    store.record_snapshot("S0", "sda", COUNTERS, ts=0.0)  # refused: from here on, held
    sid = store.start_sync("md0", "check", ["sda"], 0.0)
    store.record_snapshot("S1", "sda", COUNTERS, ts=1.0, sync_id=sid)
    store.end_sync(sid, 2.0)
    other = sqlite3.connect(db, isolation_level=None)
    other.execute(
        "INSERT INTO sync_events (id, array_name, action, started_at, members) "
        "VALUES (?, 'md9', 'resync', 0, '[]')",
        (sid,),
    )
    other.close()
    _free(store)
    store.try_attach(force=True)  # says writes are held
    assert "accepts writes again" in (store.try_attach(force=True) or "")
    (s,) = store.syncs_for("md0")
    assert s.id != sid and s.ended_at == 2.0
    assert [x.sync_id for x in store.snapshots_for("S1")] == [s.id]


def test_a_malformed_counters_row_costs_that_row(tmp_path: Path) -> None:
    """``first_counter`` ran json_extract over every row: one whose counters are not JSON
    raised "malformed JSON" out of the query (a traceback at snapshots.py:321, issue 37)."""
    db = tmp_path / "state.db"
    store = SnapshotStore.open(db)
    store.record_snapshot("S1", "sda", {"crc_errors": 7}, ts=2.0)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(
        "INSERT INTO snapshots (ts, serial, device, counters) VALUES (1.0, 'S1', 'sda', '{not')"
    )
    conn.close()
    assert store.first_counter("S1", "crc_errors") == 7
    assert [s.ts for s in store.snapshots_for("S1")] == [2.0]  # the bad row skipped, noted
    assert any("snapshots row" in n and "skipped" in n for n in store.notes)
