"""JSON pieces for ``raidman report --json`` (called by app.report)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.format import duration
from app.model.smart import SmartReading
from app.model.smart_tables import smart_tables_json
from app.model.smart_units import bytes_written, tbw_used, wear_used_percent
from app.wear.delta import sync_wear
from app.wear.plot import newest_first, span_text
from app.wear.snapshots import SnapshotStore


def smart_json(reading: SmartReading) -> dict[str, Any]:
    """{"available","reason","health","bytes_written","wear_used_percent","rated_tbw",
    "rated_tbw_used_percent","rated_tbw_source","temperature_c","power_on_hours",
    "protocol", "attributes", "nvme_health", "self_tests", "self_test_remaining",
    "error_count", "errors"} (the last ones: app.model.smart_tables)."""
    w = bytes_written(reading) if reading.available else None
    wear = wear_used_percent(reading) if reading.available else None
    tbw = tbw_used(reading)
    return {
        "available": reading.available,
        "reason": reading.reason,
        "health": reading.health,
        "bytes_written": w.bytes if w else None,
        "wear_used_percent": wear.used_percent if wear else None,
        # bytes written against the model's rated TBW (app.model.endurance); null = not listed
        "rated_tbw": tbw.rating.tbw if tbw else None,
        "rated_tbw_used_percent": tbw.used_percent if tbw else None,
        "rated_tbw_source": tbw.rating.source if tbw else None,
        "temperature_c": reading.temperature_c,
        "power_on_hours": reading.power_on_hours,
        **smart_tables_json(reading),
    }


KERNEL_COUNTER = "/proc/diskstats"  # sectors written per device, read at every sample


def _share(n: int | None, cap: int | None) -> float | None:
    return None if n is None or not cap else n / cap


def syncs_json(
    store: SnapshotStore, array: str, array_uuid: str | None = None
) -> list[dict[str, Any]]:
    """Each recorded sync of the array (by UUID when known): action, start, end (null while
    running), outcome (finished, interrupted, array stopped, became ACTION), fraction reached,
    ``array_uuid``, and per member the bytes written during it, twice:
    ``kernel_bytes_written`` from the kernel's write counter of the member device itself
    (/proc/diskstats, its own line: a partition's, apart from another array's writes to other
    partitions of the same disk; exact to the sector, the sync's window from the last sample
    before to the first after), with ``member_bytes`` (the member's own size) and
    ``kernel_capacity_share`` (of it); ``kernel_scope`` says "member", or "whole disk" for a
    record made before per-member counting (then the share is of the disk's capacity); and
    ``bytes_written`` from the SMART counter of the member's whole disk (``smart_scope``
    "whole disk": all its partitions; ``disk_bytes`` its capacity, ``capacity_share`` of it;
    ``disk_kernel_bytes_written`` the kernel's count of the whole disk) in the device's unit
    (``smart_unit``: NVMe data units of 512,000 B, ATA LBAs or vendor units); null when
    unknown. Which is which is said per member: ``kernel_counter`` ("/proc/diskstats"), ``smart_counter`` (the device's
    counter, e.g. "nvme:data_units_written"), ``smart_unit_bytes`` (its step) and
    ``smart_coarser_than_written`` (the step is larger than what was written: SMART cannot
    confirm the amount, the kernel's figure stands); ``smart_pair`` whether SMART was read on
    both sides of the sync; ``smart_start_after_sync_began`` when its "before" was read only
    after the sync began (a sync that started as the watcher did): ``bytes_written`` then counts
    from that reading on, ``kernel_bytes_before_smart_start`` is what the kernel counted written
    from the sync's start to that reading (null: unknown) and ``bytes_written_corrected`` the
    sum (``capacity_share`` is of that). ``forecast``: ``{"duration_s", "members": [{"device",
    "bytes_written"}], ...}`` as made when the sync began (app.wear.forecast), and
    ``forecast_vs_actual`` the line that sets it beside what happened."""
    out: list[dict[str, Any]] = []
    for ev in store.syncs_for(array, array_uuid):
        sw = sync_wear(store, ev)
        members = []
        for m in sw.members:
            k, size, own = sw.kernel_written(m)
            members.append(
                {
                    "device": m.member.device,
                    "disk": m.member.disk,
                    "serial": m.member.serial,
                    "member_bytes": size if own else None,
                    "kernel_bytes_written": k,
                    "kernel_capacity_share": _share(k, size),
                    "kernel_scope": "member" if own else "whole disk",
                    "kernel_counter": KERNEL_COUNTER,
                    "disk_kernel_bytes_written": ev.kernel_written(m.member.disk),
                    "disk_bytes": m.capacity_bytes or ev.capacities.get(m.member.disk),
                    "smart_scope": "whole disk",
                    "bytes_written": m.bytes_written,
                    "smart_counter": m.counter,
                    "smart_unit": m.end.counters.get("unit") if m.end is not None else None,
                    "smart_unit_bytes": m.unit_bytes,
                    "smart_coarser_than_written": sw.smart_coarse(m),
                    "smart_pair": m.start is not None and m.end is not None,
                    # SMART's "before" read after the sync began: bytes_written counts from
                    # then on; the kernel's count up to that reading, and the two together
                    "smart_start_after_sync_began": m.start_late,
                    "kernel_bytes_before_smart_start": m.written_before_start,
                    "bytes_written_corrected": m.corrected_bytes,
                    "capacity_share": m.capacity_share,
                    "wear_points": m.wear_points,
                }
            )
        out.append(
            {
                "array": ev.array,
                "array_uuid": ev.array_uuid,
                "action": ev.action,
                "start": ev.started_at,
                "end": ev.ended_at,
                "outcome": ev.outcome,
                "fraction": ev.fraction,
                # ran between two looks: what showed it (its start and end are those looks)
                "seen_after_the_fact": ev.seen_after,
                "members": members,
                # what the sync model (or the plan that started it) said as it began: null for
                # a record made before forecasts were, or an array the probe never showed
                "forecast": ev.forecast.to_json() if ev.forecast is not None else None,
                "forecast_vs_actual": sw.forecast_line(),
            }
        )
    return out


TEXT_SYNCS_PER_ARRAY = 5  # ``raidman report``: the newest few per array (--json has them all)


def syncs_text(
    store: SnapshotStore, arrays: Sequence[tuple[str, str | None]], now: float | None = None
) -> list[str]:
    """``raidman report``'s "Recorded syncs": per array (name, UUID) its newest recorded syncs,
    each with the forecast made as it began beside what happened, then per member the kernel's
    count of the member itself and SMART's of its whole disk (the lines of the Wear tab)."""
    out: list[str] = []
    for name, uuid in arrays:
        wear = newest_first(sync_wear(store, ev) for ev in store.syncs_for(name, uuid))
        for w in wear[:TEXT_SYNCS_PER_ARRAY]:
            s = w.sync
            head = f"{name}  {s.action} {span_text(s.started_at, s.ended_at)}"
            if s.ended_at is not None:
                head += f" ({duration(s.ended_at - s.started_at)})"
            out.append(f"{head} · {s.outcome or 'running'}")
            out.extend(f"  {ln}" for ln in w.lines(now))
        if len(wear) > TEXT_SYNCS_PER_ARRAY:
            out.append(f"  ({len(wear) - TEXT_SYNCS_PER_ARRAY} older: raidman report --json)")
    return out
