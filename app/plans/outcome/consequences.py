"""What running a plan means, before it runs: the difference between the machine as probed and as
the plan leaves it (``app.plans.outcome.staging``), read through the one sync model
(:func:`app.model.sync_model.forecast_sync`): the syncs that will run (time, rate, bytes per
member), the syncs the plan stops, what one more failure would cost on each array it touches
(further failures survived now, during the plan and its syncs, and after), and the data it
destroys by name.

Pure: the consequences come from the plan's operations (what will really run, never its
``params`` or ``kind``) played over the machine as probed, so a plan read from a file gets the
same answer as the wizard that built it. ``consequences_of`` is called by the wizards (attached
to the Plan), and again wherever a plan is shown or run against the machine as it is then
(``raidman plan``, ``raidman apply``, the TUI's preview) — a plan file's own ``consequences``
are never read.

Confirmation comes from the outcome: the name is typed where data is destroyed or lost, where
an array survives fewer failures during or after the plan than now, and where a sync of a
degraded array is stopped; the word typed is the thing at risk (``Consequences.at_risk``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from app.model import Machine, levels
from app.model.drive_ratings import drive_rating
from app.model.risk import Rebuild, RebuildRisk, compose
from app.model.sizes import per_year as yearly
from app.model.sizes import rated_per_year
from app.model.sync_model import (
    MemberWrite,
    SyncForecast,
    effective_limits,
    forecast_sync,
    members_rated_kib_s,
    progress_per_member,
    waiting_for,
)
from app.model.workload import TB, check_bytes_per_check, checks_per_year
from app.plans.guards.lifecycle_checks import offline_lines
from app.plans.outcome.arrays import PlannedArray
from app.plans.outcome.benchmark_cost import benchmark_cost
from app.plans.outcome.consequence_types import Consequences, Limits, Redundancy, SyncStop
from app.plans.outcome.lv_syncs import lv_consequences
from app.plans.outcome.staging import Staging
from app.plans.plan import Plan
from app.plans.superblocks import Superblocks

# ---- forecasts ---------------------------------------------------------------------------------


def _limits(
    machine: Machine, name: str, limits: Limits
) -> tuple[tuple[int | None, int | None], bool]:
    """(min, max) in force for ``name`` and whether the max is the array's own."""
    own = limits.local.get(name)
    arr = machine.array(name)
    if own is not None and own[1] is not None:
        return (own[0] if own[0] is not None else limits.system[0], own[1]), True
    if arr is not None:
        lo, hi = effective_limits(arr, *limits.system)
        if arr.sync is not None and arr.sync.max_speed_kib_s and hi is None:
            return (arr.sync.min_speed_kib_s, arr.sync.max_speed_kib_s), False
        return (lo, hi), arr.speed_max_local is not None
    return limits.system, False


def _forecast(
    machine: Machine,
    a: PlannedArray,
    action: str,
    targets: tuple[str, ...],
    limits: Limits,
    *,
    done_sectors: int = 0,
    member_speed_kib_s: int | None = None,
    dirty_bytes: int | None = None,
) -> SyncForecast:
    """``dirty_bytes``: a re-add's, what the array's write-intent bitmap holds dirty now
    (dirty bits × bitmap chunk, ``mdadm -X`` on an in-sync member: app.plans.outcome.bitmap_dirty)."""
    slotted = sorted(
        (
            m
            for m in a.members
            if m.slot is not None and m.role != "faulty" and m.role != "replacement"
        ),
        key=lambda m: m.slot or 0,
    )
    extra = [m for m in a.members if m.role == "replacement" and m.device in targets]
    members = [(m.device, m.size) for m in (*slotted, *extra)]
    lim, local = _limits(machine, a.name, limits)
    if member_speed_kib_s is None:  # what the members' kind is rated to do, where known
        member_speed_kib_s = members_rated_kib_s(machine, [d for d, _ in members])
    waits, wait_s = (
        ((), None) if done_sectors else waiting_for(machine, a.name, [d for d, _ in members])
    )
    kw: dict[str, Any] = dict(
        waits_for=waits,
        wait_s=wait_s,
        array=a.name,
        level=a.level,
        raid_disks=a.raid_disks,
        layout=a.layout,
        members=members,
        targets=targets,
        initial=a.new,
        limit_kib_s=lim,
        limit_local=local,
        done_sectors=done_sectors,
        member_speed_kib_s=member_speed_kib_s,
    )
    if action == "re-add" and dirty_bytes is not None:
        # md's bitmap of a RAID-10 counts array sectors (raid10.c raid10_sync_request: a
        # recovery asks md_bitmap_start_sync for raid10_find_virt(), the array address), of
        # which each member holds copies / raid_disks; RAID-1/4/5/6 count member sectors
        per = progress_per_member(a.level, a.raid_disks, a.layout, "resync")
        member_dirty = round(dirty_bytes / per)
        f = forecast_sync(**kw, action="recover", bitmap_dirty_bytes=member_dirty)
        return replace(
            f,
            why="a re-add with a write-intent bitmap resyncs only the chunks its bitmap marks "
            "dirty (written while the member was out, as of now; more if writes go on first)",
        )
    if action == "re-add":
        # the dirty bits are not known before the member is back: nothing … the whole member
        lo = forecast_sync(**kw, action="recover", bitmap_dirty_bytes=0)
        hi = forecast_sync(**kw, action="recover")
        merged = tuple(
            MemberWrite(x.device, x.bytes_low, y.bytes_high, x.member_bytes)
            for x, y in zip(lo.members, hi.members, strict=True)
        )
        return replace(
            hi,
            duration_s_low=lo.duration_s_low,
            members=merged,
            why="a re-add with a write-intent bitmap resyncs only the blocks written while "
            "the member was out: from nothing to the whole member",
        )
    return forecast_sync(**kw, action=action)


