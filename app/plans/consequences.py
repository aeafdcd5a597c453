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
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from app.model import Machine, MdArray, MdMember, levels
from app.model.sync_model import (
    MemberWrite,
    SyncForecast,
    component_bytes,
    effective_limits,
    forecast_sync,
    members_rated_kib_s,
    progress_per_member,
    waiting_for,
)
from app.plans.consequences_words import redundancy_line, sync_line
from app.plans.plan import Plan

Confirm = Literal["typed", "yes"]


@dataclass(frozen=True, slots=True)
class Redundancy:
    array: str
    now: int  # further member failures the array survives now (−1: already lost)
    during: int  # the fewest while the plan runs and its syncs last
    after: int  # once the plan and its syncs are done
    lost_if: tuple[str, ...] = ()  # members whose next failure loses it (in the weakest state)

    def to_json(self) -> dict[str, Any]:
        return {
            "array": self.array,
            "now": self.now,
            "during": self.during,
            "after": self.after,
            "lost_if": list(self.lost_if),
        }


@dataclass(frozen=True, slots=True)
class Consequences:
    syncs: tuple[SyncForecast, ...] = ()
    redundancy: tuple[Redundancy, ...] = ()
    confirm: Confirm = "yes"

    def to_json(self) -> dict[str, Any]:
        return {
            "syncs": [s.to_json() for s in self.syncs],
            "redundancy": [r.to_json() for r in self.redundancy],
            "confirm": self.confirm,
        }

    def lines(self) -> list[str]:
        """The consequences in words, one line per sync and per array whose redundancy drops."""
        out = [sync_line(s) for s in self.syncs]
        by_array = {s.array: s for s in self.syncs}
        for r in self.redundancy:
            line = redundancy_line(r, by_array.get(r.array))
            if line:
                out.append(line)
        return out


@dataclass(frozen=True, slots=True)
class Limits:
    """md's system-wide speed limits (``dev.raid.speed_limit_min/max``, KiB/s) where known, and
    arrays' own ``md/sync_speed_min/max`` ("(local)") by kernel name."""

    system: tuple[int | None, int | None] = (None, None)
    local: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)


# ---- the arrays as the plan changes them ---------------------------------------------------


@dataclass
class _Member:
    device: str
    slot: int | None
    role: str  # in_sync | rebuilding | spare | faulty | replacement
    size: int  # bytes of the member in the array
    replaces: str | None = None  # a replacement: the member it copies


@dataclass
class _Array:
    name: str
    level: str
    raid_disks: int
    layout: str | None
    bitmap: bool
    members: list[_Member]
    new: bool = False  # created by this plan
    syncs: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (action, targets)
    changed: bool = False  # a step changes its members
    touched: bool = False  # a step names it

    def member(self, dev: str) -> _Member | None:
        return next((m for m in self.members if m.device == dev), None)

    def working(self, *, done: bool = False) -> dict[int, str]:
        """slot → device of the members holding in-sync data (``done``: once syncs finish)."""
        out: dict[int, str] = {}
        for m in self.members:
            if m.slot is None or m.role == "faulty":
                continue
            if m.role == "in_sync" or (done and m.role == "rebuilding"):
                out.setdefault(m.slot, m.device)
        return out

    def survives(self, *, done: bool = False) -> int:
        w = self.working(done=done)
        return levels.failures_left(self.level, self.raid_disks, self.layout, frozenset(w))

    def lost_if(self, *, done: bool = False) -> tuple[str, ...]:
        return levels.lost_if(self.level, self.raid_disks, self.layout, self.working(done=done))

    def vacant_slot(self) -> int | None:
        taken = {m.slot for m in self.members if m.slot is not None and m.role != "faulty"}
        return next((s for s in range(self.raid_disks) if s not in taken), None)

    def finish(self) -> None:
        """The syncs done: rebuilt members in sync, a replaced member gone."""
        for m in list(self.members):
            if m.role == "rebuilding":
                m.role = "in_sync"
            elif m.role == "replacement":
                old = self.member(m.replaces or "")
                if old is not None:
                    self.members.remove(old)
                    m.slot = old.slot
                m.role = "in_sync"


def working_slots(a: MdArray) -> dict[int, str]:
    """slot → device of ``a``'s members that hold in-sync data now (not rebuilding, not faulty)."""
    return _from_machine(a).working()


def survives_without(a: MdArray, device: str) -> int:
    """Further failures ``a`` survives once ``device`` has failed (−1: the failure stops it)."""
    w = working_slots(a)
    rest = frozenset(s for s, d in w.items() if d != device)
    return levels.failures_left(a.level, _from_machine(a).raid_disks, a.layout, rest)


