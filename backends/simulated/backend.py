"""SimulatedBackend: the Backend protocol over a SimState that moves with a SimClock."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from app.escape import escape_strings
from app.model import Machine
from app.model.live import LiveSample
from app.model.smart import SmartReading
from backends.base import CommandResult, OutputCallback, Stream, emit_output
from backends.simulated.clock import SimClock
from backends.simulated.live import LiveCache, build_sample
from backends.simulated.programs.registry import dispatch
from backends.simulated.scenarios import SCENARIOS, big
from backends.simulated.smart import build_smart
from backends.simulated.snapshot import StaticCache, build_machine
from backends.simulated.state import SimState
from backends.simulated.sysfs import read_path

DEMO_LINE_PACE_S = 0.2  # the demo's streamed output: one line per this many seconds
COALESCE_S = 0.001  # real seconds within which reads share one simulated instant (see _sync)


def scenario_names() -> tuple[str, ...]:
    return tuple(SCENARIOS)


class SimulatedBackend:
    """A simulated machine. Every call first advances the state to ``clock.now()``."""

    def __init__(self, state: SimState, clock: SimClock, scenario: str = "custom") -> None:
        self._state = state
        self._clock = clock
        self._scenario = scenario
        self._cache = StaticCache()
        self._live = LiveCache()
        self._lock = threading.RLock()  # the UI calls from worker threads

    # ---- construction -----------------------------------------------------------------
    @classmethod
    def from_scenario(cls, name: str, *, clock: SimClock | None = None) -> SimulatedBackend:
        if name not in SCENARIOS:
            raise ValueError(f"unknown scenario {name!r}; choose one of: {', '.join(SCENARIOS)}")
        clk = clock if clock is not None else SimClock.realtime()
        return cls(SCENARIOS[name](clk.now()), clk, name)

    @classmethod
    def big(
        cls,
        disks: int = 1000,
        arrays: int = 250,
        syncing: int = 16,
        *,
        clock: SimClock | None = None,
    ) -> SimulatedBackend:
        clk = clock if clock is not None else SimClock.realtime()
        return cls(big(clk.now(), disks=disks, arrays=arrays, syncing=syncing), clk, "big")

    # ---- Backend protocol -------------------------------------------------------------
    @property
    def name(self) -> str:
        return f"demo: {self._scenario}"

    @property
    def smart_enabled(self) -> bool:
        return True

    @property
    def read_only_reason(self) -> str | None:
        return None

    @property
    def clock(self) -> SimClock:
        return self._clock

    @property
    def state(self) -> SimState:
        """The mutable state (for tests and scenario tweaks; not part of the Backend protocol)."""
        return self._state

    def now(self) -> float:
        return self._clock.now()

    def _sync(self) -> SimState:
        now = self._clock.now()
        # On a real-time clock, reads less than a millisecond apart see the same simulated
        # instant: each advance credits every syncing array's members, and the audit reads
        # ~4 files per disk (21,000 reads at 5,000 disks: 9 of its 10 s went here). A manual
        # clock (tests) moves only when told, so it is always followed exactly.
        if self._clock.is_manual or now - self._state.t >= COALESCE_S * self._clock.speed:
            self._state.advance_to(now)
        return self._state

    def probe(self) -> Machine:
        with self._lock:
            return escape_strings(build_machine(self._sync(), self._cache))

    def sample(self) -> LiveSample:
        with self._lock:
            return build_sample(self._sync(), self._live)

    def smart(self, disk: str) -> SmartReading:
        with self._lock:
            st = self._sync()
            d = st.disks.get(disk)
            if d is None:
                return SmartReading(
                    device=disk, available=False, reason=f"no such disk: {disk}", taken_at=st.t
                )
            return escape_strings(build_smart(st, d))

    def read_text(self, path: str) -> str | None:
        with self._lock:
            return read_path(self._sync(), path)

    def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        t0 = time.perf_counter()
        args = tuple(str(a) for a in argv)
        with self._lock:
            st = self._sync()
            st.runs += 1
            try:
                rc, out, err = dispatch(st, args, stdin)
            except Exception as e:  # a simulation bug must not crash the caller
                rc, out, err = 70, "", f"demo: internal error running {args[:1]}: {e!r}\n"
        return CommandResult(args, rc, out, err, time.perf_counter() - t0)

    def run_streaming(
        self,
        argv: Sequence[str],
        *,
        on_output: OutputCallback,
        stdin: str | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        """A simulated program changes the state at once; its output lines follow (outside the
        state lock, so a listener that reads the backend cannot dead-lock). On a real-time
        clock (the demo) the lines come ``DEMO_LINE_PACE_S`` apart, so a plan's steps can be
        watched running; a manual clock (tests) hands them over at once."""
        result = self.run(argv, stdin=stdin, timeout=timeout)
        if self._clock.is_manual:
            emit_output(result, on_output)
            return result

        def paced(stream: Stream, line: str) -> None:
            time.sleep(DEMO_LINE_PACE_S)
            on_output(stream, line)

        emit_output(result, paced)
        return result
