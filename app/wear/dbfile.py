"""The wear database as SQLite sees it: raidman's schema and its migrations, the check a file
passes before use, which SQLite errors are of the moment (retry, never move aside), and the
-wal/-shm files beside it."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from app import statefiles
from app.wear.dbshape import check_ours

# 2: sync_events gained array_uuid, fraction, kernel_writes; 3: forecast; 4: check_window
# (a check/repair's window: app.wear.checks); 5: seen (a sync that ran between two looks: what
# showed it, app.sync.tracker); all migrated
SCHEMA_VERSION = 5

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS snapshots (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    serial TEXT NOT NULL,
    device TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT 'periodic',
    sync_id INTEGER,
    counters TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS snapshots_serial_ts ON snapshots (serial, ts);
CREATE TABLE IF NOT EXISTS sync_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    array_name TEXT NOT NULL,
    action TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL,
    outcome TEXT,
    members TEXT NOT NULL,
    array_uuid TEXT,
    fraction REAL,
    kernel_writes TEXT,
    forecast TEXT,
    check_window TEXT,
    seen TEXT
);
CREATE INDEX IF NOT EXISTS sync_events_array ON sync_events (array_name, started_at);
CREATE TABLE IF NOT EXISTS benchmarks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    result TEXT NOT NULL
);
"""
# schema 1 -> 2: columns added to sync_events (old rows keep NULL: array unknown by UUID)
_MIGRATE_1_2 = (
    "ALTER TABLE sync_events ADD COLUMN array_uuid TEXT",
    "ALTER TABLE sync_events ADD COLUMN fraction REAL",
    "ALTER TABLE sync_events ADD COLUMN kernel_writes TEXT",
)
# schema 2 -> 3: the forecast made when the sync began (old rows keep NULL: no forecast)
_MIGRATE_2_3 = ("ALTER TABLE sync_events ADD COLUMN forecast TEXT",)
# schema 3 -> 4: where a check/repair window began and ended, its mismatch_cnt (old rows: NULL)
_MIGRATE_3_4 = ("ALTER TABLE sync_events ADD COLUMN check_window TEXT",)
# schema 4 -> 5: a sync seen only after the fact, and how (old rows: NULL, watched)
_MIGRATE_4_5 = ("ALTER TABLE sync_events ADD COLUMN seen TEXT",)


def connect(target: str, timeout: float) -> sqlite3.Connection:
    conn = sqlite3.connect(target, timeout=timeout, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


def check_schema(conn: sqlite3.Connection) -> None:
    """Create the schema, or raise DatabaseError if the file is damaged, DatabaseRefused if it
    is not ours or is newer (checked before anything is written to it: no WAL switch, no
    table added)."""
    row = conn.execute("PRAGMA quick_check").fetchone()
    if row is None or row[0] != "ok":
        raise sqlite3.DatabaseError(f"integrity check: {row[0] if row else 'no answer'}")
    check_ours(conn, SCHEMA_VERSION)
    with suppress_all():
        conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(_SCHEMA)
    cur = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    if cur is None:
        conn.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
    elif cur[0] in ("1", "2", "3", "4"):
        have = {r[1] for r in conn.execute("PRAGMA table_info(sync_events)")}
        for stmt in (*_MIGRATE_1_2, *_MIGRATE_2_3, *_MIGRATE_3_4, *_MIGRATE_4_5):
            if stmt.split()[5] not in have:
                conn.execute(stmt)
        conn.execute("UPDATE meta SET value=? WHERE key='schema'", (str(SCHEMA_VERSION),))
    elif cur[0] != str(SCHEMA_VERSION):
        raise sqlite3.DatabaseError(f"schema version {cur[0]}, expected {SCHEMA_VERSION}")
    # the columns we rely on must be there (a same-named table from something else is "corrupt")
    cols = {r[1] for r in conn.execute("PRAGMA table_info(snapshots)")}
    if not {"ts", "serial", "device", "counters", "reason", "sync_id"} <= cols:
        raise sqlite3.DatabaseError("snapshots table has an unexpected layout")


# SQLite result codes that say nothing about the file's contents: wait and retry, never move aside.
_TRANSIENT = (
    "SQLITE_BUSY",
    "SQLITE_LOCKED",
    "SQLITE_FULL",
    "SQLITE_IOERR",
    "SQLITE_CANTOPEN",
    "SQLITE_READONLY",
    "SQLITE_PERM",
    "SQLITE_NOMEM",
    "SQLITE_PROTOCOL",
)
_TRANSIENT_TEXT = (
    "locked",
    "busy",
    "disk is full",
    "disk i/o error",
    "unable to open",
    "readonly",
    "read-only",
    "out of memory",
)


def is_transient(e: sqlite3.Error) -> bool:
    """True for errors of the moment (another process holds the lock, the disk is full, I/O
    failed, permissions), false for a damaged or foreign file."""
    name = getattr(e, "sqlite_errorname", None)
    if isinstance(name, str) and name:
        return name.startswith(_TRANSIENT)
    if isinstance(e, sqlite3.OperationalError):
        text = str(e).lower()
        return any(t in text for t in _TRANSIENT_TEXT)
    return False


def move_side(side: Path, dest: Path) -> None:
    """Move a -wal/-shm file next to its moved-aside database, never over another file."""
    try:
        os.link(side, dest, follow_symlinks=False)
    except FileExistsError:
        statefiles.move_aside(side, "corrupt")
        return
    os.unlink(side)


def side_files(p: Path) -> tuple[Path, ...]:
    return (p.with_name(p.name + "-wal"), p.with_name(p.name + "-shm"))


class suppress_all:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return True