def _from_machine(a: MdArray, machine: Machine | None = None) -> _Array:
    """The array as probed; a member's size is md's (md/dev-*/size), else its device's, at
    most the array's component size (sync_model.component_bytes)."""

    comp = component_bytes(a)

    def size(m: MdMember) -> int:
        if m.size_kib:
            own = m.size_kib * 1024
        else:
            own = _device_bytes(machine, m.device) if machine is not None else 0
        # what the array uses of it (an array made with --size uses less than the device)
        return min(own, comp) if own and comp else own or comp or 0

    ms = [
        _Member(m.device, m.slot, m.role, size(m))
        for m in a.members
        if m.role in ("in_sync", "rebuilding", "spare", "faulty", "replacement")
    ]
    raid_disks = a.raid_disks or len([m for m in ms if m.slot is not None])
    return _Array(a.name, a.level, raid_disks, a.layout, a.bitmap is not None, ms)


def _device_bytes(machine: Machine, dev: str) -> int:
    size = getattr(machine.device(dev), "size_bytes", None)
    return size if isinstance(size, int) and size > 0 else 0


def _strip(p: str) -> str:
    return p[5:] if p.startswith("/dev/") and "/" not in p[5:] else p


def _array_of(machine: Machine, arrays: dict[str, _Array], path: str) -> _Array | None:
    """The array at ``path`` (/dev/md127, /dev/md/127) as the plan has left it so far."""
    for planned in arrays.values():
        if path in (f"/dev/{planned.name}", planned.name, f"/dev/md/{planned.name[2:]}"):
            return planned
    for a in machine.arrays:
        names = {a.path, f"/dev/{a.name}"}
        if a.array_name:
            names.add(f"/dev/md/{a.array_name.rsplit(':', 1)[-1]}")
        if path in names and not a.is_container:
            return arrays.setdefault(a.name, _from_machine(a, machine))
    return None


def _create(machine: Machine, argv: tuple[str, ...]) -> _Array:
    opts = {o.partition("=")[0]: o.partition("=")[2] for o in argv[3:] if o.startswith("-")}
    devs = [_strip(d) for d in argv[3:] if not d.startswith("-")]
    n = int(opts.get("--raid-devices", len(devs)) or len(devs))
    level = opts.get("--level", "")
    level = level if level == "linear" else f"raid{level}"
    layout = opts.get("--layout") or ("n2" if level == "raid10" else None)
    size = min((_device_bytes(machine, d) for d in devs[:n]), default=0)
    members = [_Member(d, i, "in_sync", size) for i, d in enumerate(devs[:n])]
    members += [_Member(d, None, "spare", size) for d in devs[n:]]
    name = argv[2].rsplit("/", 1)[-1]
    a = _Array(
        name if not name.isdigit() else f"md{name}",
        level,
        n,
        layout,
        opts.get("--bitmap", "internal") != "none",
        members,
        new=True,
        changed=True,
        touched=True,
    )
    if level in levels.REDUNDANT and "--assume-clean" not in argv:
        # --assume-clean: md starts the array in sync (mdadm Create.c sets resync_start to
        # MaxSector), nothing is written until the data is
        if level in ("raid4", "raid5") and members:
            # mdadm Create.c builds a RAID-4/5 degraded and recovers the last member
            members[n - 1].role = "rebuilding"
        a.syncs.append(("resync", ()))
    return a


def _manage(machine: Machine, a: _Array, op: str, dev: str) -> None:
    m = a.member(dev)
    a.changed = True
    if op == "--fail" and m is not None:
        m.role = "faulty"
        a.syncs = [(act, t) for act, t in a.syncs if dev not in t]
    elif op == "--remove" and m is not None:
        a.members.remove(m)
    elif op in ("--add", "--re-add", "--add-spare"):
        size = max((x.size for x in a.members), default=0) or _device_bytes(machine, dev)
        if m is not None:
            a.members.remove(m)
        slot = a.vacant_slot()
        # md recovers onto a spare at once when a slot is vacant (md_check_recovery ->
        # remove_and_add_spares), whichever option added it
        if slot is not None and a.level in levels.REDUNDANT:
            a.members.append(_Member(dev, slot, "rebuilding", size))
            how = "re-add" if op == "--re-add" and a.bitmap else "recover"
            a.syncs.append((how, (dev,)))
        else:
            a.members.append(_Member(dev, None, "spare", size))


def _replace(a: _Array, old: str, new: str) -> None:
    n = a.member(new)
    o = a.member(old)
    a.changed = True
    if n is None or o is None:
        return
    n.role, n.slot, n.replaces = "replacement", o.slot, old
    a.syncs.append(("replace", (new,)))


