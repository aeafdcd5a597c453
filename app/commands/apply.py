"""``raidman apply PLAN.json [--yes] [--confirm TARGET] [--dry-run] [--force CODE ...]``

1. reads the plan (as written by ``raidman plan --json`` / ``--out`` or the TUI's save) as
   untrusted input: a malformed file, or a step that does not decode into an operation raidman
   plans (``app.plans.ops.decode``), is one error line and exit status 2; a plan whose digest
   does not match (the whole plan: an integrity check, not a signature), steps out of an order
   raidman plans (``app.plans.guards.allowlist``), an empty or unknown kind, or steps naming other
   devices than the params is refused (exit status 3) before anything runs;
2. re-runs pre-flight (on the devices the argv writes to) on the machine as it is NOW (a saved plan may be stale): refusals stop;
   every warning must be forced with ``--force CODE`` (recorded in the audit log); every disk the
   plan writes to must still be the disk (serial, WWN) it was made for;
3. shows the plan and asks for confirmation (whether it destroys data, and the name to type,
   come from its argv, never from the file's ``destructive`` or ``target``):
   * destructive plans: type the target's name. ``--yes`` does NOT skip this; a script passes
     ``--confirm TARGET`` instead, which must equal the plan's target;
   * other plans: y/N, skipped by ``--yes``;
   * without a terminal and without those options nothing runs;
4. executes (``--dry-run``: nothing runs, no confirmation needed) and prints each step's result;
   right before each step that writes to devices, its pre-flight and disk identities are checked
   again (``app.plans.guards.recheck``).

Plan files of an older raidman (a digest over fewer fields) are refused: "re-plan it" costs one
command, and a digest that leaves the title or notes out lets a file say one thing and do
another.

Exit status: 0 all steps ran (or a dry run found nothing to refuse); 1 a step failed; 2 unreadable
or malformed plan; 3 refused (tampered plan, pre-flight, unforced warning, read-only backend,
audit log not writable, no confirmation, a plan made for another host than ``--host``).

With ``--host NAME`` the probe, pre-flight and steps run on that machine over ssh (the same
ControlMaster connection); the local audit log names the host and each step is also logged on
the host (``logger -t raidman``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from typing import Any

from app import statefiles
from app.backend import Backend
from app.commands.backend_options import add_backend_options, make_backend
from app.commands.refusal import REFUSED, refuse
from app.hosts import HostAuditLog, HostsError, plan_host
from app.model import Machine
from app.paths import host_state_dir, state_dir
from app.plans.audit_log import AuditLog
from app.plans.executor import StepEvent, execute
from app.plans.guards.identity import identity_problems
from app.plans.guards.plan_devices import plan_problems
from app.plans.ops import Fio, LocateBlink, NvmeSanitizeLog, SmartReport, SurfaceTest
from app.plans.outcome.sync_steps import sync_starting_steps
from app.plans.plan import (
    MAX_FILE_BYTES,
    Plan,
    PlanFileError,
    PlanRefused,
    escape_controls,
    parse_plan_bytes,
)
from app.plans.render import (
    confirmation_matches,
    current_consequences,
    format_plan,
    preflight_for,
)
from app.statefiles import StateFileError
from app.wear.expected import ExpectedForecasts
from app.wear.forecast import RecordedForecast


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


def _read(path: str) -> bytes:
    """The plan file's bytes (one more than a plan may have, so a bigger one is seen as such):
    a regular file only, opened non-blocking (a FIFO or a device is refused, never waited on),
    root's or the running user's, not writable by others, in directories no other user can
    change (a plan file is run with the running user's rights: issue 37)."""
    try:
        return statefiles.read_owned(path, what="plan file", max_bytes=MAX_FILE_BYTES)
    except StateFileError as e:
        why = str(e).removeprefix(f"refused plan file {path}: ")
        if any(w in why for w in ("owned by uid", "writable by group", "above it")):
            raise PlanRefused(
                f"{why}: a plan runs with your rights, so raidman runs only a file "
                "that you or root own and nobody else can change"
            ) from None
        raise PlanFileError(why) from None
    except OSError as e:
        raise PlanFileError(e.strerror or str(e)) from None


def _load(path: str) -> tuple[Plan, str | None, bytes]:
    """The plan, the digest it declares and the file's bytes; raises with a one-line message."""
    data = _read(path)
    return (*parse_plan_bytes(data), data)


def _refused(lines: Iterable[str]) -> int:
    return refuse("apply", lines)


def _confirm(plan: Plan, args: argparse.Namespace) -> str | None:
    """None when confirmed, else why not. Texts from the plan are shown escaped."""
    if plan.needs_typed:
        if args.confirm is not None:
            return (
                None
                if confirmation_matches(plan, args.confirm)
                else (
                    f"--confirm {escape_controls(args.confirm)!r} does not match "
                    f"{escape_controls(plan.confirm_word)!r}"
                )
            )
        if not sys.stdin.isatty():
            what = "destructive" if plan.destructive else "redundancy-reducing"
            word = escape_controls(plan.confirm_word)
            return f"{what} plan: pass --confirm {word} (or run it on a terminal)"
        what = "destroys data" if plan.destructive else "leaves an array with less redundancy"
        word = escape_controls(plan.confirm_word)
        typed = input(f"This {what}. Type the name ({word}) to go on: ")
        return None if confirmation_matches(plan, typed) else "the name did not match: nothing run"
    if args.yes:
        return None
    if not sys.stdin.isatty():
        return "not a terminal: pass --yes to run"
    answer = input("Run these steps? [y/N] ")
    return None if answer.strip().lower() in ("y", "yes") else "not confirmed: nothing run"


class _Handover:
    """The plan's forecasts of the syncs it starts, left for ``raidman monitor`` (another
    process) in the state directory right before the step that starts them, and withdrawn
    should that step fail (``app.wear.expected``): the sync's record then keeps the plan's
    forecast. A file that cannot be written is one warning line: the record keeps the model's."""

    def __init__(self, plan: Plan, machine: Machine, backend: Backend, host: str | None) -> None:
        self.starts = sync_starting_steps(plan, machine)
        self.machine = machine
        self.backend = backend
        self.host = host
        self._store: ExpectedForecasts | None = None

    def _expected(self) -> ExpectedForecasts:
        if self._store is None:
            where = state_dir() if self.host is None else host_state_dir(self.host)
            self._store = ExpectedForecasts(where)
        return self._store

    def __call__(self, ev: StepEvent) -> None:
        fcs = self.starts.get(ev.index)
        if not fcs:
            return
        try:
            if ev.kind == "started":
                for fc in fcs:
                    a = self.machine.array(fc.array)
                    rec = RecordedForecast.of(fc, "plan")
                    uuid = a.uuid if a is not None else None
                    now = self.backend.now()
                    self._expected().put(fc.array, uuid, rec, now, wait_s=fc.wait_s)
            elif ev.kind == "finished" and ev.status != "ok":
                for fc in fcs:
                    self._expected().withdraw(fc.array)
        except (StateFileError, OSError, ValueError) as e:
            print(
                f"warning: the plan's forecast is not kept for the sync's record ({e})",
                file=sys.stderr,
            )


def keep_benchmark(plan: Plan, report: Any, backend: Backend, args: argparse.Namespace) -> None:
    """Print the benchmark's table and keep it in the state database (report --json)."""
    from app.parsers.errors import ParseError
    from app.plans.builders.benchmark import collect, table
    from app.wear.snapshots import DB_NAME, SnapshotStore

    outputs = [(o.step.op, o.result.stdout) for o in report.outcomes if o.result is not None]
    try:
        result = collect(plan, outputs, backend.now())
    except ParseError as e:
        print(f"raidman apply: the benchmark's fio output is unreadable: {e}", file=sys.stderr)
        return
    print(table(result))
    hosts = getattr(args, "host", None)
    where = state_dir() if not hosts else host_state_dir(str(hosts[0]))
    try:
        store = SnapshotStore.open(where / DB_NAME)
    except Exception as e:  # the result is printed; keeping it is a bonus that says why not
        print(f"warning: the benchmark result is not kept ({e})", file=sys.stderr)
        return
    try:
        store.record_benchmark(backend.now(), result.to_json())
        print(f"kept in {where / DB_NAME} (raidman report --json: benchmarks)")
    finally:
        store.close()


JSON_OUTPUT = (SurfaceTest, LocateBlink, SmartReport, NvmeSanitizeLog)


def keep_qualification(plan: Plan, report: Any, backend: Backend, host: str | None) -> None:
    """Print a qualify plan's verdict and keep it by the disk's serial (issue 40)."""
    from app.plans.qualify_store import keep_run

    for line in keep_run(plan, report, backend, host):
        print(escape_controls(line))


def made_on_backend(data: bytes) -> str | None:
    """The backend a plan file says it was made on ("linux", "demo: raid6-wd"); None for a
    file from before raidman recorded it. ``data``: the file's bytes, which passed
    ``parse_plan_bytes`` already. Untrusted: escaped and bounded."""
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError):
        return None
    value = raw.get("backend") if isinstance(raw, dict) else None
    if not isinstance(value, str):
        return None
    return escape_controls(value[:200])


