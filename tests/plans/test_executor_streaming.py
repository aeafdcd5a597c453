"""The executor streams each step's output while the step runs: ``output`` events arrive before
the step's ``finished``, the audit entry is still written before the step starts, and the
account of the run (``progress.result_lines``) lists what ran, what failed, what did not run."""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from app.backend import CommandResult, OutputCallback
from app.plans.audit_log import AuditLog
from app.plans.executor import ExecutionReport, StepEvent, execute
from app.plans.plan import Plan, Step
from app.plans.progress import StepProgress, result_lines, sync_target
from tests.plans.fakes import FakeBackend, blank_machine

MKFS = ("mkfs.ext4", "-b", "4096", "/dev/nvme0n1")


@dataclass
class SlowStreamingBackend(FakeBackend):
    """Writes one line, then waits for ``go`` before writing the next and ending: a step that
    runs for as long as the test says."""

    go: threading.Event = field(default_factory=threading.Event)
    audit: AuditLog | None = None
    audited_before: list[int] = field(default_factory=list)

    def run_streaming(
        self,
        argv: Sequence[str],
        *,
        on_output: OutputCallback,
        stdin: str | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        if self.audit is not None:  # what the audit log holds when the program starts
            self.audited_before.append(len(self.audit.read_entries()))
        self.calls.append((tuple(argv), stdin))
        on_output("stdout", "Writing inode tables:   3/128")
        assert self.go.wait(10), "the test never let the step finish"
        on_output("stderr", "mke2fs 1.47.0 (5-Feb-2023)")
        return CommandResult(tuple(argv), 0, "Writing inode tables: 3/128\n", "mke2fs 1.47.0\n")


def test_output_events_arrive_while_the_step_still_runs(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit.log")
    be = SlowStreamingBackend(blank_machine(), audit=audit)
    plan = Plan("mkfs", (Step.decode(MKFS, "filesystem", destructive=True),), target="nvme0n1")
    events: queue.Queue[StepEvent] = queue.Queue()
    done: list[ExecutionReport] = []
    worker = threading.Thread(
        target=lambda: done.append(execute(plan, be, audit=audit, on_event=events.put))
    )
    worker.start()
    try:
        first = events.get(timeout=10)
        assert first.kind == "started"
        line = events.get(timeout=10)
        # the line is here, the step has not ended
        assert (line.kind, line.stream, line.line) == (
            "output",
            "stdout",
            "Writing inode tables:   3/128",
        )
        assert worker.is_alive() and not done
        assert events.empty()
    finally:
        be.go.set()
        worker.join(10)
    rest = []
    while not events.empty():
        rest.append(events.get())
    assert [(e.kind, e.stream, e.line) for e in rest] == [
        ("output", "stderr", "mke2fs 1.47.0 (5-Feb-2023)"),
        ("finished", None, ""),
    ]
    assert done[0].ok
    # "started" was in the log before the program ran; "executed" after it
    assert be.audited_before == [1]
    assert [e.event for e in audit.read_entries()] == ["started", "executed"]


def test_a_backend_without_streaming_still_runs(tmp_path: Path) -> None:
    be = FakeBackend(blank_machine())
    events: list[StepEvent] = []
    plan = Plan("mkfs", (Step.decode(MKFS, "filesystem", destructive=True),), target="nvme0n1")
    rep = execute(plan, be, audit=AuditLog(tmp_path / "a.log"), on_event=events.append)
    assert rep.ok and [e.kind for e in events] == ["started", "finished"]


def test_a_listener_that_raises_does_not_stop_the_plan(tmp_path: Path) -> None:
    be = SlowStreamingBackend(blank_machine())
    be.go.set()

    def bad(ev: StepEvent) -> None:
        raise RuntimeError("listener broke")

    plan = Plan("mkfs", (Step.decode(MKFS, "filesystem", destructive=True),), target="nvme0n1")
    assert execute(plan, be, audit=AuditLog(tmp_path / "a.log"), on_event=bad).ok


def test_mke2fs_counters_become_a_figure_and_done_ends_it() -> None:
    p = StepProgress(keep=3)
    p.feed("Discarding device blocks: done")
    assert p.counter is None
    p.feed("Writing inode tables:   0/128")
    p.feed(" 64/128")
    assert p.counter is not None
    assert (p.counter.label, p.counter.done, p.counter.total) == ("Writing inode tables", 64, 128)
    assert p.counter.fraction == 0.5
    p.feed("done                            ")
    assert p.counter is None
    p.feed(" 70/128")  # a bare counter without a phase says nothing
    assert p.counter is None
    p.feed("evil \x1b[2J line")
    assert list(p.tail)[-1] == "evil \\x1b[2J line"
    assert len(p.tail) == 3


def test_sync_target_names_the_array_a_step_sets_syncing() -> None:
    create = (
        "mdadm",
        "--create",
        "/dev/md/127",
        "--level=1",
        "--raid-devices=2",
        "/dev/a",
        "/dev/b",
    )
    assert sync_target(Step.decode(create, "")) == "/dev/md/127"
    raid0 = ("mdadm", "--create", "/dev/md/9", "--level=0", "--raid-devices=2", "/dev/a", "/dev/b")
    assert sync_target(Step.decode(raid0, "")) is None  # nothing to sync on RAID-0
    assert sync_target(Step.decode(("mdadm", "/dev/md0", "--add", "/dev/sdb"), "")) == "/dev/md0"
    assert sync_target(Step.decode(("mdadm", "/dev/md0", "--fail", "/dev/sdb"), "")) is None
    grow = ("mdadm", "--grow", "/dev/md0", "--raid-devices=5")
    assert sync_target(Step.decode(grow, "")) == "/dev/md0"
    tee = ("tee", "/sys/block/md3/md/sync_action")
    assert sync_target(Step.decode(tee, "", stdin="check\n")) == "/dev/md3"
    assert sync_target(Step.decode(tee, "", stdin="idle\n")) is None
    assert sync_target(Step.decode(MKFS, "")) is None


def test_result_lines_list_ran_failed_with_stderr_tail_and_not_run(tmp_path: Path) -> None:
    be = FakeBackend(blank_machine())
    be.fail_when(
        "pvcreate", 5, stderr="one\ntwo\nDevice /dev/nvme0n1 excluded by a filter.\x1b[2J\n"
    )
    plan = Plan(
        "three",
        (
            Step.decode(MKFS, "fs", destructive=True),
            Step.decode(("pvcreate", "/dev/nvme0n1"), "pv", destructive=True),
            Step.decode(("tee", "/sys/block/md127/md/sync_action"), "check", stdin="check\n"),
        ),
        target="md127",
    )
    rep = execute(plan, be, audit=AuditLog(tmp_path / "a.log"))
    lines = result_lines(rep, stderr_lines=2)
    assert lines[0].startswith("ran     1. mkfs.ext4 -b 4096 /dev/nvme0n1  (exit 0, ")
    assert lines[0].endswith("s)")
    assert lines[1].startswith("FAILED  2. pvcreate /dev/nvme0n1  (exit 5, ")
    assert lines[2] == "        pvcreate exited with 5: one"
    # the tail of stderr, control characters escaped
    assert lines[3:5] == [
        "        | two",
        "        | Device /dev/nvme0n1 excluded by a filter.\\x1b[2J",
    ]
    assert lines[5].startswith("not run 3. printf")
    assert len(lines) == 6


def test_an_array_named_by_its_md_name_resolves_to_its_kernel_name() -> None:
    """mdadm --create /dev/md/127 --name=127 makes md127 ("host:127"): the sync bar looks for
    md127's sync in the session, not for "md/127"."""
    from app.plans.guards.plan_devices import resolve_device
    from tests.plans.fakes import array_machine

    m = array_machine()
    assert resolve_device(m, "/dev/md/127") == "md127"
    assert resolve_device(m, "/dev/md127") == "md127"
    assert resolve_device(m, "/dev/md/99") == "/dev/md/99"  # unknown: the path, not a guess
    assert resolve_device(None, "/dev/md/127") == "/dev/md/127"


def test_cli_apply_prints_each_steps_output_as_it_comes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli import main

    out = tmp_path / "limits.json"
    args = ["plan", "sync", "limits", "--array", "md127", "--max", "200000"]
    assert main([*args, "--demo", "raid10-evo", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["apply", str(out), "--yes", "--demo", "raid10-evo"]) == 0
    lines = capsys.readouterr().out.splitlines()
    i = next(k for k, x in enumerate(lines) if "sync_speed_max" in x and x.startswith("["))
    # tee writes what it wrote to sysfs: streamed under its step, before the step's ✓
    assert lines[i + 1 : i + 3] == ["      | 200000", "      ✓ ok"]