def _grow(a: _Array, argv: tuple[str, ...]) -> None:
    for o in argv[3:]:
        if o.startswith("--raid-devices="):
            new = int(o.split("=", 1)[1])
            old = a.raid_disks
            a.changed = True
            spares = [m for m in a.members if m.role == "spare"]
            if new > old:
                for i, m in enumerate(spares[: new - old]):
                    m.slot, m.role = old + i, "rebuilding"
            else:
                for m in a.members:
                    if m.slot is not None and m.slot >= new:
                        m.slot, m.role = None, "spare"
            a.raid_disks = new
            if a.level == "raid1":
                if new > old:
                    targets = tuple(m.device for m in spares[: new - old])
                    a.syncs.append(("recover", targets))
            else:
                for m in a.members:
                    if m.role == "rebuilding":
                        m.role = "in_sync"  # a reshape takes the spares in as members
                a.syncs.append(("reshape", ()))


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
    a: _Array,
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


def _running(machine: Machine, a: _Array, limits: Limits) -> SyncForecast | None:
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
        _from_machine(arr, machine),
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


def _apply_limit(argv: tuple[str, ...], stdin: str | None, limits: Limits) -> Limits:
    """A step that sets md's speed limits: the forecasts after it use the new ones."""
    if (
        argv[:2] == ("sysctl", "-w")
        and len(argv) == 3
        and argv[2].startswith("dev.raid.speed_limit_")
    ):
        key, _, v = argv[2].partition("=")
        if v.isdigit():
            lo, hi = limits.system
            sys_new: tuple[int | None, int | None] = (
                (int(v), hi) if key.endswith("min") else (lo, int(v))
            )
            return replace(limits, system=sys_new)
    if argv[0] == "tee" and len(argv) == 2 and argv[1].startswith("/sys/block/"):
        parts = argv[1].split("/")
        v = (stdin or "").strip()
        if len(parts) == 6 and parts[5] in ("sync_speed_min", "sync_speed_max"):
            name = parts[3]
            lo, hi = limits.local.get(name, (None, None))
            n = int(v) if v.isdigit() else None
            new: tuple[int | None, int | None] = (n, hi) if parts[5].endswith("min") else (lo, n)
            return replace(limits, local={**limits.local, name: new})
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
    arrays: dict[str, _Array] = {}
    before: dict[str, tuple[int, dict[int, str]]] = {}
    lowest: dict[str, tuple[int, tuple[str, ...]]] = {}
    sync_action: dict[str, str] = {}  # check/repair a step starts

    before_lost: dict[str, tuple[str, ...]] = {}

    def seen(a: _Array) -> None:
        if a.name not in before:
            if a.new:
                before[a.name] = (-2, {})
            else:
                before[a.name] = (a.survives(), a.working())
                lowest[a.name] = (a.survives(), a.lost_if())
                before_lost[a.name] = a.lost_if()

    def low(a: _Array) -> None:
        now, lost = a.survives(), a.lost_if()
        known = lowest.get(a.name)
        if known is None or now < known[0] or (now == known[0] and len(lost) > len(known[1])):
            lowest[a.name] = (now, lost)

    for step in plan.steps:
        argv = step.argv
        limits = _apply_limit(argv, step.stdin, limits)
        a: _Array | None = None
        if argv[:2] == ("sysctl", "-w"):
            # md's system-wide limits: every running sync (without its own limit) is affected
            for arr in machine.arrays:
                if arr.sync is not None and arr.sync.active and not arr.is_container:
                    t = _array_of(machine, arrays, arr.path)
                    if t is not None:
                        seen(t)
                        t.touched = True
                        low(t)
        if argv[0] == "mdadm" and len(argv) > 3 and argv[1] == "--create":
            a = _create(machine, argv)
            arrays[a.name] = a
            seen(a)
        elif argv[0] == "mdadm" and len(argv) == 4 and argv[2].startswith("--"):
            a = _array_of(machine, arrays, argv[1])
            if a is not None:
                seen(a)
                _manage(machine, a, argv[2], _strip(argv[3]))
        elif argv[0] == "mdadm" and len(argv) == 6 and argv[2] == "--replace":
            a = _array_of(machine, arrays, argv[1])
            if a is not None:
                seen(a)
                _replace(a, _strip(argv[3]), _strip(argv[5]))
        elif argv[0] == "mdadm" and len(argv) >= 4 and argv[1] == "--grow":
            a = _array_of(machine, arrays, argv[2])
            if a is not None:
                seen(a)
                _grow(a, argv)
        elif argv[0] == "tee" and len(argv) == 2 and argv[1].startswith("/sys/block/md"):
            a = _array_of(machine, arrays, "/dev/" + argv[1].split("/")[3])
            if a is not None:
                seen(a)
                v = (step.stdin or "").strip()
                if argv[1].endswith("/sync_action") and v in ("check", "repair"):
                    sync_action[a.name] = v
        elif argv[0] in ("mkfs.ext4", "mkfs.xfs", "pvcreate") and argv[-1].startswith("/dev/"):
            a = _array_of(machine, arrays, argv[-1])
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
    return Consequences(tuple(syncs), tuple(out), "typed" if destroys or weaker else "yes")


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