def run(args: argparse.Namespace) -> int:
    try:
        plan, declared, data = _load(args.plan)
    except PlanRefused as e:  # a step raidman never plans, or a file another user controls
        return _refused([f"{escape_controls(args.plan)}: {escape_controls(str(e))}"])
    except Exception as e:  # malformed input of any kind: one line, never a traceback
        msg = escape_controls(str(e).splitlines()[0] if str(e) else type(e).__name__)
        print(f"raidman apply: cannot read {escape_controls(args.plan)}: {msg}", file=sys.stderr)
        return 2
    if not plan.steps:
        print("raidman apply: the plan has no steps", file=sys.stderr)
        return 2
    if declared is None:
        return _refused(["the plan has no digest of its steps (make it with raidman plan --out)"])
    if declared != plan.digest:
        return _refused(
            [
                f"the plan does not match its digest {declared}: edited after it was made, or "
                "made by an older raidman (re-plan it: raidman plan ... --out FILE)"
            ]
        )
    problems = plan_problems(plan)  # before the probe: a tampered plan makes nothing run
    if problems:
        return _refused(problems)
    host = args.host[0] if getattr(args, "host", None) else None
    try:
        made_for = plan_host(data)
    except HostsError as e:
        return _refused([str(e)])
    if made_for != host and not (made_for is None and host is None):
        where = f"host {made_for}" if made_for else "this machine"
        return _refused([f"the plan was made for {where}, not {host or 'this machine'}"])
    backend = make_backend(args)
    made_on = made_on_backend(data)
    if made_on is not None and made_on != backend.name:
        # a plan saved in a demo names the demo's arrays and disks: never run it elsewhere
        return _refused(
            [
                f"the plan was made on {made_on}, not on {escape_controls(backend.name)}: "
                "make it again here (raidman plan ...)"
            ]
        )
    try:
        machine = backend.probe()
    except Exception as e:
        print(f"raidman: probe failed: {e}", file=sys.stderr)
        return 1
    problems = plan_problems(plan, machine)
    if problems:
        return _refused(problems)
    if plan.disks is not None:
        problems = identity_problems(plan, machine)
    elif plan.destructive:  # a destructive file always records disks (kept for the old digest)
        problems = ["the plan records no disk identities: re-plan it"]
    if problems:
        return _refused(problems)
    # what running it means is worked out from its argv on this machine now, never read from
    # the file: a weakening plan needs the typed name as a destructive one does
    plan = current_consequences(plan, machine, backend)
    pf = preflight_for(plan, machine, backend)
    if host is not None:
        sys.stdout.write(f"on host: {host} (over ssh)\n")
    sys.stdout.write(format_plan(plan, pf))
    sys.stdout.write("\n")
    forced = tuple(dict.fromkeys(args.force))
    if pf.refusals:
        return _refused(f"{r} [{r.code}] (pre-flight)" for r in pf.refusals)
    unforced = pf.unforced(forced)
    if unforced and not args.dry_run:
        codes = " ".join(dict.fromkeys(w.code for w in unforced))
        return _refused(
            [f"pre-flight warnings not forced: re-run with --force {codes} to go past them"]
        )
    used = tuple(c for c in forced if c in pf.warning_codes)
    if args.dry_run:
        print("dry run: the plan passed its checks; nothing was executed")
        return 0
    audit = AuditLog() if host is None else HostAuditLog(host, backend)
    if backend.read_only_reason:
        report = execute(plan, backend, audit=audit, forced=used)
        return _refused([report.refused or f"read-only: {backend.read_only_reason}"])
    log_problem = audit.check_writable()
    if log_problem is not None:
        return _refused([f"the audit log cannot be written ({log_problem})"])
    why_not = _confirm(plan, args)
    if why_not:
        return _refused([why_not])

    streamed: set[int] = set()  # steps whose output was printed as it came
    handover = _Handover(plan, machine, backend, host)

    import time as _time

    t0 = _time.monotonic()
    fio_left = [sum(1 for s in plan.steps if isinstance(s.op, Fio)), 0]  # to run, run

    def on_event(ev: StepEvent) -> None:
        handover(ev)
        n = ev.index + 1
        fio = isinstance(ev.step.op, Fio)
        if ev.kind == "started":
            print(f"[{n}/{len(plan.steps)}] {ev.step.escaped().shell()}", flush=True)
            if fio:
                done = fio_left[1]
                left = fio_left[0] - done
                eta = (_time.monotonic() - t0) / done * left if done else None
                when = f", about {eta:.0f} s left" if eta is not None else ""
                print(f"      benchmark run {done + 1} of {fio_left[0]}{when}", flush=True)
        elif ev.kind == "output" and (fio or isinstance(ev.step.op, JSON_OUTPUT)):
            return  # fio's and smartctl's JSON is parsed at the end, not shown line by line
        elif ev.kind == "output":
            streamed.add(ev.index)
            print(f"      | {escape_controls(ev.line)}", flush=True)
        elif ev.status == "ok":
            fio_left[1] += fio
            print("      ✓ ok", flush=True)
        else:
            print(f"      ✗ {escape_controls(ev.message)}", flush=True)
            if ev.index in streamed:
                return  # its stderr is above already
            if ev.result is not None and ev.result.stderr.strip():
                for line in ev.result.stderr.strip().splitlines():
                    print(f"        {escape_controls(line)}", flush=True)

    report = execute(plan, backend, audit=audit, forced=used, on_event=on_event)
    if plan.kind == "benchmark" and report.ok:
        keep_benchmark(plan, report, backend, args)
    if plan.kind == "qualify":
        keep_qualification(plan, report, backend, host)
    for o in report.outcomes:
        if o.status == "not-run":
            print(f"[{o.index + 1}/{len(plan.steps)}] not run: {o.step.escaped().shell()}")
    if report.refused:
        ran = len(report.executed)
        if not ran:
            return _refused([report.refused])
        print(f"raidman apply: refused: {escape_controls(report.refused)}", file=sys.stderr)
        print(f"raidman apply: {ran} of {len(plan.steps)} steps ran before it", file=sys.stderr)
        return REFUSED
    print(escape_controls(report.summary()))
    if report.audit_error:
        print(f"warning: {report.audit_error}", file=sys.stderr)
    else:
        print(f"audit log: {audit.path}")
    return 0 if report.ok else 1
