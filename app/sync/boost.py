""" "Boost this sync": raise the md speed limits (and stripe cache) while an array syncs, then put
the previous values back when the sync ends — even if raidman was closed in between.

What must be restored is written to ``<state dir>/boost.json`` *before* anything is raised, so a
crash between the two leaves a record that restores to the values read beforehand. Building plans
is pure; running them is the executor's job.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from app.model import levels
from app.model.live import LiveSample
from app.paths import state_dir
from app.plans.plan import Plan, Step

ReadText = Callable[[str], str | None]

SYSCTL_MIN = "dev.raid.speed_limit_min"
SYSCTL_MAX = "dev.raid.speed_limit_max"
DEFAULT_BOOST_MIN_KIB = 200_000  # the source article's values (echo 200000 > speed_limit_min)
DEFAULT_BOOST_MAX_KIB = 500_000  # (echo 500000 > speed_limit_max)
DEFAULT_BOOST_STRIPE_CACHE = 8192  # seed 001: 256 -> 8192 raised RAID-6 rebuild 25 -> 66 MB/s
PAGE = 4096


def sysctl_path(key: str) -> str:
    return "/proc/sys/" + key.replace(".", "/")


def stripe_cache_path(array: str) -> str:
    return f"/sys/block/{array}/md/stripe_cache_size"


def stripe_cache_cost_bytes(pages: int, members: int) -> int:
    """Memory the stripe cache takes: pages × 4 KiB × member devices (md.rst)."""
    return pages * PAGE * members


@dataclass(frozen=True, slots=True)
class Setting:
    """One tunable: a sysctl key or a sysfs file."""

    kind: str  # "sysctl" | "sysfs"
    key: str  # "dev.raid.speed_limit_max" | "/sys/block/md127/md/stripe_cache_size"

    @property
    def path(self) -> str:
        return sysctl_path(self.key) if self.kind == "sysctl" else self.key

    @property
    def is_global(self) -> bool:
        return self.kind == "sysctl"

    def step(self, value: str, why: str) -> Step:
        if self.kind == "sysctl":
            return Step(("sysctl", "-w", f"{self.key}={value}"), why)
        return Step(("tee", self.key), why, stdin=f"{value}\n")

    def as_str(self) -> str:
        return f"{self.kind}:{self.key}"

    @classmethod
    def parse(cls, s: str) -> Setting:
        kind, _, key = s.partition(":")
        if kind not in ("sysctl", "sysfs") or not key:
            raise ValueError(f"not a setting: {s!r}")
        return cls(kind, key)


@dataclass(frozen=True, slots=True)
class BoostRecord:
    array: str
    action: str  # the sync being boosted
    started_at: float  # wall clock
    previous: dict[str, str] = field(default_factory=dict)  # Setting.as_str() -> value to restore
    applied: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, object]) -> BoostRecord:
        prev = d.get("previous") or {}
        applied = d.get("applied") or {}
        if not isinstance(prev, dict) or not isinstance(applied, dict):
            raise ValueError("bad boost record")
        started = d.get("started_at", 0.0)
        return cls(
            array=str(d["array"]),
            action=str(d.get("action", "")),
            started_at=float(started) if isinstance(started, (int, float, str)) else 0.0,
            previous={str(k): str(v) for k, v in prev.items()},
            applied={str(k): str(v) for k, v in applied.items()},
        )


class BoostStore:
    """The boost records on disk. A corrupt file is moved aside (and said so), never fatal."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / "boost.json"
        self.notes: list[str] = []
        self._records: list[BoostRecord] = self._load()

    def _load(self) -> list[BoostRecord]:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return []
        except OSError as e:
            self.notes.append(f"cannot read {self.path}: {e.strerror}")
            return []
        try:
            raw = json.loads(text)
            if not isinstance(raw, list):
                raise ValueError("not a list")
            return [BoostRecord.from_json(r) for r in raw]
        except (ValueError, KeyError, TypeError) as e:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            try:
                self.path.rename(aside)
                where = f"moved to {aside}"
            except OSError:
                where = "left in place"
            self.notes.append(f"{self.path} was unreadable ({e}); {where}; no boost to restore")
            return []

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps([r.to_json() for r in self._records], indent=1))
        os.replace(tmp, self.path)

    @property
    def records(self) -> tuple[BoostRecord, ...]:
        return tuple(self._records)

    def active_for(self, array: str) -> BoostRecord | None:
        for r in self._records:
            if r.array == array:
                return r
        return None

    def add(self, record: BoostRecord) -> None:
        self._records = [r for r in self._records if r.array != record.array] + [record]
        self._save()

    def remove(self, array: str) -> None:
        self._records = [r for r in self._records if r.array != array]
        self._save()


