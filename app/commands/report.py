"""``raidman report [--json] [--demo SCENARIO | --replay DIR]``: the model, headless."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from app.cli import add_backend_options, make_backend
from app.report import full_report_json, full_report_text
from app.wear.snapshots import SnapshotStore


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "report", help="print the storage stack (text, or JSON with --json)"
    )
    p.add_argument("--json", action="store_true", help="machine-readable JSON")
    p.add_argument("--no-smart", action="store_true", help="skip SMART (no smartctl runs)")
    p.add_argument("--no-audit", action="store_true", help="skip the alignment/tuning audit")
    add_backend_options(p)
    return p


def run(args: argparse.Namespace) -> int:
    backend = make_backend(args)
    try:
        machine = backend.probe()
    except Exception as e:  # a backend that cannot probe at all: a message, not a traceback
        print(f"raidman: probe failed: {e}", file=sys.stderr)
        return 1
    store = SnapshotStore.open()
    try:
        if args.json:
            report = full_report_json(
                backend,
                machine,
                smart=not args.no_smart,
                findings=not args.no_audit,
                store=store,
            )
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
                )
            )
    finally:
        store.close()
    return 0
