"""``raidman monitor [--interval S] [--once] [--demo SCENARIO]``: record SMART snapshots and sync
events headless (the systemd unit packaging/raidman-monitor.service runs this); run the
scheduled checks and send the alerts (app.routine: raidman.toml beside hosts.toml, reloaded on
SIGHUP; ``--check-every``, ``--check-window``, ``--alert-program``, ``--mailaddr`` override it);
``--test-alert`` sends TestMessage for every array and exits."""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import signal
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from app.backend import Backend, EventSource
from app.commands.backend_options import add_backend_options, make_backend
from app.metrics import TextfileWriter
from app.monitor import DEFAULT_INTERVAL_S, WearMonitor
from app.routine.alerts import Alerter, resolve_targets
from app.routine.config import (
    MIN_EVERY_S,
    ConfigError,
    RoutineConfig,
    load_config,
    parse_duration,
    parse_mailaddr,
    parse_program,
    parse_url,
)
from app.routine.events import AlertEvent
from app.routine.runner import Routine
from app.sync.boost import BoostStore
from app.wear.dbfile import is_transient
from app.wear.snapshots import SnapshotStore
from backends.linux.notify import post_http, run_notifier

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
    p.add_argument("--config", metavar="PATH", help="raidman.toml (default: beside hosts.toml)")
    p.add_argument(
        "--check-every",
        metavar="DURATION",
        help='scheduled checks: "monthly" (first Sunday 01:00, the default), "off", or a '
        "duration between windows (7d, 2m)",
    )
    p.add_argument(
        "--check-window", metavar="DURATION", help="how long a check may run per window (6h)"
    )
    p.add_argument("--alert-program", metavar="PATH", help="run PATH EVENT MD-DEVICE [COMPONENT]")
    p.add_argument("--mailaddr", metavar="ADDR", help="mail alerts to ADDR through sendmail")
    p.add_argument("--webhook", metavar="URL", help="POST each alert to URL as JSON")
    p.add_argument("--ntfy", metavar="URL", help="POST each alert to an ntfy topic URL")
    p.add_argument(
        "--test-alert",
        action="store_true",
        help="send a TestMessage alert for every array, then exit",
    )
    add_backend_options(p)
    return p


def routine_config(args: argparse.Namespace) -> RoutineConfig:
    """The configuration file with the command line's values over it (ConfigError if either is
    out of shape). With ``--demo``/``--replay`` the file's alert program and addresses are
    not used (nothing simulated leaves the machine): the command line's only."""
    cfg = load_config(Path(args.config) if getattr(args, "config", None) else None)
    kw: dict[str, Any] = {}
    if getattr(args, "demo", None) or getattr(args, "replay", None):
        kw.update(
            alert_program=None,
            mailaddr=None,
            mailfrom=None,
            webhook=None,
            ntfy=None,
            simulated=True,
        )
    # the schedule a plan installed (app.plans.builders.check_schedule's drop-in) under the flags
    every = getattr(args, "check_every", None) or os.environ.get("RAIDMAN_CHECK_EVERY")
    window = getattr(args, "check_window", None) or os.environ.get("RAIDMAN_CHECK_WINDOW")
    if every:
        kw["check_every_s"] = (
            None
            if every == "monthly"
            else 0.0
            if every == "off"
            else parse_duration(every, "--check-every")
        )
        if kw["check_every_s"] and kw["check_every_s"] < MIN_EVERY_S:
            raise ConfigError("--check-every: shorter than a minute")
        # a schedule given on the command line (or installed as the unit's drop-in) is the
        # admin's word for this host: it runs even where Debian's AUTOCHECK is on, and the
        # monitor says that checkarray's cron runs too (app.routine.scheduler)
        kw["ignore_autocheck"] = True
        kw["schedule_from"] = (
            "--check-every" if getattr(args, "check_every", None) else ("RAIDMAN_CHECK_EVERY")
        )
    if window:
        kw["check_window_s"] = parse_duration(window, "--check-window")
    if getattr(args, "alert_program", None):
        kw["alert_program"] = parse_program("--alert-program", args.alert_program)
    if getattr(args, "mailaddr", None):
        kw["mailaddr"] = parse_mailaddr("--mailaddr", args.mailaddr)
    for key in ("webhook", "ntfy"):
        if getattr(args, key, None):
            kw[key] = parse_url(f"--{key}", "the URL", getattr(args, key))
    return dataclasses.replace(cfg, **kw) if kw else cfg


