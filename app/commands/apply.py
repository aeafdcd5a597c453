"""``raidman apply PLAN.json [--yes] [--confirm TARGET] [--dry-run] [--force CODE ...]``

1. reads the plan (as written by ``raidman plan --json`` / ``--out`` or the TUI's save);
2. re-runs pre-flight on the machine as it is NOW (a saved plan may be stale): refusals stop;
   every warning must be forced with ``--force CODE`` (recorded in the audit log);
3. shows the plan and asks for confirmation:
   * destructive plans: type the target's name. ``--yes`` does NOT skip this; a script passes
     ``--confirm TARGET`` instead, which must equal the plan's target;
   * other plans: y/N, skipped by ``--yes``;
   * without a terminal and without those options nothing runs;
4. executes (``--dry-run``: nothing runs, no confirmation needed) and prints each step's result.

Exit status: 0 all steps ran; 1 a step failed; 2 unreadable plan; 3 refused (pre-flight,
unforced warning, read-only backend, no confirmation); 4 dry run.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from app.cli import add_backend_options, make_backend
from app.plans.audit_log import AuditLog
from app.plans.executor import StepEvent, execute
from app.plans.plan import Plan
from app.plans.render import confirmation_matches, format_plan, preflight_for


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "apply", help="run a saved plan (pre-flight again, confirmation, audit log)"
    )
    p.add_argument("plan", metavar="PLAN.json")
    p.add_argument("--yes", "-y", action="store_true", help="skip the y/N of non-destructive plans")
    p.add_argument(
        "--confirm",
        metavar="TARGET",
        help="destructive plans: the target's name, non-interactively",
    )
    p.add_argument("--dry-run", action="store_true", help="show and check, execute nothing")
    p.add_argument(
        "--force",
        action="extend",
        nargs="+",
        default=[],
        metavar="CODE",
        help="go past these pre-flight warnings (signatures, size-mismatch, mixed-media, too-few, wipefs)",
    )
    add_backend_options(p)
    return p


def _load(path: str) -> Plan:
    with open(path, encoding="utf-8") as fh:
        return Plan.from_json(json.load(fh))


def _confirm(plan: Plan, args: argparse.Namespace) -> str | None:
    """None when confirmed, else why not."""
    if plan.destructive:
        if args.confirm is not None:
            return (
                None
                if confirmation_matches(plan, args.confirm)
                else (f"--confirm {args.confirm!r} does not match the target {plan.target!r}")
            )
        if not sys.stdin.isatty():
            return f"destructive plan: pass --confirm {plan.target} (or run it on a terminal)"
        typed = input(f"This destroys data. Type the target's name ({plan.target}) to go on: ")
        return None if confirmation_matches(plan, typed) else "the name did not match: nothing run"
    if args.yes:
        return None
    if not sys.stdin.isatty():
        return "not a terminal: pass --yes to run"
    answer = input("Run these steps? [y/N] ")
    return None if answer.strip().lower() in ("y", "yes") else "not confirmed: nothing run"


def run(args: argparse.Namespace) -> int:
    try:
        plan = _load(args.plan)
    except (OSError, ValueError) as e:
        print(f"raidman apply: cannot read {args.plan}: {e}", file=sys.stderr)
        return 2
    if not plan.steps:
        print("raidman apply: the plan has no steps", file=sys.stderr)
        return 2
    backend = make_backend(args)
    try:
        machine = backend.probe()
    except Exception as e:
        print(f"raidman: probe failed: {e}", file=sys.stderr)
        return 1
    pf = preflight_for(plan, machine, backend)
    sys.stdout.write(format_plan(plan, pf))
    sys.stdout.write("\n")
    forced = tuple(dict.fromkeys(args.force))
    if pf.refusals:
        print("refused by pre-flight: nothing was run", file=sys.stderr)
        return 3
    unforced = pf.unforced(forced)
    if unforced and not args.dry_run:
        codes = " ".join(dict.fromkeys(w.code for w in unforced))
        print(
            f"pre-flight warnings not forced: re-run with --force {codes} to go past them",
            file=sys.stderr,
        )
        return 3
    used = tuple(c for c in forced if c in pf.warning_codes)
    if args.dry_run:
        report = execute(plan, backend, dry_run=True)
        print(f"dry run: {report.refused}")
        return 4
    if backend.read_only_reason:
        report = execute(plan, backend, audit=AuditLog(), forced=used)
        print(f"raidman apply: {report.refused}", file=sys.stderr)
        return 3
    why_not = _confirm(plan, args)
    if why_not:
        print(f"raidman apply: {why_not}", file=sys.stderr)
        return 3

    def on_event(ev: StepEvent) -> None:
        n = ev.index + 1
        if ev.kind == "started":
            print(f"[{n}/{len(plan.steps)}] {ev.step.shell()}", flush=True)
        elif ev.status == "ok":
            print("      ✓ ok", flush=True)
        else:
            print(f"      ✗ {ev.message}", flush=True)
            if ev.result is not None and ev.result.stderr.strip():
                for line in ev.result.stderr.strip().splitlines():
                    print(f"        {line}", flush=True)

    audit = AuditLog()
    report = execute(plan, backend, audit=audit, forced=used, on_event=on_event)
    for o in report.outcomes:
        if o.status == "not-run":
            print(f"[{o.index + 1}/{len(plan.steps)}] not run: {o.step.shell()}")
    print(report.summary())
    if report.audit_error:
        print(f"warning: {report.audit_error}", file=sys.stderr)
    else:
        print(f"audit log: {audit.path}")
    return 0 if report.ok else 1
