"""What running a plan means, before it runs: the syncs it starts (time, bytes per member, from
:func:`app.model.sync_model.forecast_sync`) and what one more failure would cost on each array
it touches (further failures survived now, during the plan and its syncs, and after).

Pure: the consequences come from the plan's argv (what will really run, never its ``params`` or
``kind``) played over the machine as probed, so a plan read from a file gets the same answer as
the wizard that built it. ``consequences_of`` is called by the wizards (attached to the Plan),
and again wherever a plan is shown or run against the machine as it is then (``raidman plan``,
``raidman apply``, the TUI's preview) — a plan file's own ``consequences`` are never read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from app.model import Machine, levels
from app.model.sync_model import (
    MemberWrite,
    SyncForecast,
    effective_limits,
    forecast_sync,
    members_rated_kib_s,
    progress_per_member,
    waiting_for,
)
from app.plans import ops
from app.plans.consequence_types import Consequences, Limits, Redundancy
from app.plans.lifecycle_checks import offline_lines
from app.plans.plan import Plan
from app.plans.plan_arrays import (
    PlannedArray,
    array_of,
    create_array,
    from_machine,
    grow_array,
    manage_member,
    replace_member,
    strip_dev,
)

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
    (dirty bits × bitmap chunk, ``mdadm -X`` on an in-sync member: app.plans.bitmap_dirty)."""
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


def _running(machine: Machine, a: PlannedArray, limits: Limits) -> SyncForecast | None:
    """What is left of the sync running on ``a`` now, at the speed it runs (where below the
    limit, the members or other I/O hold it: that speed is taken as the members'); None when
    none runs or the plan fails the member it rebuilds (md then drops the recovery)."""
    arr = machine.array(a.name)
    s = arr.sync if arr is not None else None
    if (
        arr is None
        or s is None
        or s.action not in ("resync", "recover", "check", "repair", "reshape")
    ):
        return None
    for t in s.targets:
        m = a.member(t)
        if m is None or m.role == "faulty":
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
        from_machine(arr, machine),
        s.action,
        s.targets,
        limits,
        done_sectors=s.done_sectors or 0,
        member_speed_kib_s=member_speed,
    )
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


def _apply_limit(op: ops.Op, limits: Limits) -> Limits:
    """A step that sets md's speed limits: the forecasts after it use the new ones."""
    if isinstance(op, ops.SetSystemSpeed):
        lo, hi = limits.system
        sys_new: tuple[int | None, int | None] = (
            (op.kib_s, hi) if op.bound == "min" else (lo, op.kib_s)
        )
        return replace(limits, system=sys_new)
    if isinstance(op, ops.SetArraySpeed):
        lo, hi = limits.local.get(op.md, (None, None))
        new: tuple[int | None, int | None] = (op.kib_s, hi) if op.bound == "min" else (lo, op.kib_s)
        return replace(limits, local={**limits.local, op.md: new})
    return limits


def consequences_of(
    plan: Plan,
    machine: Machine,
    limits: Limits | None = None,
    bitmap_dirty: Mapping[str, int] | None = None,
) -> Consequences:
    """The plan's consequences on ``machine`` (see the module doc). ``bitmap_dirty``: array
    → the bytes its write-intent bitmap holds dirty, where read (a re-add's forecast)."""
    limits = limits or Limits()
    arrays: dict[str, PlannedArray] = {}
    before: dict[str, tuple[int, dict[int, str]]] = {}
    lowest: dict[str, tuple[int, tuple[str, ...]]] = {}
    sync_action: dict[str, str] = {}  # check/repair a step starts

    before_lost: dict[str, tuple[str, ...]] = {}

    def seen(a: PlannedArray) -> None:
        if a.name not in before:
            if a.new:
                before[a.name] = (-2, {})
            else:
                before[a.name] = (a.survives(), a.working())
                lowest[a.name] = (a.survives(), a.lost_if())
                before_lost[a.name] = a.lost_if()

    def low(a: PlannedArray) -> None:
        now, lost = a.survives(), a.lost_if()
        known = lowest.get(a.name)
        if known is None or now < known[0] or (now == known[0] and len(lost) > len(known[1])):
            lowest[a.name] = (now, lost)

    for step in plan.steps:
        op = step.op
        limits = _apply_limit(op, limits)
        a: PlannedArray | None = None
        if isinstance(op, ops.SetSystemSpeed):
            # md's system-wide limits: every running sync (without its own limit) is affected
            for arr in machine.arrays:
                if arr.sync is not None and arr.sync.active and not arr.is_container:
                    t = array_of(machine, arrays, arr.path)
                    if t is not None:
                        seen(t)
                        t.touched = True
                        low(t)
        if isinstance(op, ops.CreateArray):
            a = create_array(machine, op)
            arrays[a.name] = a
            seen(a)
        elif isinstance(op, (ops.AddMember, ops.FailMember, ops.RemoveMember, ops.ReAddMember)):
            a = array_of(machine, arrays, op.array_path)
            if a is not None:
                seen(a)
                manage_member(machine, a, op, strip_dev(op.device))
        elif isinstance(op, ops.ReplaceMember):
            a = array_of(machine, arrays, op.array_path)
            if a is not None:
                seen(a)
                replace_member(a, strip_dev(op.old), strip_dev(op.new))
        elif isinstance(op, (ops.GrowDevices, ops.SetBitmap)):
            a = array_of(machine, arrays, op.array_path)
            if a is not None:
                seen(a)
                if isinstance(op, ops.GrowDevices):
                    grow_array(a, op.raid_devices)
        elif isinstance(
            op, (ops.SetSyncAction, ops.SetArraySpeed, ops.SetStripeCache, ops.SetSyncMin)
        ):
            a = array_of(machine, arrays, f"/dev/{op.md}")
            if a is not None:
                seen(a)
                if isinstance(op, ops.SetSyncAction) and op.action in ("check", "repair"):
                    sync_action[a.name] = op.action
        elif isinstance(op, (ops.MakeExt4, ops.MakeXfs, ops.PvCreate)):
            a = array_of(machine, arrays, op.device)
            if a is not None:
                seen(a)
        if a is not None:
            a.touched = True
            low(a)

    syncs: list[SyncForecast] = []
    out: list[Redundancy] = []
    for a in arrays.values():
        if a.level not in levels.LEVELS:
            continue
        planned = list(a.syncs)
        if a.name in sync_action:
            planned.append((sync_action[a.name], ()))
        running = None if a.new else _running(machine, a, limits)
        if running is not None and not any(t for _, t in planned):
            syncs.append(running)
        for action, targets in planned:
            dirty = (bitmap_dirty or {}).get(a.name)
            syncs.append(_forecast(machine, a, action, targets, limits, dirty_bytes=dirty))
        low(a)
        during, lost = lowest[a.name]
        now = before[a.name][0]
        a.finish()
        after = a.survives()
        if a.new:
            now = after
            during = min(during, after)
        out.append(Redundancy(a.name, now, min(during, after), after, lost))
    destroys = plan.destructive
    weaker = any(_weaker(r, before_lost.get(r.array, ())) for r in out)
    offline = tuple(offline_lines(machine, [s.op for s in plan.steps]))
    return Consequences(tuple(syncs), tuple(out), "typed" if destroys or weaker else "yes", offline)


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
) -> Plan:
    """``plan`` carrying its consequences on ``machine``."""
    return replace(plan, consequences=consequences_of(plan, machine, limits, bitmap_dirty))


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
