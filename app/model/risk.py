"""An array's rebuild risk, term by term: what the survivors must read, the rate at which their
datasheets say a read fails, the errors expected, whether the redundancy left meanwhile
corrects one, how long the window lasts, and each member's SMART evidence with its source.
No term is folded into a score: every one is a field, and the text shows each.

Which rebuild: the one running now (a recovery; the rest of it, from where it is); for a
degraded array not rebuilding, the one that starts once a disk is added; for a healthy array,
the one that follows a member's failure (its last slot: the members are alike to md).

- ``read_bytes``: app.model.sync_model.recovery_reads (the kernel's reads per level);
- ``ure_per_bit``: app.model.drive_ratings (the datasheet of each survivor's family);
- ``ure_expected`` = Σ read_bytes × 8 × rate: an expected count of unreadable sectors over the
  rebuild (0.3 means about one rebuild in three meets one), not a probability;
- ``corrects_one``: the array still survives a failure while it rebuilds
  (levels.failures_left over the slots in sync meanwhile): md rebuilds a sector a survivor
  cannot read from the redundancy left (RAID-6 with one member failed); with none left, md
  cannot rebuild that stripe (raid5.c ``handle_failed_sync()``: a bad block is recorded on the
  member being rebuilt, or it is failed);
- ``window_s``: the forecast (app.model.sync_model.forecast_sync, or md's own ETA for a running
  recovery);
- each member's SMART evidence: app.model.failure_bins (Backblaze's observed failure rates as
  Scrutiny bins them), and the failures expected of it in the window were its bin's rate to
  hold (rate × window / year).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from app.model import levels, sync_model
from app.model.drive_ratings import drive_rating
from app.model.failure_bins import Evidence, evidence

if TYPE_CHECKING:
    from app.model.devices import Machine, MdArray, SyncStatus
    from app.model.smart import SmartReading

YEAR_S = 365.25 * 86400
BITS = 8
SSD_NOTE = "an SSD: the observed failure rates are of hard disks (Backblaze's fleet), not applied"


@dataclass(frozen=True, slots=True)
class SurvivorRead:
    device: str  # the member ("sda1")
    disk: str | None  # its whole disk ("sda")
    model: str | None
    read_bytes: int  # what the rebuild (still) reads from it
    ure_per_bit: float | None  # its datasheet's rate; None: unknown
    family: str | None  # the datasheet family ("WD Red"); None: not in the table
    source: str | None  # where the rate comes from

    @property
    def ure_expected(self) -> float | None:
        if not self.read_bytes:
            return 0.0
        return None if self.ure_per_bit is None else self.read_bytes * BITS * self.ure_per_bit

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "disk": self.disk,
            "model": self.model,
            "read_bytes": self.read_bytes,
            "ure_rate": self.ure_per_bit,
            "family": self.family,
            "ure_rate_source": self.source,
            "ure_expected": self.ure_expected,
        }


@dataclass(frozen=True, slots=True)
class MemberEvidence:
    device: str
    disk: str | None
    role: str  # survivor | rebuilt | faulty | spare
    power_on_hours: int | None
    evidence: tuple[Evidence, ...]  # empty: no SMART read, or none of the binned attributes
    smart_read: bool
    note: str | None = None  # why there is no evidence (an SSD: the bins are hard disks')

    @property
    def worst(self) -> Evidence | None:
        rated = [e for e in self.evidence if e.afr is not None]
        return max(rated, key=lambda e: e.afr or 0.0) if rated else None

    def failures_in(self, window_s: float | None) -> float | None:
        """Failures expected of this drive in ``window_s`` were its worst bin's rate to hold."""
        w = self.worst
        if w is None or w.afr is None or window_s is None:
            return None
        return w.afr * window_s / YEAR_S

    def to_json(self, window_s: float | None) -> dict[str, Any]:
        w = self.worst
        return {
            "device": self.device,
            "disk": self.disk,
            "role": self.role,
            "power_on_hours": self.power_on_hours,
            "smart_read": self.smart_read,
            "note": self.note,
            "evidence": [e.to_json() for e in self.evidence],
            "worst_attribute": None if w is None else w.attribute,
            "failures_expected_in_window": self.failures_in(window_s),
        }