def _sender(
    argv: Sequence[str], env: Mapping[str, str], stdin: str | None, timeout: float
) -> tuple[int | None, str]:
    return run_notifier(argv, env=env, stdin=stdin, timeout=timeout)


def _poster(
    url: str, body: bytes, headers: Mapping[str, str], timeout: float
) -> tuple[int | None, str]:
    return post_http(url, body, headers, timeout)


def test_alert(backend: Backend, cfg: RoutineConfig, out: Callable[[str], None]) -> int:
    """``--test-alert``: TestMessage for every array through the program / mail, as ``mdadm
    --monitor --test`` does; 0 when every delivery worked."""
    targets = resolve_targets(cfg, backend)
    if not targets.any and not cfg.simulated:
        print(
            "raidman monitor: no alert program, mail address or webhook (raidman.toml "
            "[alerts], --alert-program/--mailaddr/--webhook/--ntfy, or mdadm.conf "
            "PROGRAM/MAILADDR)",
            file=sys.stderr,
        )
        return 1
    arrays = [a for a in backend.probe().arrays if not a.is_container]
    if not arrays:
        print(
            f"raidman monitor: no md arrays on {backend.name}: nothing to watch, "
            "no test alert sent",
            file=sys.stderr,
        )
        return 0
    alerter = Alerter(
        backend,
        targets,
        _sender,
        log=out,
        cooldown_s=cfg.cooldown_s,
        timeout_s=cfg.timeout_s,
        host=socket.gethostname(),
        poster=_poster,
    )
    out(f"alerts: {targets.text()}")
    jobs = []
    for a in arrays:
        jobs += alerter.emit(
            AlertEvent("TestMessage", a.name, detail=f"test message for {a.name}"), fold=False
        )
    ok = True
    for j in jobs:
        j.done.wait(cfg.timeout_s + 5)
        ok = ok and j.ok
    alerter.close()
    return 0 if ok and (jobs or not targets.any) else 1


def run(args: argparse.Namespace) -> int:
    def out(line: str) -> None:
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}", flush=True)

    if getattr(args, "host", None):
        # the snapshot database is this machine's: another's syncs and SMART do not go in it
        print("raidman monitor: runs on the machine it watches (no --host)", file=sys.stderr)
        return 2
    try:
        cfg = routine_config(args)
    except ConfigError as e:
        print(f"raidman monitor: {e}", file=sys.stderr)
        return 2
    backend = make_backend(args)
    if args.test_alert:
        return test_alert(backend, cfg, out)
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
            refused = store.refused  # held in memory, and this run ends: not recorded
            if refused is not None:
                raise sqlite3.OperationalError(refused)
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
    reload = threading.Event()

    def on_hangup(_signum: int, _frame: FrameType | None) -> None:
        reload.set()

    signal.signal(signal.SIGHUP, on_hangup)
    routine = Routine(
        backend,
        store,
        cfg,
        out,
        _sender,
        lock=mon.store_lock,
        view=lambda: mon.session.view,
        boosts=mon.session.boosts,
        host=socket.gethostname(),
        poster=_poster,
    )
    # wake on md events (array/sync start and end, member changes) as mdadm --monitor does;
    # the poll interval is the fallback (and all there is on simulated/replay backends)
    events: EventSource | None = backend if isinstance(backend, EventSource) else None
    try:
        while not stop.is_set():
            if reload.is_set():
                reload.clear()
                try:
                    routine.configure(routine_config(args))
                    out("configuration reloaded")
                except Exception as e:  # SIGHUP never stops the monitor (a ConfigError is
                    # one line; anything else is a bug, named so)
                    why = str(e) if isinstance(e, ConfigError) else f"{type(e).__name__}: {e}"
                    out(f"configuration not reloaded (the one in force stays): {why}")
            try:
                mon.tick()
                if textfile is not None:
                    textfile.tick()
            except Exception as e:  # keep the service alive; the next tick retries
                out(f"error: {e.__class__.__name__}: {e}")
            try:
                routine.tick()
            except Exception as e:  # the checks and alerts never stop the recording
                out(f"error: routine: {e.__class__.__name__}: {e}")
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
        routine.close()
        mon.close()
        store.close()
    out("stopped")
    return 0
