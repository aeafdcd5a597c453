"""The local wear database: SMART counter snapshots and recorded sync events (stdlib sqlite3).

Location: ``$RAIDMAN_STATE_DIR/state.db`` when set; else ``/var/lib/raidman/state.db`` for root;
else ``$XDG_STATE_HOME/raidman/state.db`` (default ``~/.local/state/raidman``). The TUI and the
headless ``raidman monitor`` share it (WAL mode, a busy timeout).

A database that is damaged (``quick_check`` fails, not SQLite, not our layout) is moved aside to
``state.db.corrupt-<unix time>`` (``-2``, ``-3``... if taken: never over another copy) and rebuilt;
a locked database or a full disk is retried and never moved aside. The directory and file must
belong to the running user and not be group/other-writable, and are never symlinks
(:mod:`app.statefiles`). What happened is in ``store.notes``. If the file cannot be used, the store
runs in memory with a note: raidman never crashes on it.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from app import statefiles
from app.paths import DB_FILE, state_dir
from app.statefiles import StateFileError
from app.wear import held
from app.wear.dbshape import (
    MAX_TEXT,
    BadRow,
    DatabaseRefused,
    check_ours,
    counter,
    int_col,
    json_col,
    text_col,
    time_col,
)
from app.wear.forecast import RecordedForecast, parse_forecast

T = TypeVar("T")

# 2: sync_events gained array_uuid, fraction, kernel_writes; 3: forecast (both migrated)
SCHEMA_VERSION = 3
DB_NAME = DB_FILE
BUSY_TIMEOUT_S = 5.0  # how long one open waits for another process's lock
RETRY_DELAY_S = 1.0  # between the attempts to open a locked or busy database

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
    forecast TEXT
);
CREATE INDEX IF NOT EXISTS sync_events_array ON sync_events (array_name, started_at);
"""
# schema 1 -> 2: columns added to sync_events (old rows keep NULL: array unknown by UUID)
_MIGRATE_1_2 = (
    "ALTER TABLE sync_events ADD COLUMN array_uuid TEXT",
    "ALTER TABLE sync_events ADD COLUMN fraction REAL",
    "ALTER TABLE sync_events ADD COLUMN kernel_writes TEXT",
)
# schema 2 -> 3: the forecast made when the sync began (old rows keep NULL: no forecast)
_MIGRATE_2_3 = ("ALTER TABLE sync_events ADD COLUMN forecast TEXT",)


MAX_ROW_NOTES = 10  # a database full of bad rows says so this many times, then counts


def default_state_dir() -> Path:
    return state_dir()


def default_db_path() -> Path:
    return default_state_dir() / DB_NAME


@dataclass(frozen=True, slots=True)
class SyncMember:
    device: str  # kernel name of the member (nvme0n1p1, sdd)
    disk: str  # the whole disk under it (nvme0n1, sdd)
    serial: str | None = None


@dataclass(frozen=True)
class Snapshot:
    id: int
    ts: float
    serial: str
    device: str
    reason: str  # start, periodic, sync-start, sync-end
    sync_id: int | None
    counters: Mapping[str, Any] = field(default_factory=dict)

    @property
    def bytes_written(self) -> int | None:
        v = self.counters.get("bytes_written")
        return v if isinstance(v, int) else None

    @property
    def wear_used(self) -> int | None:
        v = self.counters.get("wear_used")
        return v if isinstance(v, int) else None

    @property
    def capacity_bytes(self) -> int | None:
        v = self.counters.get("capacity_bytes")
        return v if isinstance(v, int) else None

    @property
    def kernel_bytes_written(self) -> int | None:
        """The disk's kernel write counter (/proc/diskstats, cumulative bytes) from the last
        sample when this reading came back; None for snapshots stored before it was kept."""
        v = self.counters.get("kernel_bytes_written")
        return v if isinstance(v, int) and v >= 0 else None

    @property
    def unit_bytes(self) -> int | None:
        """Bytes per step of the write counter (NVMe: 512,000); for snapshots stored before
        it was kept, bytes ÷ raw count."""
        v = self.counters.get("unit_bytes")
        if isinstance(v, int) and v > 0:
            return v
        raw, b = self.counters.get("raw"), self.bytes_written
        if isinstance(raw, int) and raw > 0 and b is not None and b % raw == 0:
            return b // raw
        return None

    @property
    def counter(self) -> str | None:
        """Which SMART counter the bytes come from ("nvme:data_units_written", "241 ...")."""
        v = self.counters.get("counter")
        return v if isinstance(v, str) else None


