"""Writes the wear database refuses for the moment (the disk full, another process holding the
lock, an I/O error), held in memory in their order and written, before anything newer, as soon
as it accepts them (issue 37: a disk that filled while the monitor ran lost 21.6 s of records).

While writes are held the store still reads the file (what it held until then: no check history
vanishes, no "never checked" finding appears because the disk is full). Held is bounded:
``MAX_HELD_WRITES``; past it the oldest snapshot inserts go first (a sync record is never
dropped before them), and the store says how many. An update that sets whole fields of one row
(a running sync's writes so far, every second) replaces the held update of the same row and
fields: a sync held for an hour is one row and a few updates, not 3,600 of them.

A sync record's id is chosen before it is written (the store's ``start_sync``), so the
recorder's references to it are right whether the row went in at once or later. Should another
process have taken that id meanwhile (the TUI and the monitor share the file), the row gets a new
one when written and the held writes that name it follow it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.wear.dbfile import is_transient, suppress_all

MAX_HELD_WRITES = 20_000  # ~1 KB each (a snapshot's counters): ~20 MB at most
RETRY_EVERY_S = 5.0  # how often held writes are tried while the database refuses them


@dataclass
class Write:
    """One statement. ``key``: an update of whole fields of one row (a newer one with the same
    key replaces it); ``defines``: the sync id an insert gives its row (its first parameter),
    ``new_id_sql`` the same insert without it; ``refs``: the index in ``params`` of a sync id
    this statement names."""

    sql: str
    params: tuple[Any, ...]
    key: tuple[str, int] | None = None
    defines: int | None = None
    new_id_sql: str = ""
    refs: int | None = None


def _is_snapshot(w: Write) -> bool:
    return w.sql.startswith("INSERT INTO snapshots")


@dataclass
class HeldWrites:
    ops: list[Write] = field(default_factory=list)
    dropped: int = 0
    since: float | None = None  # when the first held write was refused (wall clock)
    why: str = ""
    announced: bool = False  # the log was told writes are held
    _by_key: dict[tuple[str, int], int] = field(default_factory=dict)
    _next_try: float = 0.0

    def __bool__(self) -> bool:
        return bool(self.ops)

    def hold(self, writes: Iterable[Write], why: str = "") -> None:
        if not self.ops:
            self.since, self.why = time.time(), why or self.why
            self._next_try = time.monotonic() + RETRY_EVERY_S
        for w in writes:
            at = self._by_key.get(w.key) if w.key is not None else None
            if at is not None:
                self.ops[at] = w  # the newer values of the same fields of the same row
                continue
            if w.key is not None:
                self._by_key[w.key] = len(self.ops)
            self.ops.append(w)
        if len(self.ops) > MAX_HELD_WRITES:
            self._bound()

    def _bound(self) -> None:
        over = len(self.ops) - MAX_HELD_WRITES
        keep: list[Write] = []
        for w in self.ops:
            if over > 0 and _is_snapshot(w):
                over -= 1
                self.dropped += 1
                continue
            keep.append(w)
        if over > 0:  # nothing but sync records held: the oldest go
            self.dropped += over
            keep = keep[over:]
        self.ops = keep
        self._by_key = {w.key: i for i, w in enumerate(keep) if w.key is not None}

    def due(self, *, force: bool = False) -> bool:
        return bool(self.ops) and (force or time.monotonic() >= self._next_try)

    def flush(self, conn: sqlite3.Connection) -> int | None:
        """Write every held statement in one transaction: how many, or None when the database
        still refuses them (transient: tried again after ``RETRY_EVERY_S``). Raises what is not
        transient (the caller keeps them held and says so)."""
        self._next_try = time.monotonic() + RETRY_EVERY_S
        moved: dict[int, int] = {}
        try:
            conn.execute("BEGIN IMMEDIATE")
            for w in self.ops:
                params = w.params
                if w.refs is not None and params[w.refs] in moved:
                    params = (*params[: w.refs], moved[params[w.refs]], *params[w.refs + 1 :])
                try:
                    conn.execute(w.sql, params)
                except sqlite3.IntegrityError:
                    if w.defines is None or not w.new_id_sql:
                        raise
                    # the id was taken meanwhile (another process): a new one, followed by the
                    # held writes that name it
                    cur = conn.execute(w.new_id_sql, params[1:])
                    moved[w.defines] = int(cur.lastrowid or 0)
            conn.execute("COMMIT")
        except sqlite3.Error as e:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if is_transient(e):
                return None
            raise
        n = len(self.ops)
        self.ops, self._by_key, self.since, self.announced = [], {}, None, False
        return n


class HeldWriter:
    """The store's writes (app.wear.snapshots.SnapshotStore): each statement through
    :meth:`_write`, a transaction through :meth:`batch`; what the file refuses for the moment is
    held (:class:`HeldWrites`) and written first once it accepts writes again."""

    _conn: sqlite3.Connection
    path: Path | None
    notes: list[str]
    _wal: bool
    _synchronous: int
    _held: HeldWrites
    _journal: list[Write] | None
    _batch_held: bool
    _last_sid: int

    @property
    def refused(self) -> str | None:
        """Why writes are held now (the database's error), or None when none are."""
        return (self._held.why or "refused") if self._held else None

    @contextmanager
    def batch(self, *, durable: bool = True) -> Iterator[None]:
        """The writes inside go in one transaction (one commit, one sync of the WAL, instead of
        one per statement); rolled back if one of them fails. The database refusing them for the
        moment (disk full, locked): they are held, in order (app.wear.held_writes).

        ``durable=False`` (figures rewritten every second, e.g. a running sync's writes so far):
        in WAL mode the commit is not synced to the disk (``synchronous=NORMAL``): still atomic
        and kept if raidman dies, possibly lost on a power cut, and synced by the next durable
        commit. No fsync per second (measured: 1.7 → 0.16 ms a commit of 16 rows)."""
        if self._conn.in_transaction or self._journal is not None:
            yield
            return
        if self._held.due():
            self._flush_held()
        self._journal, self._batch_held = [], bool(self._held)
        relaxed = not durable and self._wal and not self._batch_held
        try:
            if relaxed:
                self._conn.execute("PRAGMA synchronous=NORMAL")
            if not self._batch_held:
                self._conn.execute("BEGIN")
            try:
                yield
                if not self._batch_held:
                    self._conn.execute("COMMIT")
            except sqlite3.Error as e:
                if not self._holds(e):
                    raise
                self._batch_held = True
            finally:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
            if self._batch_held:
                self._held.hold(self._journal)
        finally:
            self._journal, self._batch_held = None, False
            if relaxed:
                with suppress_all():
                    self._conn.execute(f"PRAGMA synchronous={self._synchronous:d}")

    def _holds(self, e: sqlite3.Error) -> bool:
        """Whether a refused write is held: the file refused it for the moment."""
        if self.path is None or not is_transient(e):
            return False
        if not self._held:
            self.notes.append(
                f"wear database {self.path}: {e}; what is recorded is held in memory and "
                "written as soon as it accepts it"
            )
            self._held.why = str(e)
        return True

    def _write(self, w: Write) -> sqlite3.Cursor | None:
        """One statement, or held (None) when the file refuses it for the moment."""
        if self._journal is not None:  # in a batch: kept, in case the batch must be held
            self._journal.append(w)
            if self._batch_held:
                return None
            try:
                return self._conn.execute(w.sql, w.params)
            except sqlite3.Error as e:
                if not self._holds(e):
                    raise
                self._conn.execute("ROLLBACK")  # the rest of the batch goes to the journal
                self._batch_held = True
                return None
        if self._held:  # what is held goes first
            if self._held.due():
                self._flush_held()
            if self._held:
                self._held.hold([w])
                return None
        try:
            return self._conn.execute(w.sql, w.params)
        except sqlite3.Error as e:
            if not self._holds(e):
                raise
            self._held.hold([w], str(e))
            return None

    def _flush_held(self) -> str | None:
        """Write the held statements if the file takes them now: the line saying so."""
        n, dropped = len(self._held.ops), self._held.dropped
        try:
            if self._held.flush(self._conn) is None:
                return None
        except sqlite3.Error as e:
            line = f"wear database {self.path}: held records not written: {e}"
            if line not in self.notes:
                self.notes.append(line)
            return line
        lost = f" ({dropped} older snapshots were dropped to bound memory)" if dropped else ""
        self._held.dropped = 0
        line = f"wear database {self.path} accepts writes again: wrote {n} held record(s){lost}"
        self.notes.append(line)
        return line

    def _sync_id(self) -> int:
        """The id the next sync record gets (as AUTOINCREMENT would give it): chosen before the
        row is written, so a held row keeps it."""
        row = self._conn.execute(
            "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name='sync_events'), 0),"
            " COALESCE((SELECT MAX(id) FROM sync_events), 0))"
        ).fetchone()
        self._last_sid = max(self._last_sid, int(row[0]) if row and row[0] else 0) + 1
        return self._last_sid