@dataclass(frozen=True, slots=True)
class RebuildRisk:
    array: str
    level: str
    scenario: str  # running | after-a-disk-is-added | if-a-member-fails
    rebuilt: tuple[str, ...]  # the members rebuilt (or the one supposed to fail)
    survivors: tuple[SurvivorRead, ...]
    read_bytes_total: int  # the whole rebuild's reads
    done_fraction: float  # of a running rebuild; 0 otherwise
    failures_left: int  # further failures the array survives while it rebuilds
    window_s: float | None
    window_why: str  # "md's ETA at its current speed", "forecast at md's limit", ...
    members: tuple[MemberEvidence, ...] = ()

    @property
    def read_bytes(self) -> int:
        return sum(s.read_bytes for s in self.survivors)

    @property
    def ure_per_bit(self) -> float | None:
        """The survivors' one rate, where they share it (None: unknown or mixed)."""
        rates = {s.ure_per_bit for s in self.survivors if s.read_bytes}
        return rates.pop() if len(rates) == 1 else None

    @property
    def ure_source(self) -> str | None:
        srcs = {s.source for s in self.survivors if s.read_bytes}
        return srcs.pop() if len(srcs) == 1 else None

    @property
    def ure_expected(self) -> float | None:
        parts = [s.ure_expected for s in self.survivors]
        return None if any(p is None for p in parts) else sum(p or 0.0 for p in parts)

    @property
    def unknown_rates(self) -> tuple[str, ...]:
        return tuple(s.device for s in self.survivors if s.read_bytes and s.ure_per_bit is None)

    @property
    def corrects_one(self) -> bool:
        return self.failures_left >= 1

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "rebuilt": list(self.rebuilt),
            "read_bytes": self.read_bytes,
            "read_bytes_total": self.read_bytes_total,
            "done_fraction": self.done_fraction,
            "ure_rate": self.ure_per_bit,
            "ure_rate_source": self.ure_source,
            "ure_expected": self.ure_expected,
            "ure_rate_unknown_for": list(self.unknown_rates),
            "failures_left_during": self.failures_left,
            "corrects_one": self.corrects_one,
            "window_s": self.window_s,
            "window_why": self.window_why,
            "survivors": [s.to_json() for s in self.survivors],
            "members": [m.to_json(self.window_s) for m in self.members],
        }


def _disk_of(machine: Machine, dev: str) -> str | None:
    under = machine.disks_under(dev)
    return under[0] if len(under) == 1 else None


def _window(
    machine: Machine,
    a: MdArray,
    slots: list[tuple[str, int]],
    target: str,
    limits: tuple[int | None, int | None],
    component: int,
) -> tuple[float | None, str]:
    speed = sync_model.members_rated_kib_s(machine, [d for d, _ in slots])
    lim = sync_model.effective_limits(a, *limits)
    f = sync_model.forecast_sync(
        array=a.name,
        level=a.level,
        raid_disks=a.raid_disks or len(slots),
        layout=a.layout,
        action="recover",
        members=[(d, component) for d, _ in sorted(slots, key=lambda x: x[1])],
        targets=[target],
        limit_kib_s=lim,
        member_speed_kib_s=speed,
        limit_local=a.speed_max_local is not None,
    )
    if f.duration_s_low is None:
        return None, "unknown: neither the members' speed nor md's limit is known"
    return f.duration_s_low, f"forecast at {f.speed_why}"


def running_recovery(a: MdArray) -> SyncStatus | None:
    """``a``'s sync when it is a recovery (or replacement) onto named members: the rebuild
    whose risk is the one running; None otherwise."""
    sync = sync_model.md_sync(a.sync)
    if sync is not None and sync.action in ("recover", "replace") and sync.targets:
        return sync
    return None


def risk_inputs(machine: Machine, a: MdArray) -> tuple[object, ...]:
    """What ``rebuild_risk(machine, a, limits=limits_seen(machine))`` is worked out from,
    comparable: the stack it reads (disks, partitions and how they stack), the array without
    its sync unless a recovery runs (then its progress and ETA are the risk's), and md's
    limits. Equal inputs give an equal risk (a pane keeps it while a resync moves)."""
    return (
        machine.disks,
        machine.partitions,
        machine.edges,
        a if running_recovery(a) is not None else replace(a, sync=None),
        limits_seen(machine),
    )