# a larger stripe cache let one measured 5-disk RAID-6 rebuild go from 25 to 66 MB/s: the
# only measurement raidman has of its effect, so it bounds the forecast's fast end (the slow
# end keeps the rate the rebuild runs at now); tests/plans/test_staging.py cites it
STRIPE_CACHE_GAIN = 66 / 25


def _running(
    machine: Machine,
    a: PlannedArray,
    limits: Limits,
    stripe_cache: int | None,
    measured: float | None = None,
) -> SyncForecast | None:
    """What is left of the sync running on ``a`` now, if it goes on, at the speed it runs
    (``measured``: its progress over the last second, else md's own sync_speed; where below
    the limit, the members or other I/O hold it: that speed is taken as the members'), written
    only to the members the staged array still has working."""
    arr = machine.array(a.name)
    s = arr.sync if arr is not None else None
    if arr is None or s is None or a.running is None or a.fate in ("stopped", "ended", "dropped"):
        return None
    if measured is not None and measured > 0:
        s = replace(s, speed_kib_s=round(measured))
    targets = tuple(t for t in s.targets if (m := a.member(t)) is not None and m.role != "faulty")
    if s.targets and not targets:
        return None
    member_speed = None
    # a sync well below the max in force is held by its members (or other I/O): that speed is
    # theirs; near the max (within 10 %: md's own sync_speed wobbles under its limit) the
    # limit holds it, and what the members could do is not known
    near_max = bool(
        s.max_speed_kib_s and s.speed_kib_s and s.speed_kib_s >= 0.9 * s.max_speed_kib_s
    )
    if s.speed_kib_s and not near_max:
        per = progress_per_member(arr.level, arr.raid_disks, arr.layout, s.action)
        member_speed = max(1, round(s.speed_kib_s / per))
    f = _forecast(
        machine,
        a,
        s.action,
        targets,
        limits,
        done_sectors=s.done_sectors or 0,
        member_speed_kib_s=member_speed,
    )
    gain = (
        member_speed is not None
        and stripe_cache is not None
        and arr.stripe_cache_size is not None
        and stripe_cache > arr.stripe_cache_size
        and a.level in levels.PARITY
        and s.action in ("recover", "resync", "reshape")
    )
    if gain and member_speed is not None and f.duration_s_low is not None:
        fast = _forecast(
            machine,
            a,
            s.action,
            targets,
            limits,
            done_sectors=s.done_sectors or 0,
            member_speed_kib_s=round(member_speed * STRIPE_CACHE_GAIN),
        )
        f = replace(
            f,
            duration_s_low=fast.duration_s_low,
            speed_kib_s=fast.speed_kib_s,
            speed_why=f"up to {fast.speed_why} with the larger stripe cache"
            if fast.speed_why
            else f.speed_why,
            why=(
                f"the stripe cache held this rebuild: raised from {arr.stripe_cache_size} to "
                f"{stripe_cache} pages, one measured RAID-6 rebuild ran 2.6 × as fast; the "
                "slow end is the rate it runs at now"
            ),
        )
    f = replace(f, rate_source="measured" if measured else "md")
    # what is left to write: the share of the progress range still ahead
    total = s.total_sectors or f.progress_sectors
    if not total or not s.done_sectors:
        return f
    left = max(0.0, 1 - s.done_sectors / total)
    return replace(
        f,
        members=tuple(
            replace(w, bytes_low=round(w.bytes_low * left), bytes_high=round(w.bytes_high * left))
            for w in f.members
        ),
    )


