"""The wear database as state the owner can write (issue 23, item 8): a foreign SQLite file is
refused ("not raidman's database"), not given raidman's tables; a newer raidman's is refused
untouched, not moved aside; a row of the wrong type or nested JSON costs that row (a note), not
``report --json``, ``report`` or ``monitor --once``."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pytest

from app.cli import main
from app.wear.dbfile import SCHEMA_VERSION
from app.wear.snapshots import SnapshotStore


def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _state(tmp_path: Path) -> Path:
    d = tmp_path / "state"
    d.mkdir(mode=0o700)
    return d


def test_a_foreign_sqlite_file_is_refused_untouched(tmp_path: Path) -> None:
    db = _state(tmp_path) / "state.db"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        c.execute("INSERT INTO invoices (total) VALUES (12.5)")
    c.close()
    before = _digest(db)
    store = SnapshotStore.open(db, attempts=1, retry_delay_s=0)
    assert store.path is None
    assert any("not raidman's database" in n for n in store.notes)
    store.close()
    assert _digest(db) == before
    assert sorted(os.listdir(db.parent)) == ["state.db"]


def test_a_newer_raidmans_database_is_refused_not_moved_aside(tmp_path: Path) -> None:
    db = _state(tmp_path) / "state.db"
    SnapshotStore.open(db).close()
    with sqlite3.connect(db) as c:
        c.execute("UPDATE meta SET value=? WHERE key='schema'", (str(SCHEMA_VERSION + 1),))
    c.close()
    before = _digest(db)
    store = SnapshotStore.open(db, attempts=1, retry_delay_s=0)
    assert store.path is None
    assert any("made by a newer raidman" in n for n in store.notes)
    store.close()
    assert _digest(db) == before
    assert not [n for n in os.listdir(db.parent) if "corrupt" in n]


def _spoil(db: Path) -> None:
    deep = "[" * 5000 + "]" * 5000
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM sync_events").fetchone()[0] > 0
        assert c.execute("SELECT count(*) FROM snapshots").fetchone()[0] > 0
        first = c.execute("SELECT min(id) FROM snapshots").fetchone()[0]
        c.execute("UPDATE snapshots SET counters=? WHERE id=?", (deep, first))
        c.execute("UPDATE snapshots SET ts='yesterday' WHERE id=?", (first + 1,))
        c.execute("UPDATE snapshots SET ts=1e308 WHERE id=?", (first + 2,))
        c.execute("UPDATE sync_events SET started_at='x', members=?", (deep,))
        c.execute(
            "INSERT INTO sync_events (array_name, action, started_at, members) VALUES "
            "(X'6d6430', 'recover', 1.0, '[]')"
        )
    c.close()


@pytest.mark.parametrize(
    "argv",
    [["report", "--json"], ["report"], ["monitor", "--once"]],
    ids=["report --json", "report", "monitor --once"],
)
def test_bad_rows_cost_the_row_not_the_command(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    state = _state(tmp_path)
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(state))
    assert main(["monitor", "--once", "--demo", "raid6-wd"]) == 0
    _spoil(state / "state.db")
    capsys.readouterr()
    assert (
        main(
            [*argv, "--demo", "raid6-wd", "--no-smart"]
            if argv[0] == "report"
            else [*argv, "--demo", "raid6-wd"]
        )
        == 0
    )
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    if argv == ["report", "--json"]:
        notes = [n["message"] for n in json.loads(out.out)["notes"]]
        assert any("sync_events row" in n and "skipped" in n for n in notes)
    if argv == ["report"]:
        assert "skipped" in out.out
