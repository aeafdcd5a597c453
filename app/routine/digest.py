"""Quiet hours and the digest of ``raidman monitor``'s alerts (raidman.toml ``[alerts] quiet``,
``digest``).

- An event that is not critical, during the quiet hours (local time, e.g. 22:00-07:00), waits;
  when they end, what waited goes out as one ``Digest``.
- With a digest interval, every event that is not critical waits for the next digest (one
  ``Digest`` per interval, none when nothing waited; never during quiet hours).
- Critical events (a failure, a degraded array, an array gone, SMART failing: events.CRITICAL),
  a degraded array's reminder (``DegradedFor``), ``TestMessage`` and ``Heartbeat`` are never
  held: they go out at once, whatever the hour.

Every event is written to the log when it happens, held or not.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from app.routine.events import CRITICAL, AlertEvent

NEVER_HELD = CRITICAL | {"DegradedFor", "TestMessage", "Heartbeat"}
MAX_HELD = 500
Quiet = tuple[tuple[int, int], tuple[int, int]]


@dataclass(frozen=True)
class Held:
    at: float
    event: AlertEvent


def in_span(quiet: Quiet, minute: int) -> bool:
    """Whether the minute of the day ``minute`` lies in ``quiet`` (which may span midnight)."""
    start = quiet[0][0] * 60 + quiet[0][1]
    end = quiet[1][0] * 60 + quiet[1][1]
    if start < end:
        return start <= minute < end
    return minute >= start or minute < end


class Holder:
    def __init__(
        self,
        quiet: Quiet | None = None,
        digest_s: float | None = None,
        *,
        now: float = 0.0,
        localtime: Callable[[float], time.struct_time] = time.localtime,
    ) -> None:
        self.quiet, self.digest_s = quiet, digest_s
        self._localtime = localtime
        self._held: list[Held] = []
        self._dropped = 0
        self._last_digest = now

    def configure(self, quiet: Quiet | None, digest_s: float | None) -> None:
        self.quiet, self.digest_s = quiet, digest_s

    @property
    def waiting(self) -> int:
        return len(self._held) + self._dropped

    def is_quiet(self, now: float) -> bool:
        if self.quiet is None:
            return False
        t = self._localtime(now)
        return in_span(self.quiet, t.tm_hour * 60 + t.tm_min)

    def admit(self, e: AlertEvent, now: float) -> bool:
        """True: deliver ``e`` now; False: it waits for the digest."""
        if e.event in NEVER_HELD:
            return True
        if self.digest_s is None and not self.is_quiet(now):
            return True
        if len(self._held) < MAX_HELD:
            self._held.append(Held(now, e))
        else:
            self._dropped += 1
        return False

    def due(self, now: float) -> AlertEvent | None:
        """The digest of what waited, when it is due (quiet hours over; the interval passed)."""
        if not self._held and not self._dropped:
            if self.digest_s is not None and now - self._last_digest >= self.digest_s:
                self._last_digest = now  # nothing waited: the next interval starts
            return None
        if self.is_quiet(now):
            return None
        if self.digest_s is not None and now - self._last_digest < self.digest_s:
            return None
        held, dropped = self._held, self._dropped
        self._held, self._dropped, self._last_digest = [], 0, now
        return digest_event(held, dropped, self._localtime)


def digest_event(
    held: list[Held], dropped: int, localtime: Callable[[float], time.struct_time]
) -> AlertEvent:
    n = len(held) + dropped
    since = time.strftime("%H:%M:%S", localtime(held[0].at)) if held else "?"
    lines = [f"{n} event{'s' if n != 1 else ''} held since {since}:"]
    for h in held:
        where = " ".join(x for x in (h.event.md_device, h.event.component_path) if x)
        at = time.strftime("%H:%M:%S", localtime(h.at))
        lines.append(f"{at} {h.event.event} {where}: {h.event.detail}".replace("  ", " "))
    if dropped:
        lines.append(f"(and {dropped} more, not kept)")
    return AlertEvent(
        "Digest",
        "",
        detail="\n".join(lines),
        extra={"count": str(n)},
        items=tuple(h.event for h in held),
    )
