"""raidman's own alert events, beside mdadm's (app.routine.events): what the wear database and
the boost records know that md does not say.

* ``WearHigh``: a sync that ended wrote more than ``wear_high`` × a member's own size to it
  (the kernel's count of the member device, /proc/diskstats; app.wear.snapshots);
* ``BoostNotRestored``: a boost's sync is over and its raised limits are still in force a
  minute later (the restore failed or nobody ran it);
* ``SmartFailing``: a disk's latest SMART snapshot says the overall health is FAILED;
* ``SelfTestFailed``: the newest finished self-test in a disk's latest SMART snapshot
  (app.wear.smart_reads.log_counters) failed, and this monitor has not said so for that test:
  sent once per failed test (at the first look too, as mdadm sends DegradedArray for an array
  first seen degraded), again only when a newer test fails;
* ``FindingNew``: an error-level finding of the check history that was not there before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.model import Disk, Machine
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
        self._self_test: dict[str, tuple[object, ...]] = {}  # disk key -> newest test seen
        self._findings: set[tuple[str, str]] | None = None
        # what smart() last looked at: the store's snapshot mark and the disks' names
        self._smart_seen: tuple[tuple[int, int], frozenset[str]] | None = None

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
        """SmartFailing and SelfTestFailed from each disk's latest SMART snapshot. A disk is
        looked at again only when it has a snapshot stored since the last look, or is new to
        the machine: what it says cannot have changed otherwise (on 1,000 disks, reading every
        latest snapshot each minute was most of the monitor's CPU)."""
        out = []
        mark = store.snapshot_mark()
        names = frozenset(d.name for d in machine.disks)
        moved: set[str] | None = None  # None: look at every disk
        new_names: frozenset[str] = frozenset()
        if self._smart_seen is not None:
            seen_mark, seen_names = self._smart_seen
            moved = store.serials_since(seen_mark) if mark != seen_mark else set()
            new_names = names - seen_names
        self._smart_seen = (mark, names)
        for d in machine.disks:
            if d.kind != "disk":
                continue
            key = d.serial or f"dev:{d.name}"  # what take_snapshot stores a reading under
            if moved is not None and key not in moved and d.name not in new_names:
                continue
            snap = store.latest_snapshot(key)
            counters = snap.counters if snap is not None else {}
            arrays = _arrays_under(machine, d.name)
            health = counters.get("health")
            failing = isinstance(health, str) and health.upper() in ("FAILED", "FAIL")
            if failing and d.name not in self._failing:
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
            test = counters.get("self_test")
            if isinstance(test, Mapping):
                ev = self._self_test_event(key, d, test, arrays)
                if ev is not None:
                    out.append(ev)
        return out

    def _self_test_event(
        self, key: str, d: Disk, t: Mapping[str, Any], arrays: list[str]
    ) -> AlertEvent | None:
        """SelfTestFailed when the disk's newest finished self-test failed and is not the one
        this monitor last saw (a reading without the log changes nothing)."""
        ident = tuple(
            t.get(k) for k in ("kind", "status", "passed", "lifetime_hours", "lba_first_error")
        )
        if self._self_test.get(key) == ident:
            return None
        self._self_test[key] = ident
        if t.get("passed") is not False:
            return None
        kind = str(t.get("kind") or "?")
        status = str(t.get("status") or "failed")
        lba, hours = t.get("lba_first_error"), t.get("lifetime_hours")
        at = f" at LBA {lba}" if lba is not None else ""
        when = f" at {hours} power-on hours" if hours is not None else ""
        under = f"; {d.name} is under {', '.join(arrays)}" if arrays else "; it is in no array"
        return AlertEvent(
            "SelfTestFailed",
            arrays[0] if arrays else "",
            d.name,
            detail=f"the SMART self-test ({kind}) of {d.name} ({d.model or '?'}, "
            f"{d.serial or '?'}) failed{at}{when}: {status}{under}",
            extra={
                "test": kind,
                "status": status,
                "lba_first_error": "" if lba is None else str(lba),
                "power_on_hours": "" if hours is None else str(hours),
                "arrays": ",".join(arrays),
            },
        )

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


def _arrays_under(machine: Machine, disk: str) -> list[str]:
    """The arrays a disk is under, volumes before their container (an IMSM/DDF container
    holds every disk of its volumes: the volume is the md device an alert names)."""
    return [a.name for a in sorted(machine.arrays_of_disk(disk), key=lambda a: a.is_container)]


def finished_arrays(events: Sequence[AlertEvent]) -> list[str]:
    return [e.array for e in events if e.event in ("RebuildFinished", "CheckFinished")]