@dataclass(frozen=True)
class SyncEvent:
    id: int
    array: str
    action: str
    started_at: float
    ended_at: float | None
    outcome: str | None  # finished, interrupted, array stopped, became X; None while running
    members: tuple[SyncMember, ...]
    array_uuid: str | None = None  # md's array UUID (None: recorded before schema 2)
    fraction: float | None = None  # how far it got (last progress seen)
    # the kernel's cumulative bytes written per device (/proc/diskstats, one line per disk and
    # per partition): "start" at the last sample before the sync began, "end" at the first
    # after it ended. Kept for each member device (what the sync wrote to it, apart from what
    # another array on other partitions of the same disk wrote) and each member's whole disk
    # (the span SMART counts); records made before per-member counting hold whole disks only
    kernel_start: Mapping[str, int] = field(default_factory=dict)
    kernel_end: Mapping[str, int] = field(default_factory=dict)
    # device -> bytes, at the start: each member's own size and its whole disk's
    capacities: Mapping[str, int] = field(default_factory=dict)
    # what the sync model said when the sync began (None: a record made before forecasts were)
    forecast: RecordedForecast | None = None

    def kernel_written(self, device: str) -> int | None:
        """Bytes the kernel wrote to ``device`` (a member, or its whole disk: all its
        partitions) during the sync (exact, sector granularity); while running: up to the last
        sample recorded."""
        a, b = self.kernel_start.get(device), self.kernel_end.get(device)
        return None if a is None or b is None else max(0, b - a)

    def member_written(self, m: SyncMember) -> tuple[int | None, bool]:
        """(the kernel's bytes written to the member during the sync, whether that is the
        member's own count). A record made before per-member counting kept only the whole
        disk's counter: that one then, said as the whole disk's (False)."""
        own = self.kernel_written(m.device)
        if own is not None or m.device == m.disk:
            return own, True
        return self.kernel_written(m.disk), False

    def member_size(self, m: SyncMember) -> int | None:
        """The member's own size (a partition's, not its disk's); None when not kept."""
        return self.capacities.get(m.device)

    @property
    def running(self) -> bool:
        return self.ended_at is None


