"""Headless wear monitor: SMART snapshots at start, every ``interval_s``, and when a sync starts
or ends on an array (action idle -> non-idle and back), recorded with the sync event."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.model import Machine
from app.model.live import MdLive
from app.model.smart import SmartReading
from app.wear.snapshots import SnapshotStore, SyncMember
from app.wear.units import bytes_written, wear_used_percent
from backends.base import Backend

DEFAULT_INTERVAL_S = 15 * 60.0


def counters_of(reading: SmartReading, capacity_bytes: int | None = None) -> dict[str, Any]:
    """The JSON stored with a snapshot."""
    w = bytes_written(reading)
    wear = wear_used_percent(reading)
    return {
        "bytes_written": w.bytes if w else None,
        "raw": w.raw if w else None,
        "unit": w.unit if w else None,
        "counter": w.source if w else None,
        "wear_used": wear.used_percent if wear else None,
        "power_on_hours": reading.power_on_hours,
        "temperature_c": reading.temperature_c,
        "capacity_bytes": reading.capacity_bytes or capacity_bytes,
        "health": reading.health,
    }


@dataclass
class _Running:
    sync_id: int
    action: str
    members: tuple[SyncMember, ...]
    last_fraction: float | None = None


class WearMonitor:
    def __init__(
        self,
        backend: Backend,
        store: SnapshotStore,
        *,
        interval_s: float = DEFAULT_INTERVAL_S,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.backend = backend
        self.store = store
        self.interval_s = interval_s
        self._log = log or (lambda _line: None)
        self._machine: Machine | None = None
        self._last_periodic: float | None = None
        self._running: dict[str, _Running] = {}
        self._adopted = False

    # ---- helpers --------------------------------------------------------------------------
    def log(self, line: str) -> None:
        self._log(line)

    def _probe(self) -> Machine:
        self._machine = self.backend.probe()
        return self._machine

    def _members(self, array: str) -> tuple[SyncMember, ...]:
        m = self._probe()
        a = m.array(array)
        if a is None:
            return ()
        out: list[SyncMember] = []
        for mem in a.members:
            disks = m.disks_under(mem.device) or (mem.device,)
            for d in disks:
                disk = m.disk(d)
                out.append(SyncMember(mem.device, d, disk.serial if disk else None))
        return tuple(out)

    def snapshot_disk(
        self, disk: str, *, reason: str, sync_id: int | None = None, serial_hint: str | None = None
    ) -> str | None:
        """Read SMART of one disk and store it; returns the serial used, or None if unavailable."""
        now = self.backend.now()
        reading = self.backend.smart(disk)
        if not reading.available:
            self.log(f"{disk}: {reading.reason or 'no SMART'}")
            return None
        d = self._machine.disk(disk) if self._machine else None
        serial = reading.serial or serial_hint or (d.serial if d else None)
        if not serial:
            serial = f"dev:{disk}"
        self.store.record_snapshot(
            serial,
            disk,
            counters_of(reading, d.size_bytes if d else None),
            ts=now,
            reason=reason,
            sync_id=sync_id,
        )
        return serial

    def snapshot_all(self, reason: str) -> int:
        m = self._probe()
        n = 0
        for d in m.disks:
            if d.kind != "disk":
                continue
            if self.snapshot_disk(d.name, reason=reason, serial_hint=d.serial):
                n += 1
        self.log(f"{reason} snapshot of {n} disk(s)")
        return n

    def _snapshot_members(
        self, members: tuple[SyncMember, ...], reason: str, sync_id: int
    ) -> tuple[SyncMember, ...]:
        seen: dict[str, str | None] = {}
        for mem in members:
            if mem.disk not in seen:
                seen[mem.disk] = self.snapshot_disk(
                    mem.disk, reason=reason, sync_id=sync_id, serial_hint=mem.serial
                )
        return tuple(SyncMember(m.device, m.disk, seen.get(m.disk) or m.serial) for m in members)

    # ---- the loop body ----------------------------------------------------------------------
    def tick(self) -> None:
        now = self.backend.now()
        if self._last_periodic is None:
            self.snapshot_all("start")
            self._last_periodic = now
        sample = self.backend.sample()
        live = {a.name: a for a in sample.arrays}
        if not self._adopted:
            self._adopt(live)
        for name, a in live.items():
            self._watch(name, a)
        for name in list(self._running):
            if name not in live:  # array stopped / vanished while syncing
                self._finish(name, "array vanished")
        if now - self._last_periodic >= self.interval_s:
            self.snapshot_all("periodic")
            self._last_periodic = now

    def _adopt(self, live: dict[str, MdLive]) -> None:
        """Syncs left open by a previous run: adopt if still going, else close them now."""
        self._adopted = True
        for ev in self.store.running_syncs():
            a = live.get(ev.array)
            if (
                a is not None
                and a.sync is not None
                and a.sync.active
                and a.sync.action == ev.action
            ):
                self._running[ev.array] = _Running(ev.id, ev.action, ev.members)
                self.log(
                    f"{ev.array}: {ev.action} still running (recorded since {ev.started_at:.0f})"
                )
            else:
                self._snapshot_members(ev.members, "sync-end", ev.id)
                self.store.end_sync(
                    ev.id, self.backend.now(), "ended while the monitor was not running"
                )
                self.log(f"{ev.array}: {ev.action} ended while the monitor was not running")

    def _watch(self, name: str, a: MdLive) -> None:
        active = (
            a.sync is not None and a.sync.active and a.sync.action not in ("pending", "delayed")
        )
        action = a.sync.action if a.sync is not None else "idle"
        cur = self._running.get(name)
        if cur is not None and (not active or action != cur.action):
            done = cur.last_fraction is not None and cur.last_fraction >= 0.99
            self._finish(name, "finished" if done or not active else f"became {action}")
            cur = None
        if active and cur is None:
            members = self._members(name)
            sid = self.store.start_sync(name, action, members, self.backend.now())
            members = self._snapshot_members(members, "sync-start", sid)
            self.store.set_sync_members(sid, members)
            self._running[name] = _Running(sid, action, members)
            self.log(f"{name}: {action} started; members {', '.join(m.device for m in members)}")
            cur = self._running[name]
        if cur is not None and a.sync is not None:
            f = a.sync.fraction
            if f is not None:
                cur.last_fraction = f

    def _finish(self, name: str, outcome: str) -> None:
        cur = self._running.pop(name)
        self._snapshot_members(cur.members, "sync-end", cur.sync_id)
        self.store.end_sync(cur.sync_id, self.backend.now(), outcome)
        from app.wear.delta import sync_wear

        ev = self.store.sync(cur.sync_id)
        self.log(f"{name}: {cur.action} {outcome}")
        if ev is not None:
            for line in sync_wear(self.store, ev).lines():
                self.log(f"{name}: {line}")
