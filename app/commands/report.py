"""``raidman report [--json] [--demo SCENARIO | --replay DIR | --host NAME ...]``: the model, headless.

With several ``--host``s the hosts are probed at once (one thread each, one ssh round trip per
probe) and the JSON is one report per host, keyed by host; one host has the shape of a local
report. A host that cannot be reached is a report whose notes say so, and exit status 1.

Exit status: 0 reported; 1 a probe failed (or a host was unreachable); 2 bad --host/hosts file.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from app.backend import Backend
from app.commands.backend_options import add_backend_options, make_backends
from app.escape import escape_controls
from app.fleet import unreachable_reason
from app.kernel_log import kernel_log_json, kernel_log_text, read_kernel_log
from app.paths import DB_FILE, host_state_dir
from app.report import full_report_json, full_report_text
from app.report_io import add_io_json, io_rates, io_text
from app.routine.config import ConfigError, load_config
from app.wear.check_findings import DEFAULT_MAX_AGE_DAYS
from app.wear.snapshots import SnapshotStore


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "report", help="print the storage stack (text, or JSON with --json)"
    )
    p.add_argument("--json", action="store_true", help="machine-readable JSON")
    p.add_argument("--no-smart", action="store_true", help="skip SMART (no smartctl runs)")
    p.add_argument("--no-audit", action="store_true", help="skip the alignment/tuning audit")
    p.add_argument(
        "--log",
        action="store_true",
        help="add the kernel's lines (journalctl -k, or dmesg) that name a disk, partition or array",
    )
    p.add_argument(
        "--io",
        action="store_true",
        help="add live I/O per disk and array (two samples a second apart: disks[].io)",
    )
    add_backend_options(p)
    return p


def _remote_report(host: str, backend: Backend, args: argparse.Namespace) -> tuple[Any, bool]:
    """(JSON report or text, reached) of one host. Its sync records are the ones raidman kept
    here while watching that host (``host_state_dir``), never this machine's own."""
    machine = backend.probe()
    why = unreachable_reason(backend)
    reached = why is None
    if why is not None and not args.json:  # no "not root", no "Findings: none": one line
        return f"{host}: not reached: {why}\n", False
    kw: dict[str, Any] = {"smart": not args.no_smart and reached, "findings": not args.no_audit}
    store = SnapshotStore.open(host_state_dir(host) / DB_FILE)
    try:
        if args.json:
            report = full_report_json(backend, machine, store=store, **kw)
            return _with_extras_json(report, backend, machine, args, reached), reached
        text = full_report_text(backend, machine, store=store, **kw)
        return text + _extras_text(backend, machine, args, reached), reached
    finally:
        store.close()


def _with_extras_json(
    report: dict[str, Any], backend: Backend, machine: Any, args: argparse.Namespace, reached: bool
) -> dict[str, Any]:
    """``disks[].io`` (two samples a second apart) and, with ``--log``, ``kernel_log``."""
    if reached and getattr(args, "io", False):
        add_io_json(report, io_rates(backend), machine)
    if reached and getattr(args, "log", False):
        report["kernel_log"] = kernel_log_json(read_kernel_log(backend), machine)
    return report


def _extras_text(backend: Backend, machine: Any, args: argparse.Namespace, reached: bool) -> str:
    lines: list[str] = []
    if reached and getattr(args, "io", False):
        lines += ["", "I/O (one second, busiest first)", *io_text(io_rates(backend), machine)]
    if reached and getattr(args, "log", False):
        lines += ["", "Kernel log", *kernel_log_text(read_kernel_log(backend), machine)]
    return "".join(f"{escape_controls(ln)}\n" for ln in lines)


def _run_hosts(backends: list[tuple[str | None, Backend]], args: argparse.Namespace) -> int:
    from concurrent.futures import ThreadPoolExecutor

    def one(hb: tuple[str | None, Backend]) -> tuple[Any, bool]:
        host, backend = hb
        try:
            return _remote_report(str(host), backend, args)
        except Exception as e:  # one host's failure must not lose the others' reports
            msg = f"probe failed: {escape_controls(str(e))}"
            return (
                ({"host": host, "notes": [{"source": "ssh", "message": msg}]}, False)
                if (args.json)
                else (f"{host}: {msg}\n", False)
            )

    with ThreadPoolExecutor(max_workers=min(32, len(backends))) as pool:
        results = list(pool.map(one, backends))
    if args.json:
        if len(backends) == 1:
            json.dump(results[0][0], sys.stdout, indent=2)
        else:
            json.dump(
                {str(h): r for (h, _), (r, _ok) in zip(backends, results, strict=True)},
                sys.stdout,
                indent=2,
            )
        sys.stdout.write("\n")
    else:
        for (h, _), (text, _ok) in zip(backends, results, strict=True):
            if len(backends) > 1:
                sys.stdout.write(f"== {h} ==\n")
            sys.stdout.write(text)
    return 0 if all(ok for _r, ok in results) else 1


def run(args: argparse.Namespace) -> int:
    backends = make_backends(args)
    if backends[0][0] is not None:
        return _run_hosts(backends, args)
    backend = backends[0][1]
    try:
        machine = backend.probe()
    except Exception as e:  # a backend that cannot probe at all: a message, not a traceback
        print(f"raidman: probe failed: {escape_controls(str(e))}", file=sys.stderr)
        return 1
    store = SnapshotStore.open()
    age = DEFAULT_MAX_AGE_DAYS
    try:  # the check findings' age limit (raidman.toml [checks] max_age_days)
        age = load_config().max_age_days
    except ConfigError as e:
        print(f"raidman: {e}; the check age limit is {age:g} days", file=sys.stderr)
    try:
        if args.json:
            report = full_report_json(
                backend,
                machine,
                smart=not args.no_smart,
                findings=not args.no_audit,
                store=store,
                check_max_age_days=age,
            )
            report = _with_extras_json(report, backend, machine, args, True)
            json.dump(report, sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            sys.stdout.write(
                full_report_text(
                    backend,
                    machine,
                    smart=not args.no_smart,
                    findings=not args.no_audit,
                    store=store,
                    check_max_age_days=age,
                )
                + _extras_text(backend, machine, args, True)
            )
    finally:
        store.close()
    return 0
