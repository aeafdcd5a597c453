"""Forecasts a plan made for the syncs it starts, kept for another process to take: ``raidman
apply`` runs in one process, ``raidman monitor`` (which records the sync) in another.

``expected_forecasts.json`` beside the wear database (the state directory, or a watched host's
own), read and written only through :mod:`app.statefiles` (owner and mode checked, no symlink
followed, atomic replace). Each entry: the array's kernel name, its UUID where known, the
forecast (``RecordedForecast`` JSON), when it was made and until when it is kept. ``apply`` puts one in right before the
step that starts the sync; the recorder takes it (once: it is then deleted) when it sees that
array's sync begin. An entry past its time is dropped unused (a plan that failed before its
sync began must not lend its forecast to a later, unrelated sync): ``EXPIRES_S`` after it was
made, plus the wait the forecast expects where the sync waits for another array's on the same
disks (md's ``resync=DELAYED``: it begins when that one ends, ``md_do_sync``'s
``mddev->curr_resync = MD_RESYNC_DELAYED`` loop).

The file is state the owner can write: an entry out of shape costs that entry, an unreadable or
unsafe file costs every entry (a note, never an error); the recorder then keeps the model's.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app import statefiles
from app.parsers.safe import load_json
from app.statefiles import StateFileError
from app.wear.forecast import RecordedForecast, parse_forecast

EXPECTED_FILE = "expected_forecasts.json"
EXPIRES_S = 600.0  # a sync begins seconds after the step that starts it; ten minutes is ample
MAX_WAIT_S = 7 * 86400.0  # a forecast wait longer than this is not waited for
MAX_ENTRIES = 64
MAX_BYTES = 1 << 20
MAX_NAME = 64


@dataclass(frozen=True, slots=True)
class Expected:
    array: str
    uuid: str | None
    made_at: float
    forecast: RecordedForecast
    expires_at: float

    def fresh(self, now: float) -> bool:
        return self.made_at - 5.0 <= now <= self.expires_at

    def to_json(self) -> dict[str, Any]:
        return {
            "array": self.array,
            "uuid": self.uuid,
            "made_at": self.made_at,
            "expires_at": self.expires_at,
            "forecast": self.forecast.dumps(),
        }


def _name(v: object) -> str:
    if not isinstance(v, str) or not v or len(v) > MAX_NAME or not v.isprintable():
        raise ValueError("not an array name")
    return v


def _time(v: object) -> float:
    if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v):
        raise ValueError("not a time")
    return float(v)


def expires(now: float, wait_s: float | None) -> float:
    """Until when a forecast made at ``now`` is kept: ``EXPIRES_S``, plus the expected wait."""
    wait = wait_s if wait_s is not None and math.isfinite(wait_s) and wait_s > 0 else 0.0
    return now + EXPIRES_S + min(wait, MAX_WAIT_S)


def _entry(raw: object) -> Expected:
    if not isinstance(raw, dict):
        raise ValueError("not an object")
    uuid = raw.get("uuid")
    made, until = _time(raw.get("made_at")), _time(raw.get("expires_at"))
    if not made <= until <= made + EXPIRES_S + MAX_WAIT_S:
        raise ValueError("kept for too long")
    fc = parse_forecast(raw.get("forecast"))
    if fc is None:
        raise ValueError("no forecast")
    name = _name(raw.get("array"))
    return Expected(name, None if uuid is None else _name(uuid), made, fc, until)


class ExpectedForecasts:
    """The file of expected forecasts in ``directory``. Never raises on reading; ``put``
    raises :class:`StateFileError` when the file cannot be written (the caller says so: the
    record then keeps the model's forecast)."""

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / EXPECTED_FILE
        self.notes: list[str] = []

    def _load(self) -> list[Expected]:
        try:
            text = statefiles.read_text(self.path, max_bytes=MAX_BYTES)
        except StateFileError as e:
            self.notes.append(f"{e}; expected forecasts ignored")
            return []
        if text is None:
            return []
        try:
            raw = load_json(text, str(self.path))
        except ValueError as e:
            self.notes.append(f"{self.path} unreadable ({e}); expected forecasts ignored")
            return []
        if not isinstance(raw, list):
            self.notes.append(f"{self.path} is not a list; expected forecasts ignored")
            return []
        out: list[Expected] = []
        for item in raw[:MAX_ENTRIES]:
            try:
                out.append(_entry(item))
            except ValueError as e:  # a bad entry costs that entry
                self.notes.append(f"{self.path}: an expected forecast ignored ({e})")
        return out

    def _save(self, entries: list[Expected]) -> None:
        data = [e.to_json() for e in entries[-MAX_ENTRIES:]]
        statefiles.write_text(self.path, json.dumps(data, indent=1))

    def put(
        self,
        array: str,
        uuid: str | None,
        forecast: RecordedForecast,
        now: float,
        *,
        wait_s: float | None = None,
    ) -> None:
        """Expect ``forecast`` for the next sync of ``array`` (one per array: the newest wins);
        ``wait_s``: how long the forecast expects it to wait for another array's sync."""
        keep = [e for e in self._load() if e.array != array and e.fresh(now)]
        entry = Expected(_name(array), uuid or None, now, forecast, expires(now, wait_s))
        self._save([*keep, entry])

    def withdraw(self, array: str) -> None:
        """The step that was to start ``array``'s sync failed: its forecast is not kept."""
        entries = self._load()
        keep = [e for e in entries if e.array != array]
        if len(keep) != len(entries):
            try:
                self._save(keep)
            except StateFileError as e:
                self.notes.append(str(e))

    def take(self, array: str, uuid: str | None, now: float) -> RecordedForecast | None:
        """The forecast expected for ``array``'s sync that began at ``now`` (and whose UUID, when
        both are known, is ``uuid``), removed from the file; None when there is none (or it
        expired, or was made for another array of that name)."""
        if not self.path.parent.is_dir() or not self.path.exists():
            return None  # the common case, at every sync start: no file
        entries = self._load()
        found: Expected | None = None
        keep: list[Expected] = []
        for e in entries:
            fresh = e.fresh(now)
            same = e.array == array and (not e.uuid or not uuid or e.uuid == uuid)
            if fresh and same and found is None:
                found = e
            elif fresh and e.array != array:
                keep.append(e)
        if len(keep) != len(entries):
            try:
                self._save(keep)
            except StateFileError as e:
                self.notes.append(str(e))
        return found.forecast if found is not None else None
