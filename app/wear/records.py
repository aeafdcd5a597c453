"""What the wear database holds, as raidman reads it back: a SMART counter snapshot, a recorded
sync and its members, and how a row becomes one (a row out of shape raises, see :mod:`app.wear.dbshape`)."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.wear.check_window import CheckWindow, parse_window
from app.wear.dbshape import MAX_TEXT, BadRow, counter, int_col, json_col, text_col, time_col
from app.wear.forecast import RecordedForecast, parse_forecast


@dataclass(frozen=True, slots=True)
class SyncMember:
    device: str  # kernel name of the member (nvme0n1p1, sdd)
    disk: str  # the whole disk under it (nvme0n1, sdd)
    serial: str | None = None


@dataclass(frozen=True)
class Snapshot:
    id: int
    ts: float
    serial: str
    device: str
    reason: str  # start, periodic, sync-start, sync-end
    sync_id: int | None
    counters: Mapping[str, Any] = field(default_factory=dict)

    @property
    def bytes_written(self) -> int | None:
        v = self.counters.get("bytes_written")
        return v if isinstance(v, int) else None

    @property
    def wear_used(self) -> int | None:
        v = self.counters.get("wear_used")
        return v if isinstance(v, int) else None

    @property
    def capacity_bytes(self) -> int | None:
        v = self.counters.get("capacity_bytes")
        return v if isinstance(v, int) else None

    @property
    def kernel_bytes_written(self) -> int | None:
        """The disk's kernel write counter (/proc/diskstats, cumulative bytes) from the last
        sample when this reading came back; None for snapshots stored before it was kept."""
        v = self.counters.get("kernel_bytes_written")
        return v if isinstance(v, int) and v >= 0 else None

    @property
    def unit_bytes(self) -> int | None:
        """Bytes per step of the write counter (NVMe: 512,000); for snapshots stored before
        it was kept, bytes ÷ raw count."""
        v = self.counters.get("unit_bytes")
        if isinstance(v, int) and v > 0:
            return v
        raw, b = self.counters.get("raw"), self.bytes_written
        if isinstance(raw, int) and raw > 0 and b is not None and b % raw == 0:
            return b // raw
        return None

    @property
    def counter(self) -> str | None:
        """Which SMART counter the bytes come from ("nvme:data_units_written", "241 ...")."""
        v = self.counters.get("counter")
        return v if isinstance(v, str) else None


@dataclass(frozen=True)
class SyncEvent:
    id: int
    array: str
    action: str
    started_at: float
    ended_at: float | None
    outcome: str | None  # finished, interrupted, array stopped, became X; None while running
    members: tuple[SyncMember, ...]
    array_uuid: str | None = None  # md's array UUID (None: recorded before schema 2)
    fraction: float | None = None  # how far it got (last progress seen)
    # the kernel's cumulative bytes written per device (/proc/diskstats, one line per disk and
    # per partition): "start" at the last sample before the sync began, "end" at the first
    # after it ended. Kept for each member device (what the sync wrote to it, apart from what
    # another array on other partitions of the same disk wrote) and each member's whole disk
    # (the span SMART counts); records made before per-member counting hold whole disks only
    kernel_start: Mapping[str, int] = field(default_factory=dict)
    kernel_end: Mapping[str, int] = field(default_factory=dict)
    # device -> bytes, at the start: each member's own size and its whole disk's
    capacities: Mapping[str, int] = field(default_factory=dict)
    # what the sync model said when the sync began (None: a record made before forecasts were)
    forecast: RecordedForecast | None = None
    # a check/repair's window (app.wear.checks.CheckWindow); None for other syncs
    window: CheckWindow | None = None
    # ran between two looks: what showed it ("nvme3n1 in sync, md127 degraded 1 -> 0"); its
    # times are the looks around it. None: watched while it ran
    seen_after: str | None = None

    def kernel_written(self, device: str) -> int | None:
        """Bytes the kernel wrote to ``device`` (a member, or its whole disk: all its
        partitions) during the sync (exact, sector granularity); while running: up to the last
        sample recorded."""
        a, b = self.kernel_start.get(device), self.kernel_end.get(device)
        return None if a is None or b is None else max(0, b - a)

    def member_written(self, m: SyncMember) -> tuple[int | None, bool]:
        """(the kernel's bytes written to the member during the sync, whether that is the
        member's own count). A record made before per-member counting kept only the whole
        disk's counter: that one then, said as the whole disk's (False)."""
        own = self.kernel_written(m.device)
        if own is not None or m.device == m.disk:
            return own, True
        return self.kernel_written(m.disk), False

    def member_size(self, m: SyncMember) -> int | None:
        """The member's own size (a partition's, not its disk's); None when not kept."""
        return self.capacities.get(m.device)

    @property
    def running(self) -> bool:
        return self.ended_at is None


def snapshot_from_row(r: sqlite3.Row) -> Snapshot:
    counters = json_col(r, "counters", dict)
    return Snapshot(
        id=int_col(r, "id"),
        ts=time_col(r, "ts"),
        serial=text_col(r, "serial"),
        device=text_col(r, "device"),
        reason=text_col(r, "reason"),
        sync_id=int_col(r, "sync_id", none_ok=True),
        counters=counters if isinstance(counters, dict) else {},
    )


def sync_event_from_row(r: sqlite3.Row) -> SyncEvent:
    members: list[SyncMember] = []
    for m in json_col(r, "members", list) or ():
        if not isinstance(m, list) or len(m) != 3:
            raise BadRow("members: not [device, disk, serial] triples")
        if not all(isinstance(x, str) for x in m[:2]) or not isinstance(m[2], str | None):
            raise BadRow("members: not text")
        members.append(SyncMember(m[0], m[1], m[2] if m[2] else None))
    start: dict[str, int] = {}
    end: dict[str, int] = {}
    cap: dict[str, int] = {}
    kw = json_col(r, "kernel_writes", dict) or {}
    for key, dest in (("start", start), ("end", end), ("capacity", cap)):
        part = kw.get(key)
        if isinstance(part, dict):
            dest.update({str(k): v for k, v in part.items() if counter(v)})
    frac = r["fraction"]
    uuid = r["array_uuid"]
    ended = r["ended_at"]
    return SyncEvent(
        id=int_col(r, "id"),
        array=text_col(r, "array_name"),
        action=text_col(r, "action"),
        started_at=time_col(r, "started_at"),
        ended_at=None if ended is None else time_col(r, "ended_at"),
        outcome=None if r["outcome"] is None else text_col(r, "outcome"),
        members=tuple(members),
        array_uuid=uuid if isinstance(uuid, str) and len(uuid) <= MAX_TEXT else None,
        fraction=float(frac)
        if isinstance(frac, int | float) and not isinstance(frac, bool) and math.isfinite(frac)
        else None,
        kernel_start=start,
        kernel_end=end,
        capacities=cap,
        forecast=parse_forecast(r["forecast"]),
        window=parse_window(r["check_window"]),
        seen_after=_seen(r),
    )


def _seen(r: sqlite3.Row) -> str | None:
    try:
        v = r["seen"]
    except IndexError:  # a row from before schema 5 read without migrating
        return None
    return v if isinstance(v, str) and v and len(v) <= MAX_TEXT else None
