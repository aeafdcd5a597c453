"""The state of a whole machine in one line: what the banner shows and what to look at first.

"2 degraded: md7 (2 missing), md3 (1 missing) · 16 syncing, slowest: md9 ETA 4h 10m". A machine
with many arrays must not spend a screen on its banner; the worst array is named so one click
(or key) takes the admin there. UI-free: the header banner and a per-host summary both use it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from app.format import duration, percent, speed, sync_summary
from app.model.devices import Machine, MdArray

DETAIL_UP_TO = 2  # this many arrays in trouble are listed one by one; more are counted


@dataclass(frozen=True, slots=True)
class Rollup:
    degraded: tuple[MdArray, ...]  # worst first (most members missing)
    syncing: tuple[MdArray, ...]  # longest ETA first
    worst: str | None  # the array to look at first: the worst degraded, else the last to finish
    initial: frozenset[str] = frozenset()  # syncing arrays in their initial build

    @property
    def calm(self) -> bool:
        return not self.degraded and not self.syncing


def is_initial_build(a: MdArray, initial: Collection[str]) -> bool:
    """``a`` is a RAID-4/5 raidman created (``initial``: the names its create plans gave, or
    kernel names) that is still recovering onto its last member: mdadm builds a new RAID-4/5
    degraded and rebuilds the last member (Create.c), so md says "degraded" of an array that
    never held data without redundancy. The kernel does not tell this from a rebuild; the plan
    that made it does."""
    if not initial or a.level not in ("raid4", "raid5") or a.sync is None or not a.sync.active:
        return False
    short = a.array_name.rsplit(":", 1)[-1] if a.array_name else None
    return a.name in initial or (short is not None and short in initial)


def _eta_key(a: MdArray) -> float:
    eta = a.sync.eta_s if a.sync is not None else None
    return -(eta if eta is not None else float("inf"))


def rollup(machine: Machine | None, initial: Collection[str] = ()) -> Rollup:
    """``initial``: arrays raidman created (see ``is_initial_build``); one in its initial
    build is syncing, not degraded."""
    if machine is None:
        return Rollup((), (), None)
    building = frozenset(a.name for a in machine.arrays if is_initial_build(a, initial))
    degraded = tuple(
        sorted(
            (a for a in machine.degraded_arrays if a.name not in building),
            key=lambda a: (-a.degraded, a.name),
        )
    )
    syncing = tuple(sorted(machine.syncing_arrays, key=lambda a: (_eta_key(a), a.name)))
    worst = degraded[0].name if degraded else (syncing[0].name if syncing else None)
    return Rollup(degraded, syncing, worst, building)


def degraded_item(a: MdArray, *, short: bool = False) -> str:
    """ "md0 (raid6, 1 missing)"; ``short``: "md0 1 missing" (a narrow banner)."""
    if short:
        return f"{a.name} {a.degraded} missing"
    return f"{a.name} ({a.level}, {a.degraded} missing)"


def sync_item(
    a: MdArray,
    stalled: Mapping[str, float] | None = None,
    *,
    short: bool = False,
    initial: bool = False,
    waits: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """ "md127 resync 16.3% @ 661 MiB/s, ETA 20m"; a sync whose position has not moved for a
    while (``stalled``: array -> seconds) says so instead of its speed and ETA. ``short`` (a
    narrow banner) drops the words, never the numbers: "md127 resync 16.3% 661 MiB/s ETA 20m".
    A sync md holds back says what it waits for (``waits``: array -> (its words, the narrow
    ones), app.sync.waiting), never "stuck"."""
    s = a.sync
    if s is None:
        return a.name
    if s.action in ("delayed", "pending"):
        said = waits.get(a.name) if waits else None
        if said is not None:
            return f"{a.name} {said[1] if short else said[0]}"
        return f"{a.name} {sync_summary(s)}"
    item = f"{a.name} {s.action} {percent(s.fraction)}"
    if initial:
        item = f"{a.name} initial build {percent(s.fraction)}"
    if stalled and a.name in stalled:
        stuck = duration(stalled[a.name])
        return item + (f" stuck {stuck}" if short else f", no progress for {stuck}")
    if s.speed_kib_s:
        item += f" {speed(s.speed_kib_s)}" if short else f" @ {speed(s.speed_kib_s)}"
    if s.eta_s is not None:
        item += f" ETA {duration(s.eta_s)}" if short else f", ETA {duration(s.eta_s)}"
    return item


def degraded_part(r: Rollup, *, expanded: bool = False, short: bool = False) -> str:
    """ "md3 (raid5, 1 missing)" or "3 degraded, worst md7 (raid6, 2 missing)"."""
    if not r.degraded:
        return ""
    if expanded or len(r.degraded) <= DETAIL_UP_TO:
        return ", ".join(degraded_item(a, short=short) for a in r.degraded)
    return f"{len(r.degraded)} arrays, worst {degraded_item(r.degraded[0], short=short)}"


def syncing_part(
    r: Rollup,
    *,
    expanded: bool = False,
    stalled: Mapping[str, float] | None = None,
    short: bool = False,
    waits: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """ "md127 resync 16.3% @ 661 MiB/s, ETA 20m" or "16 arrays, slowest md9 ETA 4h 10m"."""
    if not r.syncing:
        return ""
    if expanded or len(r.syncing) <= DETAIL_UP_TO:
        return ", ".join(
            sync_item(a, stalled, short=short, initial=a.name in r.initial, waits=waits)
            for a in r.syncing
        )
    last = r.syncing[0]
    eta = last.sync.eta_s if last.sync is not None else None
    still = f", {len(stalled)} with no progress" if stalled else ""
    return f"{len(r.syncing)} arrays, slowest {last.name} ETA {duration(eta)}{still}"
