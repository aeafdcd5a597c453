"""The forecast a recorded sync keeps: what the sync model said when the sync began, beside what
happened ("forecast 1h 05m / 256.0 MiB · took 1h 02m / 255.0 MiB").

Made by :func:`model_forecast` from the array's facts at the moment raidman saw the sync start
(``app.model.sync_model.forecast_sync``), or handed over by the plan that started it
(``WearRecorder.expect_forecast``). Stored as JSON in the record (``sync_events.forecast``) and
read back bounded: a value out of shape is no forecast, never an error.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.format import duration, human_bytes
from app.model import Machine
from app.model.devices import SyncStatus
from app.model.sync_model import SyncForecast, component_bytes, effective_limits, forecast_sync
from app.sync.dm_raid import lv_forecast, raid_lv

MAX_JSON = 256 * 1024  # a stored forecast larger than this is not read
MAX_MEMBERS = 4096
MAX_TEXT = 400
SOURCES = ("model", "plan")


@dataclass(frozen=True, slots=True)
class ForecastWrite:
    device: str
    bytes_written: int  # the high end of the range (what the sync may write at most)
    bytes_written_low: int  # == bytes_written where the model is exact


@dataclass(frozen=True, slots=True)
class RecordedForecast:
    action: str
    duration_s: float | None  # at the forecast's rate (the limit's, where the members' is unknown)
    duration_s_high: float | None  # None: the members' speed was unknown (it may take longer)
    speed_kib_s: int | None
    speed_why: str
    members: tuple[ForecastWrite, ...]
    source: str = "model"  # "model": when raidman saw the sync start; "plan": the plan's
    why: str = ""
    # a sync first seen part-way (raidman started during it): how far it was then; the
    # forecast is of the rest (the model's duration from there, its bytes × the share left)
    from_fraction: float | None = None

    @classmethod
    def of(
        cls, fc: SyncForecast, source: str = "model", from_fraction: float | None = None
    ) -> RecordedForecast:
        left = 1.0 - from_fraction if from_fraction else 1.0
        return cls(
            action=fc.action,
            duration_s=fc.duration_s_low,
            duration_s_high=fc.duration_s_high,
            speed_kib_s=fc.speed_kib_s,
            speed_why=fc.speed_why,
            members=tuple(
                ForecastWrite(m.device, round(m.bytes_high * left), round(m.bytes_low * left))
                for m in fc.members
            ),
            source=source,
            why=fc.why,
            from_fraction=from_fraction or None,
        )

    @property
    def bytes_written(self) -> int:
        return sum(m.bytes_written for m in self.members)

    @property
    def bytes_written_low(self) -> int:
        return sum(m.bytes_written_low for m in self.members)

    def to_json(self) -> dict[str, Any]:
        """``{"duration_s", "members": [{"device", "bytes_written"}], ...}`` (issue 22's shape,
        with the range's low end, the rate and where the forecast came from beside it)."""
        return {
            "duration_s": self.duration_s,
            "members": [
                {
                    "device": m.device,
                    "bytes_written": m.bytes_written,
                    "bytes_written_low": m.bytes_written_low,
                }
                for m in self.members
            ],
            "duration_s_high": self.duration_s_high,
            "speed_kib_s": self.speed_kib_s,
            "speed_why": self.speed_why,
            "action": self.action,
            "source": self.source,
            "why": self.why,
            "from_fraction": self.from_fraction,
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)

    def text(self) -> str:
        """ "1h 05m / 256.0 MiB" (a range where the model gives one: "0 B–512.0 MiB")."""
        if self.duration_s is None:
            d = "?"
        elif self.duration_s_high is not None and self.duration_s_high > self.duration_s * 1.05:
            d = f"{duration(self.duration_s)}–{duration(self.duration_s_high)}"
        else:
            d = duration(self.duration_s)
        lo, hi = self.bytes_written_low, self.bytes_written
        b = human_bytes(hi) if lo == hi else f"{human_bytes(lo)}–{human_bytes(hi)}"
        if self.from_fraction:
            return f"{d} / {b} (from {self.from_fraction:.0%} on)"
        return f"{d} / {b}"


def _num(v: object, *, integer: bool) -> float | int | None:
    if v is None or isinstance(v, bool):
        return None
    if integer and isinstance(v, int) and 0 <= v < 1 << 62:
        return v
    if not integer and isinstance(v, int | float) and math.isfinite(v) and 0 <= v < 1e12:
        return float(v)
    raise ValueError("not a number in range")


def _text(v: object) -> str:
    if not isinstance(v, str) or len(v) > MAX_TEXT:
        raise ValueError("not a short text")
    return "".join(c if c.isprintable() else "?" for c in v)


def parse_forecast(raw: object) -> RecordedForecast | None:
    """A stored forecast, or None: none kept (a record made before forecasts were), or out of
    shape (too large, wrong types, numbers out of range)."""
    if not isinstance(raw, str) or not raw or len(raw) > MAX_JSON:
        return None
    try:
        d = json.loads(raw)
        if not isinstance(d, dict):
            return None
        ms = d.get("members")
        if not isinstance(ms, list) or len(ms) > MAX_MEMBERS:
            return None
        members = []
        for m in ms:
            if not isinstance(m, dict):
                return None
            hi = _num(m.get("bytes_written"), integer=True)
            lo = _num(m.get("bytes_written_low", hi), integer=True)
            if hi is None:
                return None
            members.append(ForecastWrite(_text(m.get("device")), int(hi), int(lo or 0)))
        dur, high = (
            _num(d.get("duration_s"), integer=False),
            _num(d.get("duration_s_high"), integer=False),
        )
        speed = _num(d.get("speed_kib_s"), integer=True)
        frac = _num(d.get("from_fraction"), integer=False)
        if frac is not None and frac >= 1:
            return None
        source = d.get("source", "model")
        return RecordedForecast(
            action=_text(d.get("action", "")),
            duration_s=None if dur is None else float(dur),
            duration_s_high=None if high is None else float(high),
            speed_kib_s=None if speed is None else int(speed),
            speed_why=_text(d.get("speed_why", "")),
            members=tuple(members),
            source=source if source in SOURCES else "model",
            why=_text(d.get("why", "")),
            from_fraction=float(frac) if frac else None,
        )
    except (ValueError, RecursionError):
        return None


def member_bytes(machine: Machine, device: str, size_kib: int | None) -> int | None:
    """A member's size in the array (md/dev-*/size), else its device's size."""
    if size_kib:
        return size_kib * 1024
    size = getattr(machine.device(device), "size_bytes", None)
    return size if isinstance(size, int) and size > 0 else None


def model_forecast(
    machine: Machine | None,
    array: str,
    action: str,
    sync: SyncStatus | None,
    *,
    initial: bool = False,
    targets: Sequence[str] = (),
    from_start: bool = True,
) -> SyncForecast | None:
    """The sync model's forecast for a sync of ``array`` as it starts: the array's level,
    layout and members in slot order (faulty ones left out) as probed, the limits in force
    (the array's own where set); ``from_start``: of the whole sync (a record whose window began
    before it), else of the rest from where ``sync`` stands (one first seen part-way); None
    when the probe does not know the array or its members yet."""
    a = machine.array(array) if machine is not None else None
    lv = raid_lv(machine, array) if a is None else None
    if machine is not None and lv is not None:  # a raid LV ("VG/LV"): md's model as well
        return lv_forecast(machine, lv, action, sync, from_start=from_start)
    if machine is None or a is None or not a.raid_disks:
        return None
    slotted = sorted(
        (m for m in a.members if m.slot is not None and m.role != "faulty"),
        key=lambda m: m.slot if m.slot is not None else 0,
    )
    members: list[tuple[str, int]] = []
    comp = component_bytes(a)
    for m in slotted:
        b = member_bytes(machine, m.device, m.size_kib)
        if b is None:
            return None
        members.append((m.device, min(b, comp) if comp else b))
    if not members:
        return None
    lo, hi = effective_limits(
        a,
        sync.min_speed_kib_s if sync is not None else None,
        sync.max_speed_kib_s if sync is not None else None,
    )
    return forecast_sync(
        array=array,
        level=a.level,
        raid_disks=a.raid_disks,
        layout=a.layout,
        action=action,
        members=members,
        targets=tuple(targets) or (sync.targets if sync is not None else ()),
        initial=initial,
        external_metadata=a.is_external,
        limit_kib_s=(lo, hi),
        done_sectors=(sync.done_sectors or 0) if sync is not None and not from_start else 0,
        limit_local=a.speed_max_local is not None,
    )
