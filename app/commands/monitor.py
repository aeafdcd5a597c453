"""``raidman monitor [--interval S] [--once] [--demo SCENARIO]``: record SMART snapshots and sync
events headless (the systemd unit packaging/raidman-monitor.service runs this)."""

from __future__ import annotations

import argparse
import math
import signal
import sqlite3
import sys
import threading
import time
from types import FrameType
from typing import Any

from app.backend import EventSource
from app.commands.backend_options import add_backend_options, make_backend
from app.metrics import TextfileWriter
from app.monitor import DEFAULT_INTERVAL_S, WearMonitor
from app.sync.boost import BoostStore
from app.wear.dbfile import is_transient
from app.wear.snapshots import SnapshotStore

POLL_S = 1.0  # how often md state is sampled (cheap sysfs + /proc/diskstats reads), as the TUI
POLL_RANGE_S = (0.2, 3600.0)  # below: a core spent polling (--poll 0 held 99.8 %); above: blind
INTERVAL_RANGE_S = (1.0, 7 * 86400.0)  # SMART snapshots: at most every second, at least weekly


def _seconds(lo: float, hi: float) -> Any:
    """An argparse type: a finite number of seconds within [lo, hi] ("inf", "nan", 0 refused
    with a usage error, not a traceback or a spinning loop)."""

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
        if not math.isfinite(v) or not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{text} is not between {lo:g} and {hi:g} seconds")
        return v

    parse.__name__ = "seconds"
    return parse


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "monitor", help="headless: record SMART snapshots and the wear of every sync"
    )
    p.add_argument(
        "--interval",
        type=_seconds(*INTERVAL_RANGE_S),
        default=DEFAULT_INTERVAL_S,
        metavar="S",
        help=f"seconds between periodic SMART snapshots (default {DEFAULT_INTERVAL_S:.0f})",
    )
    p.add_argument(
        "--poll",
        type=_seconds(*POLL_RANGE_S),
        default=POLL_S,
        metavar="S",
        help=f"seconds between sync-state polls ({POLL_RANGE_S[0]:g}-{POLL_RANGE_S[1]:g})",
    )
    p.add_argument("--once", action="store_true", help="one snapshot of every disk, then exit")
    p.add_argument("--db", metavar="PATH", help="database file (default: the state directory)")
    p.add_argument(
        "--textfile-dir",
        metavar="DIR",
        help="also keep DIR/raidman.prom current for node_exporter's textfile collector",
    )
    add_backend_options(p)
    return p


def run(args: argparse.Namespace) -> int:
    def out(line: str) -> None:
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}", flush=True)

    if getattr(args, "host", None):
        # the snapshot database is this machine's: another's syncs and SMART do not go in it
        print("raidman monitor: runs on the machine it watches (no --host)", file=sys.stderr)
        return 2
    backend = make_backend(args)
    store = SnapshotStore.open(args.db)
    for note in store.notes:
        out(f"note: {note}")
    where = store.path or (
        f"(memory until {store.holding} accepts)" if store.holding else "(memory)"
    )
    out(f"raidman monitor on {backend.name}; database {where}")
    mon = WearMonitor(
        backend,
        store,
        interval_s=args.interval,
        log=out,
        threaded=not args.once,
        boosts=BoostStore(),
    )
    textfile = TextfileWriter(backend, store, args.textfile_dir) if args.textfile_dir else None
    if args.once:
        try:
            mon.tick()
            if textfile is not None:
                textfile.tick()
            mon.close()  # what the database did not take at start: one more try
        except sqlite3.Error as e:  # locked by another process, disk full: a message, no traceback
            why = " (another process holds it)" if is_transient(e) and "lock" in str(e) else ""
            print(
                f"raidman monitor: cannot record to the wear database {store.path}: {e}{why}; "
                "nothing more was recorded, run again later",
                file=sys.stderr,
            )
            return 1
        finally:
            store.close()
        return 0

    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        out(f"signal {signum}: stopping")
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # wake on md events (array/sync start and end, member changes) as mdadm --monitor does;
    # the poll interval is the fallback (and all there is on simulated/replay backends)
    events: EventSource | None = backend if isinstance(backend, EventSource) else None
    try:
        while not stop.is_set():
            try:
                mon.tick()
                if textfile is not None:
                    textfile.tick()
            except Exception as e:  # keep the service alive; the next tick retries
                out(f"error: {e.__class__.__name__}: {e}")
            t0 = time.monotonic()
            woke = False
            if events is not None:
                try:
                    got = events.wait_event(args.poll)
                except Exception:
                    got = False
                if got is None:  # this backend never has events: the timer only
                    events = None
                woke = bool(got)
            if not woke and not stop.is_set():
                stop.wait(max(0.0, args.poll - (time.monotonic() - t0)))
    finally:
        mon.close()
        store.close()
    out("stopped")
    return 0
