"""What a running plan shows besides ✓/✗: a step's own progress counter, the array a step sets
syncing, and the account of a finished run (what ran, what failed, what did not run).

Honest figures only: a progress bar needs a number the program or the kernel gave —
``mke2fs``'s "Writing inode tables: 12/128" counters (redrawn with backspaces, cut into lines by
``backends.base.LineSplitter``), or the md sync the live session sees for the array a step
created, grew, added to or told to check. Without such a number there is no bar, only the
elapsed time and the output.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

from app.format import duration
from app.model import md_names
from app.model.levels import REDUNDANT
from app.plans import ops
from app.plans.executor import ExecutionReport, StepOutcome
from app.plans.plan import Step, escape_controls

# "Allocating group tables:   0/128", "Writing inode tables: 12/128", "Discarding device blocks:
# 4096/2097152" (e2fsprogs lib/ext2fs/progress.c: label, then "%*llu/%*llu" redrawn in place)
_LABELLED = re.compile(r"^\s*([A-Za-z][A-Za-z ()0-9]*?):\s+(\d{1,19})/(\d{1,19})\s*$")
_BARE = re.compile(r"^\s*(\d{1,19})/(\d{1,19})\s*$")
_SYNC_ACTIONS = {"check", "repair"}


@dataclass(frozen=True, slots=True)
class Counter:
    """A program's own "done/total" for its current phase."""

    label: str
    done: int
    total: int

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total > 0 else 0.0


class StepProgress:
    """The output of one running step, line by line: its last lines and its counter, if any."""

    def __init__(self, keep: int = 5) -> None:
        self.tail: deque[str] = deque(maxlen=keep)
        self.counter: Counter | None = None
        self._label = ""

    def feed(self, line: str) -> None:
        m = _LABELLED.match(line)
        if m is not None:
            if m.group(1) != self._label:
                self._label = m.group(1)
                self.tail.append(escape_controls(f"{self._label}:"))
            self._set(int(m.group(2)), int(m.group(3)))
            return
        b = _BARE.match(line)
        if b is not None and self._label:
            self._set(int(b.group(1)), int(b.group(2)))
            return
        # "done" or any other line: the last counter no longer says anything
        self.counter = None
        text = line.strip()
        self._label = text.rstrip(":") if text.endswith(":") else ""
        self.tail.append(escape_controls(line.rstrip()))

    def _set(self, done: int, total: int) -> None:
        self.counter = Counter(self._label, done, total) if 0 <= done <= total else None


def sync_target(step: Step) -> str | None:
    """The md device (path as the step names it) whose sync this step starts, if it starts one:
    a redundant array created, a member added, re-added or replaced, a ``--raid-devices``
    reshape, or ``check``/``repair`` written to ``sync_action``."""
    op = step.op
    if isinstance(op, ops.CreateArray):
        return op.path if md_names.level_name(op.level) in REDUNDANT else None
    if isinstance(op, ops.AddMember) and not op.spare:
        return op.array_path
    if isinstance(op, (ops.GrowDevices, ops.ReAddMember, ops.ReplaceMember)):
        return op.array_path
    if isinstance(op, ops.SetSyncAction) and op.action in _SYNC_ACTIONS:
        return f"/dev/{op.md}"
    return None


def _tail(text: str, lines: int) -> list[str]:
    return [escape_controls(x) for x in text.strip().splitlines()[-lines:]]


def _ran(o: StepOutcome) -> str:
    code = "?" if o.exit_code is None else str(o.exit_code)
    took = "" if o.result is None else f", {duration(o.result.duration_s)}"
    return f"exit {code}{took}"


def result_lines(report: ExecutionReport, *, stderr_lines: int = 5) -> list[str]:
    """The account of a run, every text escaped: one line per step that ran (exit code,
    duration), the failed step with the tail of its stderr, then the steps that did not run."""
    if report.refused:
        return [escape_controls(f"nothing was run: {report.refused}")]
    out: list[str] = []
    for o in report.outcomes:
        cmd = escape_controls(o.step.shell())
        if o.status == "ok":
            out.append(f"ran     {o.index + 1}. {cmd}  ({_ran(o)})")
        elif o.status == "failed":
            out.append(f"FAILED  {o.index + 1}. {cmd}  ({_ran(o)})")
            out.append(f"        {escape_controls(o.message)}")
            out += [f"        | {x}" for x in _tail(o.stderr, stderr_lines)]
        else:
            out.append(f"not run {o.index + 1}. {cmd}")
    return out
