"""When a check window is open: every N seconds (windows begin at multiples of N since the epoch),
or monthly on the first Sunday at a local time (Debian's checkarray cron: the first Sunday of
the month, 00:57; mdadm's mdcheck_start.timer: the first Sunday, 01:00). And whether
Debian's own scheduler is on (``/etc/default/mdadm`` ``AUTOCHECK``): then raidman starts no
checks of its own, so that nobody runs two schedulers.
"""

from __future__ import annotations

import datetime as dt
import math
import re

from app.routine.config import RoutineConfig

DEFAULT_MDADM = "/etc/default/mdadm"


def first_sunday(year: int, month: int, at: tuple[int, int]) -> float:
    """Local time of the first Sunday of the month at ``at`` (unix seconds)."""
    d = dt.date(year, month, 1)
    d += dt.timedelta(days=(6 - d.weekday()) % 7)
    return dt.datetime(d.year, d.month, d.day, at[0], at[1]).timestamp()


def window_at(now: float, cfg: RoutineConfig) -> tuple[float, float] | None:
    """The (start, end) of the check window open at ``now``, or None."""
    if cfg.checks_off:
        return None
    length = cfg.check_window_s
    if cfg.check_every_s is not None:
        every = cfg.check_every_s
        start = math.floor(now / every) * every
        return (start, start + length) if now < start + length else None
    today = dt.datetime.fromtimestamp(now)
    for back in (0, 1):
        y, m = today.year, today.month - back
        if m == 0:
            y, m = y - 1, 12
        start = first_sunday(y, m, cfg.check_at)
        if start <= now < start + length:
            return (start, start + length)
    return None


_AUTOCHECK = re.compile(r"""^\s*AUTOCHECK\s*=\s*["']?([A-Za-z]+)["']?\s*(?:#.*)?$""")


def autocheck_on(text: str | None) -> bool:
    """Whether ``/etc/default/mdadm`` turns Debian's monthly checkarray cron on (its default
    file says AUTOCHECK=true; the cron job runs only when it is "true")."""
    if not text:
        return False
    value = None
    for line in text.splitlines()[:1000]:
        m = _AUTOCHECK.match(line)
        if m:
            value = m.group(1).lower()
    return value == "true"
