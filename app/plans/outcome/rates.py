"""How fast each running sync progresses now, measured: the progress of two live samples taken a
moment apart (``Backend.sample``: md's progress as /proc/mdstat counts it, fresher than
sync_completed), for the forecasts of ``raidman plan``/``apply`` and the TUI's preview alike.

md's own ``sync_speed`` is an average over its marks window (md.c ``sync_speed_show``: the
sectors done since the oldest of SYNC_MARKS marks SYNC_MARK_STEP apart, up to ~30 s back), so it
lags a change of limits by up to half a minute; the rate measured over the last second does not.
The TUI measures it from the session's last two samples, the CLI from two it takes itself a
second apart: one function (``progress_rates``), one rate, the same forecast."""

from __future__ import annotations

import time
from collections.abc import Callable

from app.backend import Backend
from app.model.live import LiveSample

INTERVAL_S = 1.0
MAX_INTERVAL_S = 5.0  # samples further apart say little about the rate now


def progress_rates(before: LiveSample, after: LiveSample) -> dict[str, float]:
    """Array → the progress rate between the two samples (KiB/s of md's progress unit), for
    each array running the same sync over the same total in both."""
    dt = after.taken_at - before.taken_at
    if not 0 < dt <= MAX_INTERVAL_S:
        return {}
    was = {a.name: a.sync for a in before.arrays}
    out: dict[str, float] = {}
    for a in after.arrays:
        s0, s1 = was.get(a.name), a.sync
        if s0 is None or s1 is None or s0.action != s1.action or not s1.active:
            continue
        if (
            s0.done_sectors is None
            or s1.done_sectors is None
            or s0.total_sectors != s1.total_sectors
        ):
            continue
        moved = s1.done_sectors - s0.done_sectors
        if moved >= 0:
            out[a.name] = moved / 2 / dt
    return out


def measure_progress_rates(
    backend: Backend, *, interval: float = INTERVAL_S, sleep: Callable[[float], None] | None = None
) -> dict[str, float]:
    """Two samples ``interval`` seconds apart through the backend (empty when it cannot sample)."""
    try:
        first = backend.sample()
        if not any(a.sync is not None and a.sync.active for a in first.arrays):
            return {}
        (sleep or time.sleep)(interval)
        return progress_rates(first, backend.sample())
    except Exception:  # a backend that cannot sample: md's own speed is used instead
        return {}