class SnapshotStore:
    """Use :meth:`open`. ``notes`` lists what had to be repaired (shown to the user)."""

    def __init__(self, conn: sqlite3.Connection, path: Path | None, notes: list[str]) -> None:
        self._conn = conn
        self.path = path
        self.notes = notes
        self._bad_rows: set[tuple[str, object]] = set()
        # held in memory for the database at this path (locked or full when opened): see try_attach
        self._pending: Path | None = None
        self._busy_timeout_s = BUSY_TIMEOUT_S
        self._next_attach = 0.0
        self._dropped = 0
        mode = conn.execute("PRAGMA journal_mode").fetchone()
        self._wal = mode is not None and str(mode[0]).lower() == "wal"
        level = conn.execute("PRAGMA synchronous").fetchone()
        self._synchronous = int(level[0]) if level is not None else 2  # 2: FULL, the default

    # ---- opening ----------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        attempts: int = 3,
        retry_delay_s: float | None = None,
        busy_timeout_s: float | None = None,
    ) -> SnapshotStore:
        """Open (or create) the database; never raises.

        - directory or file unsafe (symlink, other owner, group/other-writable): refused, the
          store runs in memory, a note says why (:mod:`app.statefiles`);
        - locked, busy, disk full, I/O error: a note, retried ``attempts`` times, then in memory
          for this run; the file is left alone;
        - genuinely corrupt (``quick_check`` fails, not a database, not our layout): moved aside to
          a name no other file has (``state.db.corrupt-<time>[-N]``) and a new one started.
        """
        p = Path(path) if path is not None else default_db_path()
        busy_timeout_s = BUSY_TIMEOUT_S if busy_timeout_s is None else busy_timeout_s
        retry_delay_s = RETRY_DELAY_S if retry_delay_s is None else retry_delay_s
        notes: list[str] = []
        try:
            statefiles.ensure_dir(p.parent)
            for side in (p, *_sides(p)):
                if os.path.lexists(side):
                    statefiles.check_file(side)
        except StateFileError as e:
            notes.append(f"{e}; wear history kept in memory only")
            return cls(cls._memory(), None, notes)
        first_error: sqlite3.DatabaseError | None = None
        for attempt in range(1, max(1, attempts) + 1):
            conn: sqlite3.Connection | None = None
            try:
                conn = cls._connect(str(p), timeout=busy_timeout_s)
                cls._check(conn)
                return cls(conn, p, notes)
            except DatabaseRefused as e:
                if conn is not None:
                    with _suppress():
                        conn.close()
                notes.append(
                    f"wear database {p}: {e}; it is left untouched; wear history of this run is "
                    "kept in memory only"
                )
                return cls(cls._memory(), None, notes)
            except sqlite3.DatabaseError as e:
                if conn is not None:
                    with _suppress():
                        conn.close()
                if not is_transient(e):
                    first_error = e
                    break
                if attempt < attempts:
                    notes.append(
                        f"wear database {p}: {e} (attempt {attempt} of {attempts}); retrying"
                    )
                    time.sleep(retry_delay_s)
                    continue
                notes.append(
                    f"wear database {p}: {e}; gave up after {attempts} attempts. The file is kept "
                    "as it is (not corrupt); wear history is held in memory (the newest "
                    f"{held.MAX_HELD_SNAPSHOTS} snapshots) and written to it as soon as it "
                    "accepts it"
                )
                return cls._holding(p, notes, busy_timeout_s)
        assert first_error is not None
        try:
            aside = statefiles.move_aside(p, "corrupt")
            for side in _sides(p):
                if os.path.lexists(side):
                    _move_side(side, aside.with_name(aside.name + side.name[len(p.name) :]))
            conn = cls._connect(str(p), timeout=busy_timeout_s)
            cls._check(conn)
            notes.append(
                f"wear database {p} was unreadable ({first_error}); moved aside to {aside.name} "
                "and started a new one"
            )
            return cls(conn, p, notes)
        except (OSError, sqlite3.DatabaseError) as e:
            notes.append(
                f"wear database {p} is unreadable ({first_error}) and could not be replaced ({e}); "
                "wear history kept in memory only"
            )
            return cls(cls._memory(), None, notes)

    @classmethod
    def _holding(cls, p: Path, notes: list[str], busy_timeout_s: float) -> SnapshotStore:
        """A store in memory that writes what it holds to ``p`` once ``p`` can be used."""
        conn = cls._memory()
        with _suppress():
            held.seed_ids(conn)
        store = cls(conn, None, notes)
        store._pending = p
        store._busy_timeout_s = busy_timeout_s
        store._next_attach = time.monotonic() + held.RETRY_EVERY_S
        return store

    @property
    def holding(self) -> Path | None:
        """The database file this store's history is waiting for (None: it is in the file, or
        is memory only for good)."""
        return self._pending

    def try_attach(self, *, force: bool = False) -> str | None:
        """If the history is held in memory for a database that was locked or full: at most
        every ``RETRY_EVERY_S`` (always with ``force``) try the file again; when it accepts,
        write what is held into it (one transaction) and go on with the file. A line saying
        what happened when something did (also in ``notes``), else None. Never raises."""
        p = self._pending
        if p is None or (not force and time.monotonic() < self._next_attach):
            return None
        self._next_attach = time.monotonic() + held.RETRY_EVERY_S
        conn: sqlite3.Connection | None = None
        try:
            statefiles.ensure_dir(p.parent)
            for side in (p, *_sides(p)):
                if os.path.lexists(side):
                    statefiles.check_file(side)
            conn = self._connect(str(p), timeout=self._busy_timeout_s)
            self._check(conn)
            n_snap, n_sync = held.copy_held(self._conn, conn)
        except (sqlite3.Error, StateFileError, OSError) as e:
            if conn is not None:
                with _suppress():
                    conn.close()
            if isinstance(e, sqlite3.Error) and is_transient(e):
                return None  # still locked or full: the next try
            self._pending = None
            line = f"wear database {p}: {e}; the history held in memory stays there"
            self.notes.append(line)
            return line
        old, self._conn = self._conn, conn
        with _suppress():
            old.close()
        self.path, self._pending = p, None
        mode = conn.execute("PRAGMA journal_mode").fetchone()
        self._wal = mode is not None and str(mode[0]).lower() == "wal"
        level = conn.execute("PRAGMA synchronous").fetchone()
        self._synchronous = int(level[0]) if level is not None else 2
        dropped = (
            f" ({self._dropped} older ones were dropped to bound memory)" if self._dropped else ""
        )
        line = (
            f"wear database {p} accepts writes again: wrote the {n_snap} snapshot(s) and "
            f"{n_sync} sync record(s) held in memory{dropped}"
        )
        self.notes.append(line)
        return line

    @classmethod
    def _memory(cls) -> sqlite3.Connection:
        conn = cls._connect(":memory:")
        cls._check(conn)
        return conn

    @staticmethod
    def _connect(target: str, timeout: float = BUSY_TIMEOUT_S) -> sqlite3.Connection:
        conn = sqlite3.connect(
            target, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        conn.row_factory = sqlite3.Row
        return conn

    @staticmethod
    def _check(conn: sqlite3.Connection) -> None:
        """Create the schema, or raise DatabaseError if the file is damaged, DatabaseRefused if it
        is not ours or is newer (checked before anything is written to it: no WAL switch, no
        table added)."""
        row = conn.execute("PRAGMA quick_check").fetchone()
        if row is None or row[0] != "ok":
            raise sqlite3.DatabaseError(f"integrity check: {row[0] if row else 'no answer'}")
        check_ours(conn, SCHEMA_VERSION)
        with _suppress():
            conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(_SCHEMA)
        cur = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if cur is None:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
            )
        elif cur[0] in ("1", "2"):
            have = {r[1] for r in conn.execute("PRAGMA table_info(sync_events)")}
            for stmt in (*_MIGRATE_1_2, *_MIGRATE_2_3):
                if stmt.split()[5] not in have:
                    conn.execute(stmt)
            conn.execute("UPDATE meta SET value=? WHERE key='schema'", (str(SCHEMA_VERSION),))
        elif cur[0] != str(SCHEMA_VERSION):
            raise sqlite3.DatabaseError(f"schema version {cur[0]}, expected {SCHEMA_VERSION}")
        # the columns we rely on must be there (a same-named table from something else is "corrupt")
        cols = {r[1] for r in conn.execute("PRAGMA table_info(snapshots)")}
        if not {"ts", "serial", "device", "counters", "reason", "sync_id"} <= cols:
            raise sqlite3.DatabaseError("snapshots table has an unexpected layout")

    @contextmanager
    def batch(self, *, durable: bool = True) -> Iterator[None]:
        """The writes inside go in one transaction (one commit, one sync of the WAL, instead of
        one per statement); rolled back if one of them fails.

        ``durable=False`` (figures rewritten every second, e.g. a running sync's writes so far):
        in WAL mode the commit is not synced to the disk (``synchronous=NORMAL``): still atomic
        and kept if raidman dies, possibly lost on a power cut, and synced by the next durable
        commit. No fsync per second (measured: 1.7 → 0.16 ms a commit of 16 rows)."""
        if self._conn.in_transaction:
            yield
            return
        relaxed = not durable and self._wal
        if relaxed:
            self._conn.execute("PRAGMA synchronous=NORMAL")
        try:
            self._conn.execute("BEGIN")
            try:
                yield
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
        finally:
            if relaxed:
                self._conn.execute(f"PRAGMA synchronous={self._synchronous:d}")

    def close(self) -> None:
        """A store still holding history for its database tries it once more first."""
        self.try_attach(force=True)
        self._conn.close()

    # ---- snapshots ----------------------------------------------------------------------------
    def record_snapshot(
        self,
        serial: str,
        device: str,
        counters: Mapping[str, Any],
        *,
        ts: float,
        reason: str = "periodic",
        sync_id: int | None = None,
    ) -> int:
        cur = self._conn.execute(
            "INSERT INTO snapshots (ts, serial, device, reason, sync_id, counters) VALUES (?,?,?,?,?,?)",
            (ts, serial, device, reason, sync_id, json.dumps(dict(counters), sort_keys=True)),
        )
        rowid = int(cur.lastrowid or 0)
        if self._pending is not None and rowid % 100 == 0:  # held in memory: bounded
            self._dropped += held.prune(self._conn)
        return rowid

    def snapshots_for(self, serial: str, since: float | None = None) -> list[Snapshot]:
        q = "SELECT * FROM snapshots WHERE serial=?"
        args: list[Any] = [serial]
        if since is not None:
            q += " AND ts>=?"
            args.append(since)
        q += " ORDER BY ts, id"
        return self._rows(self._conn.execute(q, args), self._snap, "snapshots")

    def first_counter(self, serial: str, key: str) -> int | None:
        """The first recorded integer ``counters[key]`` of a disk (e.g. ``crc_errors``)."""
        if not key.isidentifier():
            raise ValueError(f"not a counter name: {key!r}")
        row = self._conn.execute(
            "SELECT json_extract(counters, ?) FROM snapshots WHERE serial=? "
            "AND json_type(counters, ?) = 'integer' ORDER BY ts, id LIMIT 1",
            (f"$.{key}", serial, f"$.{key}"),
        ).fetchone()
        return int(row[0]) if row is not None and isinstance(row[0], int) else None

    def serials(self) -> list[str]:
        return [
            r[0]
            for r in self._conn.execute("SELECT DISTINCT serial FROM snapshots ORDER BY serial")
        ]

    def latest_snapshot(self, serial: str, *, at_or_before: float | None = None) -> Snapshot | None:
        q = "SELECT * FROM snapshots WHERE serial=?"
        args: list[Any] = [serial]
        if at_or_before is not None:
            q += " AND ts<=?"
            args.append(at_or_before)
        return self._first(
            self._conn.execute(q + " ORDER BY ts DESC, id DESC", args), self._snap, "snapshots"
        )

    def first_snapshot_after(self, serial: str, ts: float) -> Snapshot | None:
        rows = self._conn.execute(
            "SELECT * FROM snapshots WHERE serial=? AND ts>=? ORDER BY ts, id", (serial, ts)
        )
        return self._first(rows, self._snap, "snapshots")

    def sync_snapshot(self, sync_id: int, serial: str, reason: str) -> Snapshot | None:
        rows = self._conn.execute(
            "SELECT * FROM snapshots WHERE sync_id=? AND serial=? AND reason=? ORDER BY ts, id",
            (sync_id, serial, reason),
        )
        return self._first(rows, self._snap, "snapshots")

    def _rows(
        self, rows: Iterable[sqlite3.Row], conv: Callable[[sqlite3.Row], T], table: str
    ) -> list[T]:
        """Each row converted; a row out of shape costs that row (a note), not the command."""
        out: list[T] = []
        for r in rows:
            try:
                out.append(conv(r))
            except (ValueError, TypeError, OverflowError, RecursionError) as e:
                self._bad_row(table, r, e)
        return out

    def _first(
        self, rows: Iterable[sqlite3.Row], conv: Callable[[sqlite3.Row], T], table: str
    ) -> T | None:
        """The first row in shape (the cursor is read lazily: only bad rows cost a fetch)."""
        for r in rows:
            try:
                return conv(r)
            except (ValueError, TypeError, OverflowError, RecursionError) as e:
                self._bad_row(table, r, e)
        return None

    def _bad_row(self, table: str, r: sqlite3.Row, e: BaseException) -> None:
        try:
            rid: object = r["id"]
        except (IndexError, KeyError):
            rid = "?"
        key = (table, rid if isinstance(rid, int | str) else repr(rid)[:20])
        if key in self._bad_rows:
            return
        self._bad_rows.add(key)
        if len(self._bad_rows) <= MAX_ROW_NOTES:
            why = "".join(c if c.isprintable() else "?" for c in str(e))[:120]
            self.notes.append(
                f"wear database {self.path or ''}: {table} row {key[1]} skipped: {why}"
            )
        elif len(self._bad_rows) == MAX_ROW_NOTES + 1:
            self.notes.append(f"wear database: more {table} rows skipped (only the first noted)")

    @staticmethod
    def _snap(r: sqlite3.Row) -> Snapshot:
        counters = json_col(r, "counters", dict)
        return Snapshot(
            id=int_col(r, "id"),
            ts=time_col(r, "ts"),
            serial=text_col(r, "serial"),
            device=text_col(r, "device"),
            reason=text_col(r, "reason"),
            sync_id=int_col(r, "sync_id", none_ok=True),
            counters=counters if isinstance(counters, dict) else {},
        )

    # ---- sync events ----------------------------------------------------------------------------
    def start_sync(
        self,
        array: str,
        action: str,
        members: Iterable[SyncMember | str],
        at: float,
        *,
        array_uuid: str | None = None,
        kernel_start: Mapping[str, int] | None = None,
        capacities: Mapping[str, int] | None = None,
    ) -> int:
        ms = [m if isinstance(m, SyncMember) else SyncMember(m, m) for m in members]
        kw = json.dumps(
            {"start": dict(kernel_start or {}), "end": {}, "capacity": dict(capacities or {})}
        )
        cur = self._conn.execute(
            "INSERT INTO sync_events (array_name, action, started_at, members, array_uuid, "
            "kernel_writes) VALUES (?,?,?,?,?,?)",
            (
                array,
                action,
                at,
                json.dumps([[m.device, m.disk, m.serial] for m in ms]),
                array_uuid,
                kw,
            ),
        )
        return int(cur.lastrowid or 0)

    def set_sync_uuid(self, sync_id: int, array_uuid: str) -> None:
        self._conn.execute("UPDATE sync_events SET array_uuid=? WHERE id=?", (array_uuid, sync_id))

    def set_kernel_writes(
        self,
        sync_id: int,
        start: Mapping[str, int],
        end: Mapping[str, int],
        capacities: Mapping[str, int] | None = None,
    ) -> None:
        """The per-disk kernel write counters at the sync's window edges (end: so far)."""
        kw = {"start": dict(start), "end": dict(end), "capacity": dict(capacities or {})}
        self._conn.execute(
            "UPDATE sync_events SET kernel_writes=? WHERE id=?", (json.dumps(kw), sync_id)
        )

    def set_sync_forecast(self, sync_id: int, forecast: RecordedForecast) -> None:
        """Keep the forecast made when the sync began (or the plan's, handed over later)."""
        self._conn.execute(
            "UPDATE sync_events SET forecast=? WHERE id=?", (forecast.dumps(), sync_id)
        )

    def set_sync_members(self, sync_id: int, members: Iterable[SyncMember]) -> None:
        """Replace the members (e.g. once their serials are known from SMART)."""
        self._conn.execute(
            "UPDATE sync_events SET members=? WHERE id=?",
            (json.dumps([[m.device, m.disk, m.serial] for m in members]), sync_id),
        )

    def end_sync(
        self, sync_id: int, at: float, outcome: str = "finished", fraction: float | None = None
    ) -> None:
        self._conn.execute(
            "UPDATE sync_events SET ended_at=?, outcome=?, fraction=? WHERE id=?",
            (at, outcome, fraction, sync_id),
        )

    def running_syncs(self) -> list[SyncEvent]:
        rows = self._conn.execute(
            "SELECT * FROM sync_events WHERE ended_at IS NULL ORDER BY started_at, id"
        )
        return self._rows(rows, self._sync, "sync_events")

    def syncs_for(self, array: str, array_uuid: str | None = None) -> list[SyncEvent]:
        """The syncs of one array: by its UUID when known (a new array under an old name does
        not inherit the old one's records), else by kernel name."""
        if array_uuid:
            q, arg = (
                "SELECT * FROM sync_events WHERE array_uuid=? ORDER BY started_at, id",
                array_uuid,
            )
        else:
            q, arg = "SELECT * FROM sync_events WHERE array_name=? ORDER BY started_at, id", array
        return self._rows(self._conn.execute(q, (arg,)), self._sync, "sync_events")

    def all_syncs(self) -> list[SyncEvent]:
        """Every recorded sync of every array, oldest first."""
        rows = self._conn.execute("SELECT * FROM sync_events ORDER BY id")
        return self._rows(rows, self._sync, "sync_events")

    def sync(self, sync_id: int) -> SyncEvent | None:
        rows = self._conn.execute("SELECT * FROM sync_events WHERE id=?", (sync_id,))
        return self._first(rows, self._sync, "sync_events")

    @staticmethod
    def _sync(r: sqlite3.Row) -> SyncEvent:
        members: list[SyncMember] = []
        for m in json_col(r, "members", list) or ():
            if not isinstance(m, list) or len(m) != 3:
                raise BadRow("members: not [device, disk, serial] triples")
            if not all(isinstance(x, str) for x in m[:2]) or not isinstance(m[2], str | None):
                raise BadRow("members: not text")
            members.append(SyncMember(m[0], m[1], m[2] if m[2] else None))
        start: dict[str, int] = {}
        end: dict[str, int] = {}
        cap: dict[str, int] = {}
        kw = json_col(r, "kernel_writes", dict) or {}
        for key, dest in (("start", start), ("end", end), ("capacity", cap)):
            part = kw.get(key)
            if isinstance(part, dict):
                dest.update({str(k): v for k, v in part.items() if counter(v)})
        frac = r["fraction"]
        uuid = r["array_uuid"]
        ended = r["ended_at"]
        return SyncEvent(
            id=int_col(r, "id"),
            array=text_col(r, "array_name"),
            action=text_col(r, "action"),
            started_at=time_col(r, "started_at"),
            ended_at=None if ended is None else time_col(r, "ended_at"),
            outcome=None if r["outcome"] is None else text_col(r, "outcome"),
            members=tuple(members),
            array_uuid=uuid if isinstance(uuid, str) and len(uuid) <= MAX_TEXT else None,
            fraction=float(frac)
            if isinstance(frac, int | float) and not isinstance(frac, bool) and math.isfinite(frac)
            else None,
            kernel_start=start,
            kernel_end=end,
            capacities=cap,
            forecast=parse_forecast(r["forecast"]),
        )


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


def _move_side(side: Path, dest: Path) -> None:
    """Move a -wal/-shm file next to its moved-aside database, never over another file."""
    try:
        os.link(side, dest, follow_symlinks=False)
    except FileExistsError:
        statefiles.move_aside(side, "corrupt")
        return
    os.unlink(side)


def _sides(p: Path) -> tuple[Path, ...]:
    return (p.with_name(p.name + "-wal"), p.with_name(p.name + "-shm"))


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return True
