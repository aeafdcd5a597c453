"""``raidman metrics [--textfile-dir DIR] [--no-smart] [--no-audit] [--demo S | --replay DIR]``:
the Prometheus metrics once, in node_exporter's textfile-collector format (see app/metrics.py).
Without ``--textfile-dir`` they go to stdout; with it, atomically into ``DIR/raidman.prom``.
``raidman monitor --textfile-dir DIR`` keeps the file current."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app.commands.backend_options import add_backend_options, make_backend
from app.metrics import TEXTFILE_NAME, TextfileError, metrics_text, write_textfile
from app.wear.snapshots import SnapshotStore


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "metrics", help="print Prometheus metrics once (node_exporter textfile format)"
    )
    p.add_argument(
        "--textfile-dir",
        metavar="DIR",
        help=f"write DIR/{TEXTFILE_NAME} atomically instead of printing",
    )
    p.add_argument("--no-smart", action="store_true", help="skip SMART (no smartctl runs)")
    p.add_argument("--no-audit", action="store_true", help="skip the alignment/tuning audit")
    p.add_argument("--db", metavar="PATH", help="wear database (default: the state directory)")
    add_backend_options(p)
    return p


def run(args: argparse.Namespace) -> int:
    if getattr(args, "host", None):
        # node_exporter runs on each machine; the snapshot database here is this machine's
        print("raidman metrics: runs on the machine it describes (no --host)", file=sys.stderr)
        return 2
    backend = make_backend(args)
    store = SnapshotStore.open(args.db)
    try:
        text = metrics_text(
            backend, store, smart="none" if args.no_smart else "live", findings=not args.no_audit
        )
    except Exception as e:  # a probe that fails entirely: a message, not a traceback
        print(f"raidman metrics: probe failed: {e}", file=sys.stderr)
        return 1
    finally:
        store.close()
    if args.textfile_dir:
        try:
            path = write_textfile(args.textfile_dir, text)
        except (TextfileError, OSError) as e:
            print(f"raidman metrics: {e}", file=sys.stderr)
            return 1
        print(f"wrote {path}", file=sys.stderr)
        return 0
    sys.stdout.write(text)
    return 0
