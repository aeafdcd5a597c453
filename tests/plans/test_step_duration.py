"""A step's duration is the time the executor waited for it (issue 24 item 7): the demo's
backend paces a step's output lines after the program ended and reported a duration of ~0,
so every step said "(exit 0, 0.0 s)" under a live line that had counted 7 s."""

from __future__ import annotations

from pathlib import Path

from app.plans.audit_log import AuditLog
from app.plans.builders.sync_actions import build_sync_action
from app.plans.executor import execute
from app.plans.progress import result_lines
from backends.simulated import SimulatedBackend
from backends.simulated.backend import DEMO_LINE_PACE_S


def test_paced_demo_step_reports_the_time_it_took(tmp_path: Path) -> None:
    be = SimulatedBackend.from_scenario("imsm")  # real-time clock: output is paced
    plan = build_sync_action(be.probe(), "md126", "check")
    report = execute(plan, be, audit=AuditLog(tmp_path / "audit.log"), on_event=lambda e: None)
    assert report.refused is None, report.refused
    outcome = report.outcomes[-1]
    assert outcome.result is not None and outcome.result.returncode == 0
    lines = outcome.result.stdout.count("\n") + outcome.result.stderr.count("\n")
    assert lines >= 1
    assert outcome.result.duration_s >= lines * DEMO_LINE_PACE_S * 0.9
    assert not any("0.0 s" in line for line in result_lines(report))


def test_one_duration_text_for_a_step_everywhere() -> None:
    """Issue 39: the run screen said "exit 0, 0.2 s" of a step the audit log said took "0s":
    one formatter, to the tenth under ten seconds."""
    from app.backend import CommandResult
    from app.format import duration
    from app.plans.executor import StepOutcome
    from app.plans.plan import Step
    from app.plans.progress import _ran

    step = Step.decode(("mdadm", "/dev/md127", "--fail", "/dev/nvme1n1"), "w", destructive=True)
    o = StepOutcome(0, step, "ok", CommandResult(step.argv, 0, duration_s=0.2))
    assert _ran(o) == "exit 0, 0.2s" and duration(0.2) == "0.2s"
    assert [duration(x) for x in (0.0, 3.0, 9.94, 45, 75, 7500)] == [
        "0s", "3s", "9.9s", "45s", "1m 15s", "2h 05m"
    ]  # fmt: skip