def _stop(machine: Machine, a: PlannedArray, seen_degraded: bool) -> SyncStop | None:
    """The running sync of ``a`` the plan stops, in words."""
    arr = machine.array(a.name)
    s = arr.sync if arr is not None else None
    if s is None or a.running is None or a.fate not in ("stopped", "ended", "dropped"):
        return None
    at = f" at {s.fraction * 100:.1f} %" if s.fraction is not None else ""
    if a.fate == "stopped":
        what = (
            f"{a.name}'s {s.action} stops{at} and does not resume until its sync action is set "
            "back to idle"
        )
    elif a.fate == "ended":
        what = f"{a.name}'s {s.action} ends{at}: md does not resume a check or repair by itself"
    else:
        what = f"{a.name}'s {s.action} onto {', '.join(s.targets)} ends{at}: that member fails"
    if seen_degraded and s.action in ("recover", "resync", "reshape"):
        faulty = [m.device for m in a.members if m.role == "faulty"]
        left = a.survives()
        words = (
            "no further failure"
            if left == 0
            else f"{left} further failure(s)"
            if left > 0
            else "nothing: it is lost"
        )
        what += f"; {a.name} stays degraded, surviving {words}"
        if faulty:
            what += f" (faulty: {', '.join(faulty)})"
    return SyncStop(a.name, s.action, s.fraction, a.fate, what, degraded=seen_degraded)


def consequences_of(
    plan: Plan,
    machine: Machine,
    limits: Limits | None = None,
    bitmap_dirty: Mapping[str, int] | None = None,
    superblocks: Superblocks | None = None,
    rates: Mapping[str, float] | None = None,
) -> Consequences:
    """The plan's consequences on ``machine`` (see the module doc). ``bitmap_dirty``: array
    → the bytes its write-intent bitmap holds dirty, where read (a re-add's forecast);
    ``superblocks``: every md superblock on the machine, where read (what a step destroys);
    ``rates``: each running sync's progress rate measured now (``app.plans.outcome.rates``)."""
    st = Staging.of([s.op for s in plan.steps], machine, limits, superblocks)
    syncs: list[SyncForecast] = []
    stops: list[SyncStop] = []
    out: list[Redundancy] = []
    risks: list[RebuildRisk] = []
    for a in st.arrays.values():
        if a.level not in levels.LEVELS:
            continue
        seen = st.seen[a.name]
        stop = None if a.new else _stop(machine, a, seen.degraded)
        if stop is not None:
            stops.append(stop)
        measured = (rates or {}).get(a.name)
        cache = st.stripe_cache.get(a.name)
        running = None if a.new else _running(machine, a, st.limits, cache, measured)
        planned = [] if a.frozen else list(a.syncs)
        if running is not None and not any(t for _, t in planned):
            syncs.append(running)
        for action, targets in planned:
            dirty = (bitmap_dirty or {}).get(a.name)
            f = _forecast(machine, a, action, targets, st.limits, dirty_bytes=dirty)
            syncs.append(f)
            r = _risk(machine, a, action, targets, f)
            if r is not None:
                risks.append(r)
        st._low(a)
        during, lost_if = seen.lowest
        now = seen.survives
        a.finish()
        after = a.survives()
        if a.new:
            now = after
            during = min(during, after)
        out.append(Redundancy(a.name, now, min(during, after), after, lost_if))
    weaker = [r for r in out if _weaker(r, st.seen[r.array].lost_if)]
    lv_syncs, lv_redundancy, lv_stops = lv_consequences(
        [s.op for s in plan.steps], machine, st.limits
    )
    syncs += lv_syncs
    out += lv_redundancy
    stops += lv_stops
    # a raid LV one image short while a replace recovers: as an md array made weaker
    weaker += [r for r in lv_redundancy if r.during < r.now]
    stopped_degraded = [s for s in stops if s.degraded]
    offline = tuple(offline_lines(machine, [s.op for s in plan.steps]))
    lost = tuple(dict.fromkeys(st.lost))
    typed = plan.destructive or bool(lost or weaker or stopped_degraded)
    at_risk = None
    if lost:
        at_risk = lost[0].name
    elif stopped_degraded:
        at_risk = stopped_degraded[0].array
    elif weaker and not plan.destructive:
        at_risk = weaker[0].array
    return Consequences(
        tuple(syncs),
        tuple(out),
        "typed" if typed else "yes",
        offline,
        tuple(stops),
        lost,
        at_risk,
        tuple(risks),
        tuple(schedule_workload(plan, machine) + benchmark_cost(plan, machine)),
    )


