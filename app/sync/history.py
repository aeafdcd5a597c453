"""Speed history of one array's sync, from the tool's own 1 Hz samples.

The kernel's ``sync_speed`` is an average over the last few seconds of *its* accounting; the
history also keeps the speed measured from successive ``sync_completed`` values, so a stall or a
throttle shows up even when the kernel's figure lags.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SpeedPoint:
    t: float  # backend clock, seconds
    done_sectors: int | None
    kernel_kib_s: int | None  # md/sync_speed
    measured_kib_s: float | None  # from the change in done_sectors since the previous point


class SpeedHistory:
    """A bounded ring of speed points for one array's current activity."""

    def __init__(self, window_s: float = 600.0, max_points: int = 3600) -> None:
        self.window_s = window_s
        self._points: deque[SpeedPoint] = deque(maxlen=max_points)
        # the kernel's speeds beside the points, kept as they come and go (a sparkline reads
        # them every second: no walk over the window's points to make them)
        self._kernel: deque[float] = deque(maxlen=max_points)
        self._kernel_tuple: tuple[float, ...] | None = ()

    def __len__(self) -> int:
        return len(self._points)

    @property
    def points(self) -> tuple[SpeedPoint, ...]:
        return tuple(self._points)

    @property
    def last(self) -> SpeedPoint | None:
        return self._points[-1] if self._points else None

    def clear(self) -> None:
        self._points.clear()
        self._kernel.clear()
        self._kernel_tuple = ()

    def add(self, t: float, done_sectors: int | None, kernel_kib_s: int | None) -> SpeedPoint:
        measured: float | None = None
        if self._points:
            prev = self._points[-1]
            dt = t - prev.t
            if dt <= 0:
                # Same instant (or a clock that went back): replace the last point, no division.
                self._points.pop()
                self._kernel.pop()
                return self._append(SpeedPoint(t, done_sectors, kernel_kib_s, prev.measured_kib_s))
            if done_sectors is not None and prev.done_sectors is not None:
                delta = done_sectors - prev.done_sectors
                # A sync restarting from zero (new action) makes delta negative: no measurement.
                measured = (delta / 2) / dt if delta >= 0 else None
        return self._append(SpeedPoint(t, done_sectors, kernel_kib_s, measured))

    def _append(self, p: SpeedPoint) -> SpeedPoint:
        self._points.append(p)
        self._kernel.append(float(p.kernel_kib_s or 0))
        self._kernel_tuple = None
        cutoff = p.t - self.window_s
        while self._points and self._points[0].t < cutoff:
            self._points.popleft()
            self._kernel.popleft()
        return p

    def series(self, *, measured: bool = False) -> list[float]:
        """Speeds (KiB/s) oldest first, for a sparkline; missing values as 0."""
        if measured:
            return [p.measured_kib_s or 0.0 for p in self._points]
        return list(self._kernel)

    def kernel_speeds(self) -> tuple[float, ...]:
        """``series()`` as a tuple, made once per point added."""
        if self._kernel_tuple is None:
            self._kernel_tuple = tuple(self._kernel)
        return self._kernel_tuple

    def average_kib_s(self) -> float | None:
        """Average over the whole window from first to last done_sectors (robust to jitter)."""
        pts = [p for p in self._points if p.done_sectors is not None]
        if len(pts) < 2:
            return None
        first, last = pts[0], pts[-1]
        dt = last.t - first.t
        if dt <= 0 or last.done_sectors is None or first.done_sectors is None:
            return None
        delta = last.done_sectors - first.done_sectors
        return (delta / 2) / dt if delta >= 0 else None
