"""Run a plan's steps in order through ``backend.run``; stop at the first failure; never raise.

Rules:
* the audit log is not optional: ``execute`` takes it as a required argument, so nothing runs
  without it — the CLI's apply, the TUI's preview and boost raises and restores all come here;
* nothing runs when ``dry_run`` is set, when the steps are not in an order raidman plans
  (``allowlist.plan_step_problems``; each step is an operation raidman plans by construction),
  when the backend has a ``read_only_reason`` or when the audit log
  cannot be written (the report's ``refused`` says why; refusals are written to the log as
  ``event: refused`` when it can be written; a dry run writes nothing since nothing was attempted);
* immediately before each step that writes to devices, the pre-flight checks that concern its
  devices run again on a fresh probe, with the disk identities the plan recorded
  (``app.plans.guards.recheck``): a refusal stops the run there (``event: refused`` in the audit log,
  the step "failed", the rest "not-run");
* before each step starts, a ``started`` entry (argv, stdin value, producer, forced codes, plan
  digest) is written; if that write fails the step does not start. When it ends, an ``executed``
  entry (exit code, duration, stderr tail, the piped stdin value) follows;
* while a step runs, each line its program writes comes to ``on_event`` as an ``output`` event
  (``backend.run_streaming``; a backend without it runs the step with ``run``, no lines);
* a piped input is checked like a literal one before the step gets it
  (``allowlist.piped_input_problem``: what mdadm --detail --brief prints must be ARRAY lines);
* a step whose program is missing (exit 127) is a failure with a clear message; a step ends
  well when its operation accepts the exit status (``Op.accepts``: 0, or for smartctl the bits
  that say the command ran, its others being the disk's state);
* after a failure the remaining steps are reported "not-run".
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from app.backend import Backend, CommandResult, OutputCallback, Stream
from app.plans.audit_log import AuditLog
from app.plans.guards.allowlist import piped_input_problem, plan_step_problems
from app.plans.guards.recheck import step_refusals
from app.plans.plan import Plan, Step

StepStatus = Literal["ok", "failed", "not-run"]
EventKind = Literal["started", "output", "finished"]


@dataclass(frozen=True, slots=True)
class StepEvent:
    kind: EventKind
    index: int  # 0-based
    step: Step
    status: StepStatus | None = None  # set on "finished"
    result: CommandResult | None = None
    message: str = ""
    stream: Stream | None = None  # set on "output": the line and where it was written
    line: str = ""
    producer: bool = False  # "output" of the program feeding the step's stdin


@dataclass(frozen=True, slots=True)
class StepOutcome:
    index: int
    step: Step
    status: StepStatus
    result: CommandResult | None = None
    message: str = ""  # for failures: what went wrong, in words

    @property
    def exit_code(self) -> int | None:
        return None if self.result is None else self.result.returncode

    @property
    def stderr(self) -> str:
        return "" if self.result is None else self.result.stderr


@dataclass(frozen=True, slots=True)
class ExecutionReport:
    plan: Plan
    outcomes: tuple[StepOutcome, ...] = ()
    refused: str | None = None  # why nothing ran (dry run / read-only)
    audit_error: str | None = None
    forced: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.refused is None and all(o.status == "ok" for o in self.outcomes)

    @property
    def executed(self) -> tuple[StepOutcome, ...]:
        return tuple(o for o in self.outcomes if o.status != "not-run")

    @property
    def failed(self) -> StepOutcome | None:
        for o in self.outcomes:
            if o.status == "failed":
                return o
        return None

    def summary(self) -> str:
        if self.refused:
            return f"nothing was run: {self.refused}"
        n = len(self.outcomes)
        done = sum(1 for o in self.outcomes if o.status == "ok")
        f = self.failed
        if f is None:
            return "the step ran successfully" if n == 1 else f"all {n} steps ran successfully"
        return f"step {f.index + 1} of {n} failed ({f.message}); {done} ran, {n - done - 1} not run"


def _failure_message(step: Step, result: CommandResult, producer: bool = False) -> str:
    prog = step.op.program(producer=producer)
    if result.returncode == 127:
        return f"{prog}: program not found (exit 127) — is it installed and on PATH?"
    if result.returncode == 126:
        return f"{prog}: cannot be executed (exit 126)"
    if result.returncode < 0:
        return f"{prog}: killed by signal {-result.returncode}"
    first = result.stderr.strip().splitlines()[:1]
    tail = f": {first[0]}" if first else ""
    what = "feeding its input " if producer else ""
    return f"{prog} {what}exited with {result.returncode}{tail}"


def _run(
    backend: Backend,
    argv: tuple[str, ...],
    stdin: str | None,
    on_output: OutputCallback | None = None,
) -> CommandResult:
    t0 = time.monotonic()
    streaming = getattr(backend, "run_streaming", None) if on_output is not None else None
    try:
        if streaming is not None:
            res = streaming(list(argv), on_output=on_output, stdin=stdin)
        else:
            res = backend.run(list(argv), stdin=stdin)
    except Exception as e:  # a backend must not raise, but the executor never does either
        return CommandResult(
            argv, 1, "", f"{type(e).__name__}: {e}", duration_s=time.monotonic() - t0
        )
    # a step took as long as the executor waited for it: the backend's own figure can leave
    # out time it spent after the program ended (the demo paces a step's output lines: every
    # step said "0.0 s" under a live line that had counted 7 s)
    waited = time.monotonic() - t0
    if res.duration_s < waited:
        res = CommandResult(res.argv, res.returncode, res.stdout, res.stderr, waited)
    return res


def execute(
    plan: Plan,
    backend: Backend,
    *,
    audit: AuditLog,
    dry_run: bool = False,
    on_event: Callable[[StepEvent], None] | None = None,
    forced: tuple[str, ...] = (),
) -> ExecutionReport:
    """Run ``plan`` step by step. See the module docstring for the rules."""
    not_run = tuple(StepOutcome(i, s, "not-run") for i, s in enumerate(plan.steps))
    if dry_run:
        return ExecutionReport(plan, not_run, refused="dry run: no command was executed")
    run_id = uuid.uuid4().hex[:12]

    def refuse(why: str) -> ExecutionReport:
        audit.record_refusal(plan=plan.title, reason=why, forced=forced, run=run_id)
        return ExecutionReport(plan, not_run, refused=why, audit_error=audit.last_error)

    problems = plan_step_problems(plan)
    if problems:
        return refuse("not a plan raidman makes: " + "; ".join(problems))
    reason = backend.read_only_reason
    if reason:
        return refuse(f"read-only: {reason}")
    log_problem = audit.check_writable()
    if log_problem is not None:
        return ExecutionReport(
            plan,
            not_run,
            refused=f"the audit log cannot be written ({log_problem})",
            audit_error=log_problem,
        )
    digest = plan.digest

    def emit(ev: StepEvent) -> None:
        if on_event is not None:
            # a broken listener must not stop a half-done plan mid-way
            with contextlib.suppress(Exception):
                on_event(ev)

    outcomes: list[StepOutcome] = []
    audit_error: str | None = None
    failed = False
    for i, step in enumerate(plan.steps):
        if failed:
            outcomes.append(StepOutcome(i, step, "not-run"))
            continue
        now_refused = step_refusals(plan, i, backend)
        if now_refused:
            message = f"refused by pre-flight right before step {i + 1}: " + "; ".join(now_refused)
            if not audit.record_refusal(plan=plan.title, reason=message, forced=forced, run=run_id):
                audit_error = audit.last_error
            outcomes.append(StepOutcome(i, step, "failed", None, message))
            emit(StepEvent("finished", i, step, "failed", None, message))
            failed = True
            continue
        if not audit.record_start(
            plan=plan.title,
            run=run_id,
            step=i + 1,
            forced=forced,
            argv=step.argv,
            stdin=step.stdin,
            stdin_from=step.stdin_from,
            digest=digest,
        ):
            audit_error = audit.last_error
            message = f"not started: the audit log cannot be written ({audit.last_error})"
            outcomes.append(StepOutcome(i, step, "failed", None, message))
            emit(StepEvent("finished", i, step, "failed", None, message))
            failed = True
            continue
        emit(StepEvent("started", i, step))
        stdin = step.stdin
        result: CommandResult | None = None
        message = ""

        def lines(i: int = i, step: Step = step, producer: bool = False) -> OutputCallback | None:
            if on_event is None:
                return None

            def on_output(stream: Stream, line: str) -> None:
                emit(StepEvent("output", i, step, stream=stream, line=line, producer=producer))

            return on_output

        if step.stdin_from is not None:
            prod = _run(backend, step.stdin_from, None, lines(producer=True))
            piped_bad = piped_input_problem(step, prod.stdout) if prod.ok else None
            if not prod.ok:
                result = prod
                message = _failure_message(step, prod, producer=True)
            elif piped_bad is not None:  # e.g. an array name that smuggles a second line
                result = CommandResult(step.argv, 1, "", piped_bad)
                message = f"{step.op.program()}: not run: {piped_bad}"
            else:
                stdin = prod.stdout
        if result is None:
            result = _run(backend, step.argv, stdin, lines())
            if not step.op.accepts(result.returncode):
                message = _failure_message(step, result)
        if not audit.record_finish(
            plan=plan.title,
            run=run_id,
            step=i + 1,
            forced=forced,
            argv=step.argv,
            exit_code=result.returncode,
            duration_s=result.duration_s,
            stderr=result.stderr,
            stdin=stdin if step.stdin_from is not None else None,
            stdin_from=step.stdin_from,
        ):
            audit_error = audit_error or audit.last_error
        status: StepStatus = "ok" if not message else "failed"
        failed = status == "failed"
        outcomes.append(StepOutcome(i, step, status, result, message))
        emit(StepEvent("finished", i, step, status, result, message))
    return ExecutionReport(plan, tuple(outcomes), audit_error=audit_error, forced=forced)
