"""raidman's own alert events, beside mdadm's (app.routine.events): what the wear database and
the boost records know that md does not say.

* ``WearHigh``: a sync that ended wrote more than ``wear_high`` × a member's own size to it
  (the kernel's count of the member device, /proc/diskstats; app.wear.snapshots);
* ``BoostNotRestored``: a boost's sync is over and its raised limits are still in force a
  minute later (the restore failed or nobody ran it);
* ``SmartFailing``: a disk's latest SMART snapshot says the overall health is FAILED;
* ``FindingNew``: an error-level finding of the check history that was not there before.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.model import Machine
from app.model.live import LiveSample
from app.routine.events import AlertEvent
from app.sync.boost import BoostStore, due_restores
from app.wear.check_findings import check_findings
from app.wear.snapshots import SnapshotStore

BOOST_GRACE_S = 60.0


class RaidmanWatch:
    def __init__(self, *, wear_high: float = 1.5, max_age_days: float = 35.0) -> None:
        self.wear_high = wear_high
        self.max_age_days = max_age_days
        self._boost_seen: dict[str, float] = {}
        self._boost_said: set[str] = set()
        self._failing: set[str] = set()
        self._findings: set[tuple[str, str]] | None = None

    def after_sync(self, store: SnapshotStore, array: str, uuid: str | None) -> list[AlertEvent]:
        """WearHigh for the array's sync that just ended (its last record)."""
        evs = store.syncs_for(array, uuid)
        if not evs or evs[-1].ended_at is None:
            return []
        ev = evs[-1]
        out = []
        for m in ev.members:
            n, own = ev.member_written(m)
            size = ev.member_size(m)
            if n is None or not size or not own:
                continue
            if n > self.wear_high * size:
                out.append(
                    AlertEvent(
                        "WearHigh",
                        array,
                        m.device,
                        detail=f"the {ev.action} of {array} wrote {n / size:.2f} × the size of "
                        f"{m.device} to it (more than {self.wear_high:g} ×)",
                        extra={"action": ev.action, "bytes_written": str(n)},
                    )
                )
        return out

    def boosts(self, boosts: BoostStore | None, sample: LiveSample, now: float) -> list[AlertEvent]:
        if boosts is None:
            return []
        due = {r.array: r for r in due_restores(boosts, sample)}
        self._boost_seen = {a: t for a, t in self._boost_seen.items() if a in due}
        self._boost_said &= set(due)
        out = []
        for a, rec in due.items():
            first = self._boost_seen.setdefault(a, now)
            if now - first >= BOOST_GRACE_S and a not in self._boost_said:
                self._boost_said.add(a)
                out.append(
                    AlertEvent(
                        "BoostNotRestored",
                        a,
                        detail=f"the {rec.action} of {a} is over and the limits raised for it "
                        f"are still in force: {', '.join(sorted(rec.applied))}",
                    )
                )
        return out

    def smart(self, store: SnapshotStore, machine: Machine) -> list[AlertEvent]:
        out = []
        for d in machine.disks:
            if d.kind != "disk":
                continue
            snap = store.latest_snapshot(d.serial or f"dev:{d.name}")
            health = snap.counters.get("health") if snap is not None else None
            failing = isinstance(health, str) and health.upper() in ("FAILED", "FAIL")
            if failing and d.name not in self._failing:
                arrays = [a.name for a in machine.arrays_of_disk(d.name)]
                out.append(
                    AlertEvent(
                        "SmartFailing",
                        arrays[0] if arrays else "",
                        d.name,
                        detail=f"SMART says {d.name} ({d.model or '?'}, {d.serial or '?'}) is "
                        "failing: replace it",
                    )
                )
            if failing:
                self._failing.add(d.name)
            else:
                self._failing.discard(d.name)
        return out

    def findings(self, store: SnapshotStore, machine: Machine, now: float) -> list[AlertEvent]:
        found = [
            f
            for f in check_findings(store, machine, now, max_age_days=self.max_age_days)
            if f.severity == "error"
        ]
        keys = {f.key for f in found}
        first = self._findings is None
        new = [f for f in found if self._findings is not None and f.key not in self._findings]
        self._findings = keys
        if first:
            return []
        return [AlertEvent("FindingNew", f.device, detail=f.title) for f in new]


def finished_arrays(events: Sequence[AlertEvent]) -> list[str]:
    return [e.array for e in events if e.event == "RebuildFinished"]
