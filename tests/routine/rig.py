"""The routine of ``raidman monitor`` under test: :class:`Sent`, a stand-in for the alert sender
(app.routine.alerts.Sender) that records each delivery, fails the first ``fail`` of them and
lets a test wait for the alert threads without sleeping; :class:`Rig`, the monitor's loop on a
simulated machine and clock."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from app.monitor import WearMonitor
from app.routine.config import RoutineConfig
from app.routine.runner import Routine
from app.sync.boost import BoostStore
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimClock, SimulatedBackend


class Sent:
    def __init__(self, fail: int = 0) -> None:
        self.calls: list[tuple[tuple[str, ...], dict[str, str], str | None]] = []
        self.fail = fail
        self.cv = threading.Condition()

    def __call__(
        self, argv: Sequence[str], env: Mapping[str, str], stdin: str | None, timeout: float
    ) -> tuple[int | None, str]:
        with self.cv:
            self.calls.append((tuple(argv), dict(env), stdin))
            self.cv.notify_all()
            if self.fail > 0:
                self.fail -= 1
                return 1, f"{argv[0]} exited with status 1"
        return 0, ""

    def wait(self, n: int) -> None:
        with self.cv:
            assert self.cv.wait_for(lambda: len(self.calls) >= n, timeout=10), self.calls

    def events(self) -> list[str]:
        """The event of every program run, in order."""
        return [c[1]["RAIDMAN_EVENT"] for c in self.calls if "RAIDMAN_EVENT" in c[1]]


class Rig:
    """``raidman monitor``'s loop body on a simulated machine and a manual clock: the wear
    monitor's look, then the routine's (scheduled checks, alert events), as app.commands.monitor
    runs them; deliveries go to :class:`Sent` (the alert program)."""

    PROGRAM = "/usr/local/bin/md-alert"

    def __init__(
        self,
        tmp_path: Path,
        scenario: str,
        cfg: RoutineConfig | None = None,
        *,
        boosts: BoostStore | None = None,
        interval_s: float = 3600.0,
    ) -> None:
        self.clock = SimClock.manual()
        self.b = SimulatedBackend.from_scenario(scenario, clock=self.clock)
        self.store = SnapshotStore.open(tmp_path / "state.db")
        self.lines: list[str] = []
        self.sent = Sent()
        cfg = cfg or RoutineConfig(check_every_s=0)
        if cfg.alert_program is None:
            cfg = dataclasses.replace(cfg, alert_program=self.PROGRAM)
        self.mon = WearMonitor(
            self.b, self.store, interval_s=interval_s, log=self.lines.append, boosts=boosts
        )
        self.routine = Routine(
            self.b,
            self.store,
            cfg,
            self.lines.append,
            self.sent,
            lock=self.mon.store_lock,
            view=lambda: self.mon.session.view,
            boosts=self.mon.session.boosts,
            host="h1",
            clock=self.clock.now,
        )

    def tick(self) -> None:
        self.mon.tick()
        self.routine.tick()

    def run(
        self, seconds: float, step: float = 5.0, until: Callable[[], bool] | None = None
    ) -> None:
        """Advance the clock ``step`` at a time, one look each, for ``seconds`` (or until)."""
        t = 0.0
        while t < seconds:
            self.clock.advance(step)
            t += step
            self.tick()
            if until is not None and until():
                return
        if until is not None:
            raise AssertionError(f"not within {seconds:g} s: {self.lines[-20:]}")

    def said(self, event: str) -> list[str]:
        """The log lines of each ``event`` raised (folded ones too: every emit is logged)."""
        head = f"alert: {event} "
        return [
            ln
            for ln in self.lines
            if ln.startswith(head) and not ln[len(head) :].startswith(("delivered", "not deliv"))
        ]

    def delivered(self, event: str, n: int = 1) -> list[dict[str, str]]:
        """The environment of the program runs for ``event`` (waits for ``n`` of them)."""
        with self.sent.cv:
            ok = self.sent.cv.wait_for(
                lambda: (
                    len([c for c in self.sent.calls if c[1].get("RAIDMAN_EVENT") == event]) >= n
                ),
                timeout=10,
            )
        assert ok, (event, self.sent.calls, self.lines[-20:])
        return [c[1] for c in self.sent.calls if c[1].get("RAIDMAN_EVENT") == event]

    def close(self) -> None:
        self.routine.close()
        self.mon.close()
        self.store.close()
