"""RunProgress: the panel of a plan's preview while it runs. The running step with its elapsed
time (ticking), its counter and bar where the program gives a figure (mke2fs), its last output
lines; then the sync of each array a finished step set syncing, as the live session sees it
(the App's ``view``: nothing is shown until the session has seen that sync)."""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import ProgressBar, Static

from app.escape import escape_controls
from app.format import duration, percent, speed
from app.plans.executor import StepEvent
from app.plans.guards.plan_devices import resolve_device
from app.plans.plan import Plan
from app.plans.progress import StepProgress, sync_target

REFRESH_S = 0.25  # redrawn at most this often (output may come in floods)


class RunProgress(Vertical):
    """Fed by the preview with the run worker's step events (on the UI thread)."""

    def __init__(self, plan: Plan, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.plan = plan
        self.running = False
        # the running step: its index, when it started (monotonic), its output and counter
        self._step: int | None = None
        self._step_t0 = 0.0
        self._progress = StepProgress(keep=4)
        self._dirty = False
        self._timer: Timer | None = None
        self.sync_paths: list[str] = []  # arrays a finished step set syncing (argv paths)

    def compose(self) -> ComposeResult:
        yield Static("", id="pp-running")
        yield Static("", id="pp-counter")
        yield ProgressBar(id="pp-bar", show_eta=False)
        yield Static("", id="pp-output")
        yield Static("", id="pp-sync")
        yield ProgressBar(id="pp-sync-bar", show_eta=False)

    def start(self) -> None:
        self.running = True
        self.display = True
        for wid in ("#pp-bar", "#pp-sync", "#pp-sync-bar"):
            self.query_one(wid).display = False
        self._timer = self.set_interval(REFRESH_S, self.tick)

    def halt(self) -> None:
        """Nothing ran after all (refused or asked for the typed name at Run)."""
        self.running = False
        self.display = False
        self._stop_timer()

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def step_started(self, ev: StepEvent) -> None:
        self._step = ev.index
        self._step_t0 = time.monotonic()
        self._progress = StepProgress(keep=4)
        self._dirty = True
        self.tick()

    def step_output(self, ev: StepEvent) -> None:
        if ev.index == self._step:
            self._progress.feed(ev.line)
            self._dirty = True

    def step_finished(self, ev: StepEvent) -> None:
        if ev.status != "failed" and ev.result is not None:
            target = sync_target(ev.step)
            if target is not None and target not in self.sync_paths:
                self.sync_paths.append(target)
        self._step = None
        self._dirty = True
        self.tick()

    def finished(self) -> None:
        self.running = False
        self._step = None
        for wid in ("#pp-running", "#pp-counter", "#pp-bar", "#pp-output"):
            self.query_one(wid).display = False
        self.display = bool(self.sync_paths)
        self._stop_timer()

    def tick(self) -> None:
        """The elapsed time of the running step (each tick), its counter and last lines (when
        new output came), and the sync of the arrays the plan set syncing."""
        running = self.query_one("#pp-running", Static)
        if self._step is not None:
            n = len(self.plan.steps)
            prog = escape_controls(self.plan.steps[self._step].argv[0])
            elapsed = duration(int(time.monotonic() - self._step_t0))  # a counter: whole s
            running.update(Text(f"▶ step {self._step + 1}/{n}: {prog} — {elapsed} elapsed"))
        elif self.running:
            running.update("")
        if self._dirty:
            self._dirty = False
            c = self._progress.counter if self._step is not None else None
            bar = self.query_one("#pp-bar", ProgressBar)
            bar.display = c is not None
            counter = self.query_one("#pp-counter", Static)
            counter.display = c is not None
            if c is not None:
                counter.update(Text(escape_controls(f"{c.label}: {c.done}/{c.total}")))
                bar.update(total=c.total, progress=c.done)
            tail = list(self._progress.tail) if self._step is not None else []
            out = self.query_one("#pp-output", Static)
            out.display = bool(tail)
            out.update(Text("\n".join(f"  {line}" for line in tail)))
        self.show_sync()

    def show_sync(self) -> None:
        """The array a finished step set syncing, with the sync figure the live session has."""
        view: Any = getattr(self.app, "view", None)
        label = self.query_one("#pp-sync", Static)
        bar = self.query_one("#pp-sync-bar", ProgressBar)
        if not self.sync_paths or view is None:
            return
        machine = getattr(view, "machine", None)
        syncs = {s.array: s for s in getattr(view, "syncs", ())}
        lines: list[str] = []
        first = None
        for path in self.sync_paths:
            s = syncs.get(resolve_device(machine, path))
            if s is None:
                continue
            first = first or s
            rate = f" · {speed(s.speed_kib_s)}" if s.speed_kib_s else ""
            eta = f" · ETA {duration(s.eta_s)}" if s.eta_s is not None else ""
            lines.append(f"{escape_controls(s.array)} {s.action} {percent(s.fraction)}{rate}{eta}")
        self.display = bool(lines) or self.running
        label.display = bool(lines)
        label.update(Text("\n".join(lines)))
        bar.display = first is not None and first.fraction is not None
        if first is not None and first.fraction is not None:
            bar.update(total=1000, progress=round(first.fraction * 1000))
