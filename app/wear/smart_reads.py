"""The SMART reads the wear recorder asks for: :class:`SmartRead` (an effect), the order a sweep
reads the disks in, and :func:`take_snapshot`, which runs one read and stores it as a snapshot
(in a thread of its own in ``raidman monitor``, in a worker in the TUI)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from app.backend import Backend
from app.model import Disk, Machine
from app.model.smart import SmartReading
from app.model.smart_tables import last_self_test, self_test_json
from app.model.smart_units import bytes_written, endurance_used_percent, wear_used_percent
from app.rules.smart import CRC_ERRORS
from app.wear.snapshots import SnapshotStore


@dataclass(frozen=True, slots=True)
class SmartRead:
    """Read one disk's SMART and store it as a snapshot."""

    disk: str
    reason: str  # start, periodic, sync-start, sync-end
    sync_id: int | None = None
    serial_hint: str | None = None
    capacity_bytes: int | None = None


KernelCount = tuple[int, float]  # (cumulative bytes written by /proc/diskstats, sample time)


def counters_of(
    reading: SmartReading, capacity_bytes: int | None = None, kernel: KernelCount | None = None
) -> dict[str, Any]:
    """The JSON stored with a snapshot. ``kernel``: the disk's kernel write counter from the
    last sample when the reading came back, so that a "before" read after a sync began can
    say how much the sync had already written (app.wear.delta)."""
    w = bytes_written(reading)
    wear = wear_used_percent(reading)
    return {
        "kernel_bytes_written": kernel[0] if kernel is not None else None,
        "kernel_at": kernel[1] if kernel is not None else None,
        "bytes_written": w.bytes if w else None,
        "raw": w.raw if w else None,
        "unit": w.unit if w else None,
        "counter": w.source if w else None,
        "unit_bytes": w.unit_bytes if w else None,
        "wear_used": wear.used_percent if wear else None,
        # wear_used, or bytes written against the model's rated TBW where that is larger
        "endurance_used": endurance_used_percent(reading),
        "power_on_hours": reading.power_on_hours,
        "temperature_c": reading.temperature_c,
        "capacity_bytes": reading.capacity_bytes or capacity_bytes,
        "health": reading.health,
        **log_counters(reading),
    }


def log_counters(reading: SmartReading) -> dict[str, Any]:
    """What the state database keeps of the SMART logs with each snapshot: the CRC error count
    (app/rules/smart_logs.py compares the first one with now), the newest finished self-test
    and a running test's remaining percent."""
    crc = reading.attribute(CRC_ERRORS)
    last = last_self_test(reading)
    return {
        "crc_errors": crc.raw if crc is not None else None,
        "self_test": self_test_json(last) if last is not None else None,
        "self_test_remaining": reading.self_test_remaining,
    }


def take_snapshot(
    backend: Backend,
    store: SnapshotStore,
    read: SmartRead,
    lock: AbstractContextManager[object] | None = None,
    on_reading: Callable[[str, SmartReading], None] | None = None,
    kernel: Callable[[str], KernelCount | None] | None = None,
) -> str | None:
    """Run one :class:`SmartRead`: returns the serial stored under, or None (no SMART).
    ``lock`` (the store's) is held only while writing, never during the slow read;
    ``on_reading(disk, reading)`` gets every reading (the TUI's audit judges SMART from them);
    ``kernel(disk)`` (``Session.kernel_count``) the disk's kernel write counter, asked for as
    the reading comes back and stored with it."""
    reading = backend.smart(read.disk)
    count = kernel(read.disk) if kernel is not None else None
    if on_reading is not None:
        on_reading(read.disk, reading)
    if not reading.available:
        return None
    serial = reading.serial or read.serial_hint or f"dev:{read.disk}"
    with lock if lock is not None else nullcontext():
        store.record_snapshot(
            serial,
            read.disk,
            counters_of(reading, read.capacity_bytes, count),
            ts=backend.now(),
            reason=read.reason,
            sync_id=read.sync_id,
        )
    return serial


def sweep_order(machine: Machine) -> list[Disk]:
    """The machine's disks in the order a SMART sweep reads them: members of an array whose
    sync is running first (the sync began before their "before" could be read: the sooner the
    better), then members of other arrays (a sync may start on them any moment), then the rest;
    the probe's order within each."""
    rank: dict[str, int] = {}
    for a in machine.arrays:
        r = 0 if a.sync is not None and a.sync.action not in ("idle", "frozen") else 1
        for m in a.members:
            for d in machine.disks_under(m.device):
                rank[d] = min(rank.get(d, 2), r)
    return sorted(machine.disks, key=lambda d: rank.get(d.name, 2))
