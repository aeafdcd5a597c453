"""What the Sync tab shows for one array's sync right now (the tracker makes these)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.model.sync_model import WAITING_ACTIONS
from app.sync.history import SpeedHistory
from app.sync.waiting import SyncWait

# The position read from sync_completed moves in steps of 1/16 of the sync (md.c md_do_sync:
# curr_resync_completed is set once curr_resync is more than max_sectors >> 4 past it), and the
# kernel's sync_speed falls to 0 within its marks window (SYNC_MARKS * SYNC_MARK_STEP, 30 s)
# when nothing moves: "no progress" is a position unchanged for STALL_S while the speed is 0,
# or for longer than the reported speed needs to cross one such step.
STALL_S = 120.0


@dataclass(frozen=True, slots=True)
class SyncView:
    """What the sync pane shows for one array right now."""

    array: str
    action: str
    done_sectors: int | None
    total_sectors: int | None
    speed_kib_s: int | None
    eta_s: float | None
    elapsed_s: float
    targets: tuple[str, ...]
    speeds: tuple[float, ...]  # kernel speed history, oldest first (KiB/s)
    # the limits in force (sync_speed_min/max): they bound the progress rate (app.sync.limits)
    min_speed_kib_s: int | None
    max_speed_kib_s: int | None
    still_s: float = 0.0  # seconds the position has not moved (0: it moved at the last sample)
    # seconds since the sync began by md's own figures (position / speed), when they allow it
    began_s: float | None = None
    # delayed/pending: what it waits for (the session fills it in from the machine)
    wait: SyncWait | None = None

    @property
    def waiting(self) -> bool:
        return self.action in WAITING_ACTIONS

    @property
    def fraction(self) -> float | None:
        if self.done_sectors is None or not self.total_sectors:
            return None
        return min(1.0, self.done_sectors / self.total_sectors)

    @property
    def stalled(self) -> bool:
        """No progress for ``STALL_S`` (see there): the position has not moved although the
        kernel's speed says it should have crossed a step of sync_completed by now."""
        if self.still_s < STALL_S or self.waiting:  # a wait is not a stall
            return False
        if not self.speed_kib_s or not self.total_sectors:
            return True
        step_s = (self.total_sectors / 16) / (2 * self.speed_kib_s)
        return self.still_s > max(STALL_S, 2 * step_s)


def natural_key(v: SyncView) -> tuple[object, ...]:
    """md0, md1, md10 (not md0, md1, md10 by characters: md10 before md2)."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", v.array))


def began_s(action: str, done: int | None, history: SpeedHistory) -> float | None:
    """How long ago the sync began, by md's figures: its position over its mean speed as
    raidman watched it (a rebuild found at 60 % was not begun when raidman started). None
    when the speed is not known yet or the sync is a reshape (its position is not its
    progress from zero)."""
    if done is None or action in ("reshape", "pending", "delayed", "frozen"):
        return None
    speeds = [s for s in history.kernel_speeds() if s > 0]
    if not speeds:
        return None
    mean = sum(speeds) / len(speeds)
    return done / 2 / mean
