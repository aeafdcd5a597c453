"""Alert events from one look to the next (``raidman monitor``), named as mdadm --monitor names
them where mdadm has the event (mdadm's Monitor.c, check_array), plus raidman's own.

mdadm's events, as Monitor.c decides them from one poll to the next:

* ``NewArray``: an array appeared; ``DeviceDisappeared``: an array went away (stopped);
* ``Fail``: a member became faulty (the component is given); ``FailSpare``: the member that was
  being rebuilt (a spare taking a slot) became faulty;
* ``SpareActive``: a member that was being rebuilt is in sync now;
* ``DegradedArray``: the array is degraded — at the first look, or when md's ``degraded``
  count rises (mdadm sends it for an array first seen degraded; raidman also when a member
  fails while it watches, so that a failure always says what it left);
* ``RebuildStarted`` / ``RebuildFinished``: a resync, recovery or reshape began / ended (mdadm
  sends them for every sync, checks included: raidman keeps them for what rebuilds);
* ``TestMessage``: ``raidman monitor --test-alert``.

Sync events come from the session's one sync tracker (app.sync.tracker), not from a second
comparison of samples: a "recover" md never ran (no target: app.model.sync_model.md_sync) is
no sync and sends nothing, a sync waiting its turn (resync=DELAYED) sends nothing until it
runs, and a recovery over between two looks sends its pair once, said as seen after the fact.

raidman's: ``CheckStarted`` / ``CheckFinished`` (a check or repair began or resumed / finished or
stopped: a scheduled window is one of these pairs; ``extra["mdadm_event"]`` names what mdadm
--monitor sends instead), ``CheckMismatch`` (a check/repair ended with md/mismatch_cnt > 0), ``WearHigh`` (a
sync wrote more than N × a member's size to it), ``BoostNotRestored`` (a boost's sync is over
and its raised limits are still in force), ``SmartFailing`` (a disk's SMART overall health is
FAILED), ``SelfTestFailed`` (a disk's newest SMART self-test failed), ``FindingNew`` (a new
error-level finding of the check history); app.routine.watch decides those. ``DegradedFor`` (an
array degraded N hours, and again every N hours it stays so), ``RebuildSlow`` (a rebuild more
than X % below its forecast), ``MemberLatency`` (one member's latency an outlier among its
peers during a sync) and ``Heartbeat`` (the monitor runs, every N hours): app.routine.exposure;
``Digest`` (the events quiet hours or the digest interval held): app.routine.digest.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from app.format import duration, percent, speed
from app.model.live import LiveSample, MdLive
from app.sync.tracker import ArrayEvent, FinishedSync, level_text

MDADM_EVENTS = (
    "Fail",
    "FailSpare",
    "DegradedArray",
    "SpareActive",
    "RebuildStarted",
    "RebuildFinished",
    "NewArray",
    "DeviceDisappeared",
    "TestMessage",
)
RAIDMAN_EVENTS = (
    "CheckStarted",
    "CheckFinished",
    "CheckMismatch",
    "SmartFailing",
    "SelfTestFailed",
    "WearHigh",
    "BoostNotRestored",
    "FindingNew",
    "DegradedFor",
    "RebuildSlow",
    "MemberLatency",
    "Heartbeat",
    "Digest",
)
EVENTS = MDADM_EVENTS + RAIDMAN_EVENTS
CRITICAL = frozenset({"Fail", "FailSpare", "DegradedArray", "DeviceDisappeared", "SmartFailing"})


@dataclass(frozen=True)
class AlertEvent:
    event: str
    array: str  # kernel name (md127); "" for a disk's own event
    component: str = ""  # a member (sdb1) or a disk
    detail: str = ""  # one line of plain English
    extra: dict[str, str] = field(default_factory=dict, compare=False)
    items: tuple[AlertEvent, ...] = field(default=(), compare=False)  # a Digest's events

    @property
    def md_device(self) -> str:
        return f"/dev/{self.array}" if self.array else ""

    @property
    def component_path(self) -> str:
        return f"/dev/{self.component}" if self.component else ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.event, self.array, self.component)


def _flags(a: MdLive) -> dict[str, tuple[str, ...]]:
    return dict(a.member_states)


def array_events(prev: LiveSample | None, cur: LiveSample) -> list[AlertEvent]:
    """What changed in the arrays and their members from ``prev`` to ``cur`` (``prev`` None: the
    first look, which reports only arrays that are degraded, as mdadm does at start); the syncs
    are :func:`sync_alerts`'."""
    out: list[AlertEvent] = []
    now = {a.name: a for a in cur.arrays}
    if prev is None:
        for a in cur.arrays:
            if a.degraded > 0:
                out.append(_degraded(a))
        return out
    was = {a.name: a for a in prev.arrays}
    for name in was.keys() - now.keys():
        out.append(AlertEvent("DeviceDisappeared", name, detail=f"{name} is no longer there"))
    for name, a in now.items():
        p = was.get(name)
        if p is None:
            out.append(AlertEvent("NewArray", name, detail=f"{name} ({level_text(a)}) appeared"))
            if a.degraded > 0:
                out.append(_degraded(a))
            continue
        if p is a:  # the sampler hands out the same object while nothing in it moved
            continue
        out.extend(_member_events(p, a))
        if a.degraded > p.degraded:
            out.append(_degraded(a))
    return out


