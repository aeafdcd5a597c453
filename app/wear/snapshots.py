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
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from app import statefiles
from app.paths import DB_FILE, state_dir
from app.statefiles import StateFileError
from app.wear import dbfile, held
from app.wear.check_window import CheckWindow
from app.wear.dbfile import is_transient, move_side, side_files, suppress_all
from app.wear.dbshape import DatabaseRefused
from app.wear.forecast import RecordedForecast
from app.wear.held_writes import HeldWriter, HeldWrites, Write
from app.wear.records import Snapshot, SyncEvent, SyncMember, snapshot_from_row, sync_event_from_row

T = TypeVar("T")

DB_NAME = DB_FILE
BUSY_TIMEOUT_S = 5.0  # how long one open waits for another process's lock
RETRY_DELAY_S = 1.0  # between the attempts to open a locked or busy database

MAX_BENCHMARKS = 50  # the newest kept in report --json
MAX_ROW_NOTES = 10  # a database full of bad rows says so this many times, then counts


def default_state_dir() -> Path:
    return state_dir()


def default_db_path() -> Path:
    return default_state_dir() / DB_NAME


class SnapshotStore(HeldWriter):
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
        self._attached = 0  # how many times held history moved to the file (snapshot_mark)
        # writes the file refused for the moment (disk full, locked): app.wear.held_writes
        self._held = HeldWrites()
        self._journal: list[Write] | None = None  # the statements of the batch under way
        self._batch_held = False  # the batch under way goes to _held (a statement was refused)
        self._last_sid = 0
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
            for side in (p, *side_files(p)):
                if os.path.lexists(side):
                    statefiles.check_file(side)
        except StateFileError as e:
            notes.append(f"{e}; wear history kept in memory only")
            return cls(cls._memory(), None, notes)
        first_error: sqlite3.DatabaseError | None = None
        for attempt in range(1, max(1, attempts) + 1):
            conn: sqlite3.Connection | None = None
            try:
                conn = dbfile.connect(str(p), timeout=busy_timeout_s)
                cls._check(conn)
                return cls(conn, p, notes)
            except DatabaseRefused as e:
                if conn is not None:
                    with suppress_all():
                        conn.close()
                notes.append(
                    f"wear database {p}: {e}; it is left untouched; wear history of this run is "
                    "kept in memory only"
                )
                return cls(cls._memory(), None, notes)
            except sqlite3.DatabaseError as e:
                if conn is not None:
                    with suppress_all():
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
            for side in side_files(p):
                if os.path.lexists(side):
                    move_side(side, aside.with_name(aside.name + side.name[len(p.name) :]))
            conn = dbfile.connect(str(p), timeout=busy_timeout_s)
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
        with suppress_all():
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
        if self._held and not self._held.announced:
            self._held.announced = True
            return (
                f"wear database {self.path}: {self._held.why}; records are held in memory "
                "(bounded) and written as soon as it accepts them"
            )
        if self._held.due(force=force):
            return self._flush_held()
        p = self._pending
        if p is None or (not force and time.monotonic() < self._next_attach):
            return None
        self._next_attach = time.monotonic() + held.RETRY_EVERY_S
        conn: sqlite3.Connection | None = None
        try:
            statefiles.ensure_dir(p.parent)
            for side in (p, *side_files(p)):
                if os.path.lexists(side):
                    statefiles.check_file(side)
            conn = dbfile.connect(str(p), timeout=self._busy_timeout_s)
            self._check(conn)
            n_snap, n_sync = held.copy_held(self._conn, conn)
        except (sqlite3.Error, StateFileError, OSError) as e:
            if conn is not None:
                with suppress_all():
                    conn.close()
            if isinstance(e, sqlite3.Error) and is_transient(e):
                return None  # still locked or full: the next try
            self._pending = None
            line = f"wear database {p}: {e}; the history held in memory stays there"
            self.notes.append(line)
            return line
        old, self._conn = self._conn, conn
        self._attached += 1
        with suppress_all():
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

    # the schema check a file passes (a class attribute: tests make it fail like a locked file)
    _check = staticmethod(dbfile.check_schema)

    @classmethod
    def _memory(cls) -> sqlite3.Connection:
        conn = dbfile.connect(":memory:", BUSY_TIMEOUT_S)
        cls._check(conn)
        return conn

    def close(self) -> None:
        """A store still holding history for its database tries it once more first."""
        self.try_attach(force=True)
        self._conn.close()

    # ---- benchmarks (app.plans.builders.benchmark results, as their JSON) -----------------------------
    def record_benchmark(self, ts: float, result: Mapping[str, Any]) -> None:
        with self.batch():
            self._write(
                Write("INSERT INTO benchmarks (ts, result) VALUES (?, ?)", (ts, json.dumps(result)))
            )

    def benchmarks(self) -> list[dict[str, Any]]:
        """The stored results, newest first (a row that is not a JSON object is skipped)."""
        out: list[dict[str, Any]] = []
        rows = self._conn.execute(
            "SELECT result FROM benchmarks ORDER BY ts DESC, id DESC LIMIT ?", (MAX_BENCHMARKS,)
        ).fetchall()
        for (text,) in rows:
            try:
                doc = json.loads(text) if isinstance(text, str) and len(text) < 1 << 20 else None
            except ValueError:
                doc = None
            if isinstance(doc, dict):
                out.append(doc)
        return out

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
        cur = self._write(
            Write(
                "INSERT INTO snapshots (ts, serial, device, reason, sync_id, counters) "
                "VALUES (?,?,?,?,?,?)",
                (ts, serial, device, reason, sync_id, json.dumps(dict(counters), sort_keys=True)),
                refs=4,
            )
        )
        rowid = int(cur.lastrowid or 0) if cur is not None else 0  # 0: held
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
        return self._rows(self._conn.execute(q, args), snapshot_from_row, "snapshots")

    def first_counter(self, serial: str, key: str) -> int | None:
        """The first recorded integer ``counters[key]`` of a disk (e.g. ``crc_errors``)."""
        if not key.isidentifier():
            raise ValueError(f"not a counter name: {key!r}")
        row = self._conn.execute(
            # json_valid first (a CASE: SQLite orders WHERE terms as it likes): one malformed
            # row raised "malformed JSON" out of the whole query (issue 37)
            "SELECT CASE WHEN json_valid(counters) THEN json_extract(counters, ?) END "
            "FROM snapshots WHERE serial=? AND CASE WHEN json_valid(counters) "
            "THEN json_type(counters, ?) END = 'integer' ORDER BY ts, id LIMIT 1",
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
            self._conn.execute(q + " ORDER BY ts DESC, id DESC", args),
            snapshot_from_row,
            "snapshots",
        )

    def snapshot_mark(self) -> tuple[int, int]:
        """Where the snapshots stand now, for :meth:`serials_since`: which database holds them
        (the count of moves from memory to the file, :meth:`try_attach`) and the id stored last
        (0: none). Ids are the database's own: held snapshots get new ones in the file."""
        row = self._conn.execute("SELECT MAX(id) FROM snapshots").fetchone()
        return self._attached, int(row[0]) if row and isinstance(row[0], int) else 0

    def serials_since(self, mark: tuple[int, int]) -> set[str] | None:
        """The disks with a snapshot stored after ``mark``; None when the mark was taken in
        another database (before the held history moved to the file): any disk may have one."""
        attached, snapshot_id = mark
        if attached != self._attached:
            return None
        rows = self._conn.execute(
            "SELECT DISTINCT serial FROM snapshots WHERE id>?", (snapshot_id,)
        )
        return {r[0] for r in rows if isinstance(r[0], str)}

    def first_snapshot_ts(self, serial: str) -> float | None:
        """When the oldest snapshot of ``serial`` was taken (the time only: no row decoded)."""
        row = self._conn.execute(
            "SELECT MIN(ts) FROM snapshots WHERE serial=? AND typeof(ts) IN ('real', 'integer')",
            (serial,),
        ).fetchone()
        return float(row[0]) if row and row[0] is not None else None

    def first_snapshot_after(self, serial: str, ts: float) -> Snapshot | None:
        rows = self._conn.execute(
            "SELECT * FROM snapshots WHERE serial=? AND ts>=? ORDER BY ts, id", (serial, ts)
        )
        return self._first(rows, snapshot_from_row, "snapshots")

    def sync_snapshot(self, sync_id: int, serial: str, reason: str) -> Snapshot | None:
        rows = self._conn.execute(
            "SELECT * FROM snapshots WHERE sync_id=? AND serial=? AND reason=? ORDER BY ts, id",
            (sync_id, serial, reason),
        )
        return self._first(rows, snapshot_from_row, "snapshots")

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
        cols = "array_name, action, started_at, members, array_uuid, kernel_writes"
        row = (array, action, at, json.dumps([[m.device, m.disk, m.serial] for m in ms]))
        sid = self._sync_id()
        self._write(
            Write(
                f"INSERT INTO sync_events (id, {cols}) VALUES (?,?,?,?,?,?,?)",
                (sid, *row, array_uuid, kw),
                defines=sid,
                new_id_sql=f"INSERT INTO sync_events ({cols}) VALUES (?,?,?,?,?,?)",
            )
        )
        return sid

    def set_sync_uuid(self, sync_id: int, array_uuid: str) -> None:
        self._update("array_uuid=?", (array_uuid,), sync_id)

    def set_kernel_writes(
        self,
        sync_id: int,
        start: Mapping[str, int],
        end: Mapping[str, int],
        capacities: Mapping[str, int] | None = None,
    ) -> None:
        """The per-disk kernel write counters at the sync's window edges (end: so far)."""
        kw = {"start": dict(start), "end": dict(end), "capacity": dict(capacities or {})}
        self._update("kernel_writes=?", (json.dumps(kw),), sync_id)

    def set_sync_seen(self, sync_id: int, how: str) -> None:
        """The sync ran between two looks: ``how`` it was seen after the fact."""
        self._conn.execute("UPDATE sync_events SET seen=? WHERE id=?", (how[:500], sync_id))

    def set_sync_times(self, sync_id: int, started_at: float, ended_at: float) -> None:
        """A sync seen after the fact gets the times md's own lines give (the kernel log)."""
        self._conn.execute(
            "UPDATE sync_events SET started_at=?, ended_at=? WHERE id=?",
            (started_at, ended_at, sync_id),
        )

    def set_sync_forecast(self, sync_id: int, forecast: RecordedForecast) -> None:
        """Keep the forecast made when the sync began (or the plan's, handed over later)."""
        self._update("forecast=?", (forecast.dumps(),), sync_id)

    def set_sync_members(self, sync_id: int, members: Iterable[SyncMember]) -> None:
        """Replace the members (e.g. once their serials are known from SMART)."""
        self._update(
            "members=?", (json.dumps([[m.device, m.disk, m.serial] for m in members]),), sync_id
        )

    def end_sync(
        self, sync_id: int, at: float, outcome: str = "finished", fraction: float | None = None
    ) -> None:
        self._update("ended_at=?, outcome=?, fraction=?", (at, outcome, fraction), sync_id)

    def first_record_at(self) -> float | None:
        """When the oldest snapshot or sync record was taken: since when raidman has been
        watching (None: nothing recorded)."""
        row = self._conn.execute(
            "SELECT MIN(t) FROM (SELECT MIN(ts) AS t FROM snapshots "
            "UNION ALL SELECT MIN(started_at) FROM sync_events)"
        ).fetchone()
        v = row[0] if row is not None else None
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None

    def set_check_window(self, sync_id: int, window: CheckWindow) -> None:
        self._update("check_window=?", (window.dumps(),), sync_id)

    def _update(self, fields: str, values: tuple[Any, ...], sync_id: int) -> None:
        sql = f"UPDATE sync_events SET {fields} WHERE id=?"
        self._write(Write(sql, (*values, sync_id), key=(fields, sync_id), refs=len(values)))

    def running_syncs(self) -> list[SyncEvent]:
        rows = self._conn.execute(
            "SELECT * FROM sync_events WHERE ended_at IS NULL ORDER BY started_at, id"
        )
        return self._rows(rows, sync_event_from_row, "sync_events")

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
        return self._rows(self._conn.execute(q, (arg,)), sync_event_from_row, "sync_events")

    def all_syncs(self) -> list[SyncEvent]:
        """Every recorded sync of every array, oldest first."""
        rows = self._conn.execute("SELECT * FROM sync_events ORDER BY id")
        return self._rows(rows, sync_event_from_row, "sync_events")

    def sync(self, sync_id: int) -> SyncEvent | None:
        rows = self._conn.execute("SELECT * FROM sync_events WHERE id=?", (sync_id,))
        return self._first(rows, sync_event_from_row, "sync_events")