def _read_int(read_text: ReadText, path: str) -> str | None:
    text = read_text(path)
    if text is None:
        return None
    value = text.strip().split()[0] if text.strip() else ""
    return value if value.isdigit() else None


def plan_boost(
    read_text: ReadText,
    array: str,
    action: str,
    *,
    level: str | None,
    members: int,
    store: BoostStore,
    min_kib: int = DEFAULT_BOOST_MIN_KIB,
    max_kib: int = DEFAULT_BOOST_MAX_KIB,
    stripe_cache: int | None = DEFAULT_BOOST_STRIPE_CACHE,
    now: float | None = None,
) -> tuple[Plan, BoostRecord]:
    """The plan that raises the limits, and the record that will undo it.

    Global limits already raised by another boost keep *that* boost's previous values, so the
    values from before any boost are the ones restored when the last boosted sync ends.
    """
    reader = read_text
    inherited: dict[str, str] = {}
    for r in store.records:
        if r.array != array:
            inherited.update({k: v for k, v in r.previous.items() if Setting.parse(k).is_global})

    wanted: list[tuple[Setting, str, str]] = [
        (
            Setting("sysctl", SYSCTL_MIN),
            str(min_kib),
            "raise the guaranteed sync speed (KiB/s per device)",
        ),
        (
            Setting("sysctl", SYSCTL_MAX),
            str(max_kib),
            "raise the sync speed ceiling (KiB/s per device)",
        ),
    ]
    if stripe_cache and level in levels.PARITY:
        cost = stripe_cache_cost_bytes(stripe_cache, members)
        wanted.append(
            (
                Setting("sysfs", stripe_cache_path(array)),
                str(stripe_cache),
                f"larger stripe cache speeds RAID-4/5/6 rebuilds (costs {cost // (1024 * 1024)} MiB RAM)",
            )
        )

    previous: dict[str, str] = {}
    applied: dict[str, str] = {}
    steps: list[Step] = []
    warnings: list[str] = []
    for setting, value, why in wanted:
        key = setting.as_str()
        current = _read_int(reader, setting.path)
        if key in inherited:
            previous[key] = inherited[key]
        elif current is not None:
            previous[key] = current
        else:
            warnings.append(f"cannot read {setting.path}: it will not be changed")
            continue
        if current is not None and int(current) >= int(value):
            continue  # already at least as high: leave it, but still restore nothing we didn't change
        applied[key] = value
        steps.append(setting.step(value, f"{why}: {current} → {value}"))
    # Only restore what this boost changed (or what an earlier boost changed and we inherit).
    previous = {k: v for k, v in previous.items() if k in applied or k in inherited}
    record = BoostRecord(array, action, time.time() if now is None else now, previous, applied)
    plan = Plan(
        title=f"Boost the {action} of {array} (restored automatically when it ends)",
        steps=tuple(steps),
        target=array,
        warnings=tuple(warnings),
        kind="boost",
        params={"array": array, "action": action},
    )
    return plan, record


def restore_plan(record: BoostRecord, store: BoostStore) -> Plan:
    """Steps that put back what ``record`` changed. Global limits stay raised while another
    boosted sync still runs; they are then restored by that one."""
    others = [r for r in store.records if r.array != record.array]
    steps = []
    for key, value in sorted(record.previous.items()):
        setting = Setting.parse(key)
        if setting.is_global and any(key in r.applied or key in r.previous for r in others):
            continue
        steps.append(setting.step(value, f"restore {setting.key} to {value} (before the boost)"))
    return Plan(
        title=f"Restore the settings changed for the {record.action} of {record.array}",
        steps=tuple(steps),
        target=record.array,
        kind="boost-restore",
        params={"array": record.array},
    )


def due_restores(store: BoostStore, sample: LiveSample) -> list[BoostRecord]:
    """Boosts whose sync is over: the array is idle, runs a different action, or is gone."""
    live = {a.name: a for a in sample.arrays}
    out = []
    for r in store.records:
        a = live.get(r.array)
        if a is None or a.sync is None or not a.sync.active or a.sync.action != r.action:
            out.append(r)
    return out


def boosted_arrays(store: BoostStore) -> Iterable[str]:
    return (r.array for r in store.records)
