"""The simulation's clock: manual (tests) or real time with a speed factor (the demo)."""

from __future__ import annotations

import time

DEFAULT_START = 1_700_000_000.0  # 2023-11-14, a fixed epoch so scenarios are reproducible


class SimClock:
    """Seconds since the epoch, as the simulated machine sees them.

    ``SimClock.manual(start=...)`` only moves when ``advance()`` is called; ``SimClock.realtime()``
    follows ``time.monotonic()`` multiplied by ``speed`` (``speed=60`` makes a minute pass every
    second). ``advance()`` works on both (it adds an offset), which lets a demo skip ahead.
    """

    __slots__ = ("_m0", "_offset", "_speed", "_start")

    def __init__(self, start: float = DEFAULT_START, *, speed: float | None = None) -> None:
        self._start = float(start)
        self._speed = speed  # None = manual
        self._m0 = time.monotonic()
        self._offset = 0.0

    @classmethod
    def manual(cls, start: float = DEFAULT_START) -> SimClock:
        return cls(start)

    @classmethod
    def realtime(cls, *, speed: float = 1.0, start: float | None = None) -> SimClock:
        if speed <= 0:
            raise ValueError("speed must be positive")
        return cls(time.time() if start is None else start, speed=speed)

    @property
    def is_manual(self) -> bool:
        return self._speed is None

    @property
    def speed(self) -> float:
        return 0.0 if self._speed is None else self._speed

    def now(self) -> float:
        if self._speed is None:
            return self._start + self._offset
        return self._start + self._offset + (time.monotonic() - self._m0) * self._speed

    def advance(self, seconds: float) -> float:
        """Move the clock forward by ``seconds`` (never backwards); returns the new time."""
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        self._offset += seconds
        return self.now()
