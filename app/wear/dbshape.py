"""The shape of raidman's wear database, as read back: whether a file is raidman's database at
all (or a newer raidman's), and each row's columns as raidman wrote them.

The database is state the owner can write (any program running as them, a restore from a backup
of another tool): a foreign SQLite file is refused rather than given raidman's tables, a newer
schema is refused untouched (not moved aside), and a column of the wrong type, nested JSON or an
absurd number is a :class:`BadRow` (the store skips that row with a note), never a crash of
``report``, ``monitor`` or the TUI.
"""

from __future__ import annotations

import math
import sqlite3
from typing import Any

from app.parsers.errors import ParseError
from app.parsers.safe import load_json


class DatabaseRefused(sqlite3.DatabaseError):
    """A database that is not raidman's, or was made by a newer raidman: refused and left
    untouched (never moved aside, no table added), the store runs in memory."""


class BadRow(ValueError):
    """A row whose columns are not what raidman wrote (wrong type, nested, out of range)."""


ROW_JSON_DEPTH = 4  # counters / kernel_writes: an object of objects of numbers


OUR_TABLES = frozenset({"meta", "snapshots", "sync_events", "benchmarks", "sqlite_sequence"})


def check_ours(conn: sqlite3.Connection, schema_version: int) -> None:
    """Raise DatabaseRefused for a database another program made (a table raidman never
    creates, or no schema mark beside tables) or a newer raidman made (schema above ours)."""
    tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:
        return  # empty: a new database
    foreign = sorted(tables - OUR_TABLES)
    if foreign:
        shown = ", ".join(repr(t)[:40] for t in foreign[:3])
        raise DatabaseRefused(f"not raidman's database (it holds table {shown})")
    if "meta" not in tables:
        return  # only our tables, made before the meta row was written: completed below
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    except sqlite3.DatabaseError:
        raise DatabaseRefused("not raidman's database (its meta table is not raidman's)") from None
    if row is None:
        return
    version = row[0]
    if not isinstance(version, str) or not version.isascii() or not version.isdigit():
        raise DatabaseRefused("not raidman's database (its schema mark is not a number)")
    if len(version) > 6 or int(version) > schema_version:
        raise DatabaseRefused(
            f"made by a newer raidman (schema {version[:8]}, this raidman knows up to "
            f"{schema_version}); use that raidman, or move the file away to start a new one"
        )


MAX_TEXT = 4096  # a device name, a serial, a reason: far shorter
MAX_TS = 1e11  # unix seconds: the year 5138


def int_col(r: sqlite3.Row, col: str, *, none_ok: bool = False) -> Any:
    v = r[col]
    if v is None and none_ok:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**63:
        raise BadRow(f"{col} is not a row number")
    return v


def time_col(r: sqlite3.Row, col: str) -> float:
    v = r[col]
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise BadRow(f"{col} is not a time")
    if not 0 <= v <= MAX_TS:
        raise BadRow(f"{col} is out of range")
    return float(v)


def text_col(r: sqlite3.Row, col: str) -> str:
    v = r[col]
    if not isinstance(v, str) or len(v) > MAX_TEXT:
        raise BadRow(f"{col} is not text")
    return v


def json_col(r: sqlite3.Row, col: str, kind: type) -> Any:
    """The column's JSON (None when NULL), depth and numbers bounded, of type ``kind``."""
    v = r[col]
    if v is None:
        return None
    if not isinstance(v, str):
        raise BadRow(f"{col} is not JSON text")
    try:
        doc = load_json(v, col, max_depth=ROW_JSON_DEPTH)
    except ParseError as e:
        raise BadRow(str(e)) from None
    if not isinstance(doc, kind):
        raise BadRow(f"{col} is not a JSON {kind.__name__}")
    return doc


def counter(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**64