def rebuild_risk(
    machine: Machine,
    a: MdArray,
    readings: Mapping[str, SmartReading] | None = None,
    limits: tuple[int | None, int | None] = (None, None),
) -> RebuildRisk | None:
    """The rebuild risk of ``a`` (see the module doc); None for an array without redundancy, a
    container, or one whose members' sizes are not known."""
    if a.is_container or a.level not in levels.REDUNDANT or not a.raid_disks:
        return None
    component = sync_model.component_bytes(a) or max(
        (m.size_kib * 1024 for m in a.members if m.size_kib), default=0
    )
    if not component:
        return None
    n = a.raid_disks
    in_sync = [(m.device, m.slot) for m in a.members if m.role == "in_sync" and m.slot is not None]
    sync = running_recovery(a)
    running = sync is not None
    done = 0.0
    if running and sync is not None:
        rebuilt = tuple(sync.targets)
        scenario = "running"
        done = sync.fraction or 0.0
        slot_of = {m.device: m.slot for m in a.members}
        targets = [s for t in rebuilt if (s := slot_of.get(t)) is not None]
        survivors = [(d, s) for d, s in in_sync if d not in rebuilt]
    elif a.is_degraded:
        scenario = "after-a-disk-is-added"
        have = {s for _, s in in_sync}
        targets = [s for s in range(n) if s not in have]
        rebuilt = tuple(f"slot {s}" for s in targets)
        survivors = in_sync
    else:
        if not in_sync:
            return None
        scenario = "if-a-member-fails"
        gone = max(in_sync, key=lambda x: x[1])
        targets = [gone[1]]
        rebuilt = (gone[0],)
        survivors = [x for x in in_sync if x != gone]
    if running and sync is not None and sync.eta_s is not None:
        window: float | None = sync.eta_s
        why = "md's ETA at its current speed"
    else:
        target_dev = rebuilt[0] if scenario == "if-a-member-fails" else "the new disk"
        slots = [*list(survivors), (target_dev, targets[0] if targets else n - 1)]
        window, why = _window(machine, a, slots, target_dev, limits, component)
    return compose(
        machine,
        Rebuild(a.name, a.level, n, a.layout, scenario, rebuilt, survivors, targets, component),
        window,
        why,
        readings=readings,
        left=1.0 - done,
        members=tuple(_members(machine, a, readings, rebuilt)),
    )


@dataclass(frozen=True, slots=True)
class Rebuild:
    """Which rebuild: the array's shape, the members in sync that it reads (device, slot), the
    slots it rebuilds and each member's data (md's component size)."""

    array: str
    level: str
    raid_disks: int
    layout: str | None
    scenario: str
    rebuilt: tuple[str, ...]
    survivors: list[tuple[str, int]]
    targets: list[int]
    component: int
    action: str = "recover"  # recover | replace (what the survivors read differs)


def compose(
    machine: Machine,
    rb: Rebuild,
    window: float | None,
    why: str,
    *,
    readings: Mapping[str, SmartReading] | None = None,
    left: float = 1.0,
    members: tuple[MemberEvidence, ...] = (),
) -> RebuildRisk:
    """The risk of the rebuild ``rb`` (``left``: the share of it that reads — what a running one
    has still to run, the dirty share of a re-add's): reads per survivor from the sync model,
    each survivor's datasheet rate, the redundancy left."""
    working = frozenset(s for _, s in rb.survivors)
    failures_left = levels.failures_left(rb.level, rb.raid_disks, rb.layout, working)
    reads = sync_model.recovery_reads(
        rb.level, rb.raid_disks, rb.layout, rb.survivors, rb.targets, rb.component, rb.action
    )
    rows: list[SurvivorRead] = []
    for dev, _slot in rb.survivors:
        disk = _disk_of(machine, dev)
        d = machine.disk(disk) if disk else None
        model = d.model if d else None
        r = readings.get(disk) if readings and disk else None
        if model is None and r is not None:
            model = r.model
        rating = drive_rating(model)
        rows.append(
            SurvivorRead(
                dev,
                disk,
                model,
                int(reads.get(dev, 0) * left),
                rating.ure_per_bit if rating else None,
                rating.family if rating else None,
                rating.source if rating else None,
            )
        )
    return RebuildRisk(
        rb.array,
        rb.level,
        rb.scenario,
        rb.rebuilt,
        tuple(rows),
        sum(reads.values()),
        1.0 - left if rb.scenario == "running" else 0.0,
        failures_left,
        window,
        why,
        members,
    )


def _members(
    machine: Machine,
    a: MdArray,
    readings: Mapping[str, SmartReading] | None,
    rebuilt: tuple[str, ...],
) -> list[MemberEvidence]:
    out: list[MemberEvidence] = []
    for m in a.members_by_slot:
        disk = _disk_of(machine, m.device)
        r = readings.get(disk) if readings and disk else None
        ok = r is not None and r.available
        d = machine.disk(disk) if disk else None
        ssd = d is not None and d.is_ssd
        role = (
            "rebuilt"
            if m.device in rebuilt
            else "faulty"
            if m.role == "faulty"
            else "spare"
            if m.role == "spare"
            else "survivor"
        )
        out.append(
            MemberEvidence(
                m.device,
                disk,
                role,
                r.power_on_hours if ok and r is not None else None,
                evidence(r) if ok and r is not None and not ssd else (),
                ok,
                SSD_NOTE if ssd else None,
            )
        )
    return out


def limits_seen(machine: Machine) -> tuple[int | None, int | None]:
    """md's system speed limits as the machine shows them without another read: those of a
    sync running under them (an array's ``sync_speed_min/max`` say the system's value when it
    has none of its own); (None, None) when no sync runs so."""
    for a in machine.arrays:
        s = a.sync
        if s is None or not s.active:
            continue
        lo = s.min_speed_kib_s if a.speed_min_local is None else None
        hi = s.max_speed_kib_s if a.speed_max_local is None else None
        if hi is not None:
            return lo, hi
    return None, None