def _degraded(a: MdLive) -> AlertEvent:
    return AlertEvent(
        "DegradedArray",
        a.name,
        detail=f"{a.name} is degraded: {a.degraded} device(s) missing or failed",
        extra={"degraded": str(a.degraded)},
    )


CHECKS = ("check", "repair")


# array, when its check began -> the average speeds (KiB/s) of its earlier finished checks
CheckHistory = Callable[[str, float], list[float]]


def _check_times(e: ArrayEvent, fin: FinishedSync, history: CheckHistory | None) -> str:
    """A finished check's duration and speed, against its earlier checks where known; the
    extras go in ``fin``'s event."""
    words = f"; took {duration(fin.duration_s)}"
    if fin.average_kib_s:
        words += f" at {speed(fin.average_kib_s)}"
    earlier = history(e.array, fin.started_at) if history is not None else []
    if earlier and fin.average_kib_s:
        med = statistics.median(earlier)
        change = fin.average_kib_s / med - 1 if med else 0.0
        n = len(earlier)
        words += (
            f" (its {n} earlier check{'s' if n != 1 else ''}: {speed(med)} median, this one "
            f"{abs(change):.0%} {'slower' if change < 0 else 'faster'})"
        )
    return words


def sync_alerts(
    tracked: Iterable[ArrayEvent], history: CheckHistory | None = None
) -> list[AlertEvent]:
    """The alert events of the syncs the session's tracker saw begin and end: a check or repair
    as CheckStarted / CheckFinished, any other sync as mdadm's RebuildStarted /
    RebuildFinished; the percentage is the tracker's (the one the log and the record say). A
    finished check says how long it took and how fast, against ``history`` (its array's earlier
    checks) where given."""
    out: list[AlertEvent] = []
    for e in tracked:
        action = e.action or "sync"
        check = action in CHECKS
        if e.kind == "sync-started":
            extra = {"action": action}
            detail = f"{action} of {e.array} started"
            if e.fraction:  # a check resumed where md stopped it (md/sync_min)
                detail = f"{action} of {e.array} resumed at {percent(e.fraction)}"
                extra["from_percent"] = percent(e.fraction)
            if check:
                extra["mdadm_event"] = "RebuildStarted"
            name = "CheckStarted" if check else "RebuildStarted"
            out.append(AlertEvent(name, e.array, detail=detail, extra=extra))
        elif e.kind == "sync-ended" and e.sync is not None:
            fin = e.sync
            detail = f"{action} of {e.array} {fin.outcome_text}"
            if fin.after_fact:
                detail += f" (ran between two looks, seen after the fact: {fin.after_fact})"
            extra = {"action": action, "outcome": fin.outcome}
            f = fin.fraction
            if f is not None:
                extra["percent"] = percent(f)
            if check:
                extra["mdadm_event"] = "RebuildFinished"
                extra["mismatch_cnt"] = str(fin.mismatch_cnt or 0)
                extra["duration_s"] = str(round(fin.duration_s))
                if fin.average_kib_s:
                    extra["speed_kib_s"] = str(round(fin.average_kib_s))
                earlier = history(e.array, fin.started_at) if history is not None else []
                if earlier:
                    extra["earlier_median_kib_s"] = str(round(statistics.median(earlier)))
                detail += f"; mismatch_cnt {fin.mismatch_cnt or 0}"
                detail += _check_times(e, fin, history)
            name = "CheckFinished" if check else "RebuildFinished"
            out.append(AlertEvent(name, e.array, detail=detail, extra=extra))
            if check and fin.mismatch_cnt:
                out.append(
                    AlertEvent(
                        "CheckMismatch",
                        e.array,
                        detail=f"the {action} of {e.array} found mismatch_cnt {fin.mismatch_cnt}",
                        extra={"action": action, "mismatch_cnt": str(fin.mismatch_cnt)},
                    )
                )
    return out


def _member_events(p: MdLive, a: MdLive) -> Iterable[AlertEvent]:
    before, after = _flags(p), _flags(a)
    for dev, flags in after.items():
        old = before.get(dev)
        if old is None:
            continue
        if "faulty" in flags and "faulty" not in old:
            # md's dev state says "spare" for any member not in sync (md.c state_show), the
            # one being rebuilt included: not in sync before it failed = FailSpare
            rebuilding = "in_sync" not in old
            yield AlertEvent(
                "FailSpare" if rebuilding else "Fail",
                a.name,
                dev,
                detail=f"{dev} of {a.name} failed"
                + (" while it was being rebuilt" if rebuilding else ""),
            )
        elif "in_sync" in flags and "in_sync" not in old and "faulty" not in flags:
            yield AlertEvent(
                "SpareActive", a.name, dev, detail=f"{dev} of {a.name} is in sync (rebuilt)"
            )
