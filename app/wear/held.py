"""Wear history held in memory while the database cannot be used (locked by another process,
the disk full at start), and written to it as soon as it accepts it.

Memory is bounded: the newest :data:`MAX_HELD_SNAPSHOTS` snapshots are kept (the oldest are
dropped, and the store says how many). Sync events are few (one per sync) and all kept; their
ids in memory start above any id an earlier run could have given (milliseconds since the epoch
× 256), so a running sync keeps its id when it is written to the file and the recorder's
references stay right.
"""

from __future__ import annotations

import sqlite3
import time

MAX_HELD_SNAPSHOTS = 20_000  # ~1 KB each: 20 MB at most; a 24-disk host every 15 min: 9 days
RETRY_EVERY_S = 30.0  # how often a monitor holding history tries the database again


def seed_ids(conn: sqlite3.Connection, now: float | None = None) -> None:
    """Make the in-memory sync ids start above any the file holds from earlier runs."""
    base = int((time.time() if now is None else now) * 1000) << 8
    conn.execute(
        "INSERT OR REPLACE INTO sqlite_sequence (name, seq) VALUES ('sync_events', ?)", (base,)
    )


def prune(conn: sqlite3.Connection, keep: int | None = None) -> int:
    """Drop the oldest snapshots beyond ``keep`` (default MAX_HELD_SNAPSHOTS); how many were
    dropped."""
    keep = MAX_HELD_SNAPSHOTS if keep is None else keep
    cur = conn.execute(
        "DELETE FROM snapshots WHERE id <= "
        "(SELECT id FROM snapshots ORDER BY id DESC LIMIT 1 OFFSET ?)",
        (keep,),
    )
    return max(0, cur.rowcount)


def copy_held(src: sqlite3.Connection, dst: sqlite3.Connection) -> tuple[int, int]:
    """Write everything ``src`` (memory) holds into ``dst`` (the file) in one transaction:
    (snapshots, sync events). Sync events keep their ids (see the module doc); one whose id
    the file already has gets a new one and its snapshots follow it."""
    moved: dict[int, int] = {}
    n_sync = n_snap = 0
    dst.execute("BEGIN IMMEDIATE")
    try:
        for r in src.execute("SELECT * FROM sync_events ORDER BY id"):
            cols = list(r.keys())
            row = tuple(r)
            try:
                dst.execute(
                    f"INSERT INTO sync_events ({', '.join(cols)}) "
                    f"VALUES ({', '.join('?' * len(cols))})",
                    row,
                )
            except sqlite3.IntegrityError:
                rest = [c for c in cols if c != "id"]
                cur = dst.execute(
                    f"INSERT INTO sync_events ({', '.join(rest)}) "
                    f"VALUES ({', '.join('?' * len(rest))})",
                    tuple(r[c] for c in rest),
                )
                moved[int(r["id"])] = int(cur.lastrowid or 0)
            n_sync += 1
        for r in src.execute(
            "SELECT ts, serial, device, reason, sync_id, counters FROM snapshots ORDER BY id"
        ):
            snap: list[object] = list(r)
            sid = snap[4]
            if isinstance(sid, int) and sid in moved:
                snap[4] = moved[sid]
            dst.execute(
                "INSERT INTO snapshots (ts, serial, device, reason, sync_id, counters) "
                "VALUES (?,?,?,?,?,?)",
                snap,
            )
            n_snap += 1
        dst.execute("COMMIT")
    except BaseException:
        dst.execute("ROLLBACK")
        raise
    return n_snap, n_sync
