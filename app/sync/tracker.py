"""Turns successive live samples into sync progress, speed history, finished-sync records and events.

Pure: feed it ``LiveSample``s (from any backend), read back views and events. No I/O, no UI.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from app.format import duration, percent
from app.model.live import LiveSample, MdLive
from app.model.md_names import level_name
from app.model.sync_model import WAITING_ACTIONS, md_sync
from app.sync.dm_raid import RELOAD_GRACE_S, images_synced, reloading, resumed
from app.sync.history import SpeedHistory
from app.sync.md_evidence import resync_done, unseen_sync
from app.sync.sync_view import STALL_S, SyncView, began_s, natural_key

__all__ = ["STALL_S", "ArrayEvent", "FinishedSync", "SyncTracker", "SyncView", "natural_key"]

EventKind = Literal[
    "sync-started",
    "sync-ended",
    "sync-waiting",
    "degraded",
    "recovered",
    "member-faulty",
    "member-removed",
    "spare-takeover",
    "spare-present",
    "member-added",
    "array-appeared",
    "array-vanished",
]

# Event kinds that deserve a warning-level notification rather than information.
ALARMING: frozenset[str] = frozenset(
    {"degraded", "member-faulty", "member-removed", "array-vanished"}
)


WAITING = WAITING_ACTIONS  # a sync that waits: nothing synced yet


def level_text(live: MdLive) -> str:
    """The array's level as md's table names it ("raid10"; sysfs says "10" while md has no
    personality yet: md.c level_show prints the number then)."""
    return level_name(live.level) or live.level or "?"


@dataclass(frozen=True, slots=True)
class ArrayEvent:
    """A change the tracker saw in an array between two samples (appeared, degraded, a member
    faulty or added, a sync started or ended); the record of one whole sync is
    ``app.wear.snapshots.SyncEvent``."""

    t: float
    kind: EventKind
    array: str
    message: str
    device: str | None = None
    action: str | None = None  # sync-started / sync-ended: the sync's action
    # sync-ended: the sync as recorded (one fraction for the log, the alert and the record)
    sync: FinishedSync | None = None
    # sync-started: where it began, when past 0 (a check resumed at md/sync_min)
    fraction: float | None = None

    @property
    def severity(self) -> str:
        return "warning" if self.kind in ALARMING else "information"


@dataclass(frozen=True, slots=True)
class FinishedSync:
    """The outcome of one sync, as the tool saw it."""

    array: str
    action: str
    started_at: float  # when the tool first saw it (or the sync began, if seen from the start)
    ended_at: float
    done_sectors: int | None  # last progress seen
    total_sectors: int | None
    average_kib_s: float | None
    mismatch_cnt: int | None
    completed: bool  # reached the end (vs. interrupted, frozen or vanished)
    seen_from_start: bool
    # "finished", "interrupted", "array stopped" or "became <action>"; the one word the TUI,
    # ``raidman monitor`` and the wear database use
    outcome: str = "finished"
    # ran between two looks: what showed it had (a spare turned in_sync, md/last_sync_action);
    # its times are those of the looks around it ("" : watched while it ran)
    after_fact: str = ""

    @property
    def fraction(self) -> float | None:
        """How far it got (1.0 when finished)."""
        if self.completed:
            return 1.0
        if self.done_sectors is None or not self.total_sectors:
            return None
        return min(1.0, self.done_sectors / self.total_sectors)

    @property
    def outcome_text(self) -> str:
        f = self.fraction
        if self.outcome == "interrupted" and f is not None:
            return f"interrupted at {percent(f)}"
        return self.outcome

    @property
    def duration_s(self) -> float:
        return max(0.0, self.ended_at - self.started_at)


@dataclass
class _Running:
    action: str
    started_at: float
    seen_from_start: bool
    first_done: int | None
    last_done: int | None
    total: int | None
    history: SpeedHistory = field(default_factory=SpeedHistory)
    moved_at: float | None = None  # when the position last changed (None: not since it began)
    paused_at: float | None = None  # a raid LV's sync seen stopped for a table reload since


def _near_done(done: int | None, total: int | None) -> bool:
    return done is not None and total is not None and total > 0 and done >= total * 0.999


def _projected_done(run: _Running, now: float) -> int | None:
    """Where the sync would be now at its last speed: a sync that ended between two samples
    counts as complete when its last speed would have carried it to the end."""
    if run.last_done is None:
        return None
    # md's sync_completed moves in steps of 1/16 of the sync (md.c: curr_resync_completed), so
    # the last value read can lag the real position by that much.
    lag = (run.total or 0) // 16
    pts = run.history.points
    if not pts or not pts[-1].kernel_kib_s:
        return run.last_done + lag
    dt = max(0.0, now - pts[-1].t)
    return run.last_done + lag + int(pts[-1].kernel_kib_s * 2 * dt * 1.5)


class SyncTracker:
    """Feed ``update(sample)`` once a second; read ``views()``, ``finished`` and the returned events."""

    def __init__(self, *, history_window_s: float = 600.0, keep_finished: int = 50) -> None:
        self._window = history_window_s
        self._keep = keep_finished
        self._running: dict[str, _Running] = {}
        self._waiting: dict[str, tuple[str, float]] = {}  # array -> (pending/delayed, since)
        self._last: dict[str, MdLive] = {}  # by name, as last seen (kept in place)
        self._last_arrays: tuple[MdLive, ...] = ()  # the last sample's, in its order
        self._primed = False
        self._last_t: float | None = None
        self.finished: list[FinishedSync] = []
        self.events: list[ArrayEvent] = []

    # ---- feeding --------------------------------------------------------------------
    def update(self, sample: LiveSample) -> list[ArrayEvent]:
        t = sample.taken_at
        new: list[ArrayEvent] = []
        last, running = self._last, self._running
        seen = sample.synced()  # md arrays, then raid LVs ("VG/LV": app.sync.dm_raid.lv_live)
        for live in seen:
            name = live.name
            prev = last.get(name)
            if (
                prev is not None
                and (prev is live or prev == live)
                and name not in running
                and (live.sync is None or not live.sync.active)
            ):
                # idle and as it was: nothing to say (every event below needs a change or a
                # running sync), nothing to remember
                continue
            last[name] = live
            if prev is None and self._primed:
                new.append(
                    ArrayEvent(t, "array-appeared", name, f"{name} appeared ({level_text(live)})")
                )
            if prev is not None:
                new.extend(self._member_events(t, prev, live))
                if live.degraded > prev.degraded:
                    new.append(
                        ArrayEvent(
                            t,
                            "degraded",
                            name,
                            f"{name} is degraded: {live.degraded} member(s) missing",
                        )
                    )
                elif live.degraded == 0 < prev.degraded:
                    new.append(ArrayEvent(t, "recovered", name, f"{name} is no longer degraded"))
            else:  # first seen (at start, or appeared): the state it is already in is news too
                if live.degraded > 0:
                    new.append(
                        ArrayEvent(
                            t,
                            "degraded",
                            name,
                            f"{name} is degraded: {live.degraded} member(s) missing",
                        )
                    )
                for dev, flags in live.member_states:
                    if "faulty" in flags:
                        new.append(
                            ArrayEvent(t, "member-faulty", name, f"{dev} in {name} is faulty", dev)
                        )
                    elif "spare" in flags and not (
                        live.sync is not None and dev in live.sync.targets
                    ):
                        new.append(
                            ArrayEvent(t, "spare-present", name, f"{dev} is a spare in {name}", dev)
                        )
            new.extend(self._sync_transition(t, name, live, prev))
            if prev is not None or self._primed:  # seen before, or appeared since the last look
                new.extend(self._unseen_sync(t, name, live, prev))
        if len(last) != len(seen):  # an array left (the common case costs no set)
            current = {a.name for a in seen}
            for name in dict.fromkeys(a.name for a in self._last_arrays if a.name not in current):
                del last[name]
                new.append(ArrayEvent(t, "array-vanished", name, f"{name} is gone"))
                self._waiting.pop(name, None)
                run = self._running.pop(name, None)
                if run is not None:
                    fin = self._finish(
                        name, run, t, completed=False, mismatch=None, outcome="array stopped"
                    )
                    new.append(
                        ArrayEvent(
                            t,
                            "sync-ended",
                            name,
                            f"{name}: {run.action} ended: array stopped",
                            action=run.action,
                            sync=fin,
                        )
                    )
        self._last_arrays = seen
        self._last_t = t
        self._primed = True
        self.events.extend(new)
        return new

    def _sync_transition(
        self, t: float, name: str, live: MdLive, prev: MdLive | None
    ) -> list[ArrayEvent]:
        out: list[ArrayEvent] = []
        sync = md_sync(live.sync)
        run = self._running.get(name)
        if run is not None and sync is not None and resumed(name, run.action, sync.action):
            sync = replace(sync, action=run.action)  # an LV's resync resumed after a reload
        if run is not None and (sync is None or sync.action != run.action):
            completed = (
                _near_done(_projected_done(run, t), run.total)
                or (run.action == "recover" and live.degraded == 0)
                or resync_done(run.action, live)
                or images_synced(run.action, live)
            )
            if not completed and sync is None and reloading(run.action, live):
                # dm-raid froze md for a table reload: the same sync goes on after it, unless
                # it has not for RELOAD_GRACE_S (then it stopped at the first such look)
                if run.paused_at is None:
                    run.paused_at = t
                if t - run.paused_at < RELOAD_GRACE_S:
                    return out
                t_end = run.paused_at
            else:
                t_end = t
            if completed:
                outcome = "finished"
            elif sync is not None and sync.action not in WAITING:
                outcome = f"became {sync.action}"
            else:
                outcome = "interrupted"
            fin = self._finish(
                name, run, t_end, completed=completed, mismatch=live.mismatch_cnt, outcome=outcome
            )
            out.append(_ended_event(t, fin))
            run = None
        if sync is not None and sync.action in WAITING:
            # md holds it back (md_do_sync's wait for a sync on a shared disk; an auto-read-only
            # array's resync until the first write): nothing runs, nothing is recorded yet
            if self._waiting.get(name, ("", 0.0))[0] != sync.action:
                self._waiting[name] = (sync.action, t)
                if sync.action == "pending":
                    msg = f"{name}: sync pending (auto-read-only: it starts at the first write)"
                else:
                    msg = f"{name}: sync waits for another array's sync on the same disks"
                out.append(ArrayEvent(t, "sync-waiting", name, msg, action=sync.action))
            return out
        waited = self._waiting.pop(name, None)
        if sync is not None and run is None:
            seen_from_start = (
                self._primed and (sync.done_sectors or 0) < (sync.total_sectors or 1) * 0.02
            )
            run = _Running(
                action=sync.action,
                started_at=t,
                seen_from_start=seen_from_start,
                first_done=sync.done_sectors,
                last_done=sync.done_sectors,
                total=sync.total_sectors,
                history=SpeedHistory(self._window),
            )
            self._running[name] = run
            what = sync.action + (f" onto {', '.join(sync.targets)}" if sync.targets else "")
            after = f" after waiting {duration(t - waited[1])}" if waited is not None else ""
            verb, frac = "started", None
            if live.sync_min and sync.total_sectors:
                # md begins a requested sync at resync_min (md.c md_do_sync): a check resumed
                frac = live.sync_min / sync.total_sectors
                verb = f"resumed at {percent(frac)}"
            elif not seen_from_start and sync.fraction is not None:
                verb = f"running, found at {percent(sync.fraction)}"
            out.append(
                ArrayEvent(
                    t,
                    "sync-started",
                    name,
                    f"{name}: {what} {verb}{after}",
                    action=sync.action,
                    fraction=frac,
                )
            )
        if sync is not None and run is not None:
            run.paused_at = None
            if run.moved_at is None or sync.done_sectors != run.last_done:
                run.moved_at = t
            run.last_done = sync.done_sectors if sync.done_sectors is not None else run.last_done
            run.total = sync.total_sectors if sync.total_sectors is not None else run.total
            run.history.add(t, sync.done_sectors, sync.speed_kib_s)
        return out

    def _unseen_sync(
        self, t: float, name: str, live: MdLive, prev: MdLive | None
    ) -> list[ArrayEvent]:
        """A sync that began and ended between two looks (app.sync.md_evidence): recorded as
        started at the previous look and ended now, marked as seen after the fact."""
        if name in self._running or name in self._waiting:
            return []
        seen = unseen_sync(name, live, prev)
        if seen is None:
            return []
        started = self._last_t if self._last_t is not None else t
        run = _Running(seen.action, started, False, None, None, None, SpeedHistory(self._window))
        fin = self._finish(
            name,
            run,
            t,
            completed=seen.completed,
            mismatch=live.mismatch_cnt,
            outcome=seen.outcome,
            after_fact=seen.evidence,
        )
        extra = f", mismatch_cnt {fin.mismatch_cnt}" if fin.mismatch_cnt is not None else ""
        return [
            ArrayEvent(
                run.started_at,
                "sync-started",
                name,
                f"{name}: {seen.action} started",
                action=seen.action,
            ),
            ArrayEvent(
                t,
                "sync-ended",
                name,
                f"{name}: {seen.action} {seen.outcome} between two looks (seen after the fact: "
                f"{seen.evidence}){extra}",
                action=seen.action,
                sync=fin,
            ),
        ]

    def _member_events(self, t: float, prev: MdLive, live: MdLive) -> list[ArrayEvent]:
        if prev.member_states == live.member_states and _targets(prev) == _targets(live):
            return []  # the common case (every sample of a steady array): nothing to say
        out: list[ArrayEvent] = []
        before = dict(prev.member_states)
        after = dict(live.member_states)
        for dev, flags in after.items():
            old = before.get(dev)
            if old is None:
                out.append(
                    ArrayEvent(t, "member-added", live.name, f"{dev} added to {live.name}", dev)
                )
                continue
            if "faulty" in flags and "faulty" not in old:
                out.append(
                    ArrayEvent(
                        t, "member-faulty", live.name, f"{dev} in {live.name} is faulty", dev
                    )
                )
            # A spare that sat idle and now rebuilds into a slot (or is in sync) has taken over.
            was_idle_spare = (
                "spare" in old
                and "in_sync" not in old
                and not (prev.sync is not None and dev in prev.sync.targets)
            )
            now_active = "in_sync" in flags or (live.sync is not None and dev in live.sync.targets)
            if was_idle_spare and now_active and "faulty" not in flags:
                out.append(
                    ArrayEvent(
                        t,
                        "spare-takeover",
                        live.name,
                        f"spare {dev} is taking over in {live.name}",
                        dev,
                    )
                )
        for dev in before:
            if dev not in after:
                out.append(
                    ArrayEvent(
                        t, "member-removed", live.name, f"{dev} removed from {live.name}", dev
                    )
                )
        return out

    def _finish(
        self,
        name: str,
        run: _Running,
        t: float,
        *,
        completed: bool,
        mismatch: int | None,
        outcome: str,
        after_fact: str = "",
    ) -> FinishedSync:
        self._running.pop(name, None)
        avg = run.history.average_kib_s()
        fin = FinishedSync(
            array=name,
            action=run.action,
            started_at=run.started_at,
            ended_at=t,
            done_sectors=run.total if completed else run.last_done,
            total_sectors=run.total,
            average_kib_s=avg,
            mismatch_cnt=mismatch if run.action in ("check", "repair") else None,
            completed=completed,
            seen_from_start=run.seen_from_start,
            outcome=outcome,
            after_fact=after_fact,
        )
        self.finished.append(fin)
        del self.finished[: -self._keep]
        return fin

    # ---- reading --------------------------------------------------------------------
    def running(self) -> tuple[str, ...]:
        return tuple(self._running)

    def waiting(self) -> tuple[str, ...]:
        """The arrays whose sync md holds back (delayed, pending)."""
        return tuple(self._waiting)

    def history(self, array: str) -> SpeedHistory | None:
        run = self._running.get(array)
        return run.history if run else None

    def finished_for(self, array: str) -> list[FinishedSync]:
        return [f for f in self.finished if f.array == array]

    def views(self) -> list[SyncView]:
        out = []
        for name, run in self._running.items():
            live = self._last.get(name)
            sync = live.sync if live else None
            if sync is None:
                continue
            last = run.history.last
            last_t = last.t if last is not None else run.started_at
            moved_at = run.moved_at if run.moved_at is not None else last_t
            out.append(
                SyncView(
                    array=name,
                    action=run.action,  # an LV's resync resumed reads "repair" (dm_raid.resumed)
                    done_sectors=sync.done_sectors,
                    total_sectors=sync.total_sectors,
                    speed_kib_s=sync.speed_kib_s,
                    eta_s=sync.eta_s,
                    elapsed_s=max(0.0, last_t - run.started_at),
                    targets=sync.targets,
                    speeds=run.history.kernel_speeds(),
                    min_speed_kib_s=sync.min_speed_kib_s,
                    max_speed_kib_s=sync.max_speed_kib_s,
                    still_s=max(0.0, last_t - moved_at),
                    began_s=began_s(sync.action, sync.done_sectors, run.history),
                )
            )
        for name, (action, since) in self._waiting.items():
            live = self._last.get(name)
            sync = live.sync if live else None
            t = self._last_t if self._last_t is not None else since
            out.append(
                SyncView(
                    array=name,
                    action=action,
                    done_sectors=sync.done_sectors if sync else None,
                    total_sectors=sync.total_sectors if sync else None,
                    speed_kib_s=None,
                    eta_s=None,
                    elapsed_s=max(0.0, t - since),
                    targets=(),
                    speeds=(),
                    min_speed_kib_s=sync.min_speed_kib_s if sync else None,
                    max_speed_kib_s=sync.max_speed_kib_s if sync else None,
                )
            )
        return sorted(out, key=natural_key)


def _ended_event(t: float, fin: FinishedSync) -> ArrayEvent:
    extra = ""
    if fin.mismatch_cnt is not None and fin.action in ("check", "repair"):
        extra = f", mismatch_cnt {fin.mismatch_cnt}"
    return ArrayEvent(
        t,
        "sync-ended",
        fin.array,
        f"{fin.array}: {fin.action} {fin.outcome_text} after {duration(fin.duration_s)}{extra}",
        action=fin.action,
        sync=fin,
    )


def _targets(live: MdLive) -> tuple[str, ...]:
    return live.sync.targets if live.sync is not None else ()
