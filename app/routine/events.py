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
* ``RebuildStarted`` / ``RebuildFinished``: a sync (resync, recovery, check, repair, reshape)
  began / ended;
* ``TestMessage``: ``raidman monitor --test-alert``.

raidman's: ``CheckMismatch`` (a check/repair ended with md/mismatch_cnt > 0), ``WearHigh`` (a
sync wrote more than N × a member's size to it), ``BoostNotRestored`` (a boost's sync is over
and its raised limits are still in force), ``SmartFailing`` (a disk's SMART overall health is
FAILED), ``SelfTestFailed`` (a disk's newest SMART self-test failed), ``FindingNew`` (a new
error-level finding of the check history); app.routine.watch decides those.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from app.model.live import LiveSample, MdLive

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
    "CheckMismatch",
    "SmartFailing",
    "SelfTestFailed",
    "WearHigh",
    "BoostNotRestored",
    "FindingNew",
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
    """What changed from ``prev`` to ``cur`` (``prev`` None: the first look, which reports
    only arrays that are degraded, as mdadm does at start)."""
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
            out.append(AlertEvent("NewArray", name, detail=f"{name} ({a.level or '?'}) appeared"))
            if a.degraded > 0:
                out.append(_degraded(a))
            continue
        if p is a:  # the sampler hands out the same object while nothing in it moved
            continue
        out.extend(_member_events(p, a))
        if a.degraded > p.degraded:
            out.append(_degraded(a))
        ps = p.sync.action if p.sync is not None and p.sync.active else None
        cs = a.sync.action if a.sync is not None and a.sync.active else None
        if cs in ("pending", "delayed"):
            cs = None
        if ps in ("pending", "delayed"):
            ps = None
        if cs is not None and ps != cs:
            if ps is not None:
                out.append(_finished(p, ps, a))
            out.append(
                AlertEvent(
                    "RebuildStarted", name, detail=f"{cs} of {name} started", extra={"action": cs}
                )
            )
        elif cs is None and ps is not None:
            out.append(_finished(p, ps, a))
            if ps in ("check", "repair") and a.mismatch_cnt:
                out.append(
                    AlertEvent(
                        "CheckMismatch",
                        name,
                        detail=f"the {ps} of {name} found mismatch_cnt {a.mismatch_cnt}",
                        extra={"action": ps, "mismatch_cnt": str(a.mismatch_cnt)},
                    )
                )
    return out


def _degraded(a: MdLive) -> AlertEvent:
    return AlertEvent(
        "DegradedArray",
        a.name,
        detail=f"{a.name} is degraded: {a.degraded} device(s) missing or failed",
        extra={"degraded": str(a.degraded)},
    )


def _finished(p: MdLive, action: str, a: MdLive) -> AlertEvent:
    frac = p.sync.fraction if p.sync is not None else None
    how = "" if frac is None else f" at {frac * 100:.1f}%"
    return AlertEvent(
        "RebuildFinished",
        a.name,
        detail=f"{action} of {a.name} ended{how}",
        extra={"action": action, "mismatch_cnt": str(a.mismatch_cnt or 0)},
    )


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
