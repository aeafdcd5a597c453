"""JSON pieces for ``raidman report --json`` (called by app.report)."""

from __future__ import annotations

from typing import Any

from app.model.smart import SmartReading
from app.wear.delta import sync_wear
from app.wear.snapshots import SnapshotStore
from app.wear.units import bytes_written, wear_used_percent


def smart_json(reading: SmartReading) -> dict[str, Any]:
    """{"available","reason","health","bytes_written","wear_used_percent","temperature_c","power_on_hours"}."""
    w = bytes_written(reading) if reading.available else None
    wear = wear_used_percent(reading) if reading.available else None
    return {
        "available": reading.available,
        "reason": reading.reason,
        "health": reading.health,
        "bytes_written": w.bytes if w else None,
        "wear_used_percent": wear.used_percent if wear else None,
        "temperature_c": reading.temperature_c,
        "power_on_hours": reading.power_on_hours,
    }


def syncs_json(store: SnapshotStore, array: str) -> list[dict[str, Any]]:
    """Each recorded sync of ``array``: action, start, end (null while running), outcome and per
    member the bytes written during it (null when unknown)."""
    out: list[dict[str, Any]] = []
    for ev in store.syncs_for(array):
        sw = sync_wear(store, ev)
        out.append(
            {
                "action": ev.action,
                "start": ev.started_at,
                "end": ev.ended_at,
                "outcome": ev.outcome,
                "members": [
                    {
                        "device": m.member.device,
                        "disk": m.member.disk,
                        "serial": m.member.serial,
                        "bytes_written": m.bytes_written,
                        "capacity_share": m.capacity_share,
                        "wear_points": m.wear_points,
                    }
                    for m in sw.members
                ],
            }
        )
    return out