def schedule_workload(plan: Plan, machine: Machine) -> list[str]:
    """A check schedule's cost before it is enabled: what its checks read from each member disk
    a year, against the disk's rated workload where known (app.model.workload)."""
    every = plan.params.get("every") if plan.kind == "check-schedule" else None
    per_year = checks_per_year(every) if isinstance(every, str) else None
    if not per_year:
        return []
    out = []
    for d in machine.disks:
        per_check = check_bytes_per_check(machine, d.name)
        if not per_check:
            continue
        tb = per_check * per_year / TB
        rating = drive_rating(d.model) if d.rotational is not False else None
        rated = rating.workload_tb_per_year if rating else None
        of = (
            f" = {tb / rated:.0%} of its rated {rated_per_year(rated)} ({rating.family} datasheet)"
            if rated and rating
            else " (its rated workload is not known)"
            if d.rotational is not False
            else " (reads only: no flash wear)"
        )
        when = "monthly" if every == "monthly" else f"every {every}"
        out.append(f"checks {when} read {yearly(tb)} from {d.name}{of}")
    return out


REBUILDS = {"recover": "recover", "re-add": "recover", "replace": "replace"}


def _risk(
    machine: Machine, a: PlannedArray, action: str, targets: tuple[str, ...], f: SyncForecast
) -> RebuildRisk | None:
    """The risk of a rebuild the plan starts on an array that holds data (app.model.risk): its
    survivors as the plan leaves them, the forecast's window; a re-add reads only its dirty
    share."""
    kind = REBUILDS.get(action)
    if a.new or kind is None or a.level not in levels.REDUNDANT or not targets:
        return None
    tgt = [m for m in a.members if m.device in targets]
    slots = [m.slot for m in tgt if m.slot is not None]
    survivors = [
        (m.device, m.slot)
        for m in a.members
        if m.role == "in_sync" and m.slot is not None and m.device not in targets
    ]
    writes = [w for w in f.members if w.device in targets]
    comp = max((w.member_bytes for w in writes), default=0)
    if not comp or not slots:
        return None
    share = min(1.0, sum(w.bytes_high for w in writes) / (comp * len(writes)))
    # the slow end; where it is unknown (no limit known) the fast end is a floor, unless it is
    # a re-add's "nothing dirty" end: then the window is not known
    window = f.duration_s_high if f.duration_s_high is not None else (f.duration_s_low or None)
    why = f"forecast at {f.speed_why}" if f.speed_why else "forecast"
    rb = Rebuild(
        a.name, a.level, a.raid_disks, a.layout, "planned", targets, survivors, slots, comp, kind
    )
    return compose(machine, rb, window, why, left=share)


def _weaker(r: Redundancy, lost_now: tuple[str, ...]) -> bool:
    """Fewer further failures survived during or after than now, or as many (none) but more
    members whose failure would lose the array (a degraded RAID-10 losing a second pair)."""
    if r.during < r.now or r.after < r.now:
        return True
    return r.during == 0 and not set(r.lost_if) <= set(lost_now)


def with_consequences(
    plan: Plan,
    machine: Machine,
    limits: Limits | None = None,
    bitmap_dirty: Mapping[str, int] | None = None,
    superblocks: Superblocks | None = None,
    rates: Mapping[str, float] | None = None,
) -> Plan:
    """``plan`` carrying its consequences on ``machine``."""
    c = consequences_of(plan, machine, limits, bitmap_dirty, superblocks, rates)
    return replace(plan, consequences=c)


def limits_from_texts(
    system_min: str | None, system_max: str | None, local: dict[str, tuple[str | None, str | None]]
) -> Limits:
    """:class:`Limits` from the texts of /proc/sys/dev/raid/speed_limit_min/max and each array's
    md/sync_speed_min/max ("200000 (local)"; "(system)" ones are not the array's own). Text
    that is not a number is unknown (None)."""

    def num(t: str | None) -> int | None:
        head = (t or "").strip().split(" ", 1)[0]
        return int(head) if head.isascii() and head.isdigit() and len(head) <= 10 else None

    def own(t: str | None) -> int | None:
        return num(t) if t is not None and "(local)" in t else None

    return Limits(
        (num(system_min), num(system_max)),
        {
            name: (own(lo), own(hi))
            for name, (lo, hi) in local.items()
            if own(lo) is not None or own(hi) is not None
        },
    )
