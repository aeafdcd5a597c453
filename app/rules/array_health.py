"""An array's own exposure as findings: degraded (for how long, and what its rebuild does), no
spare to rebuild onto, a spare that does not fit the array (too small, slower, of another
class), and arrays that share spares (mdadm.conf ``spare-group=``) with nothing moving them.

- How long: md's own line when the member failed ("md/raid:md0: Disk failure on sdb1,
  disabling device.": raid5.c ``raid5_error()``, raid1.c/raid10.c ``raid1_error()``/
  ``raid10_error()``), read from this boot's kernel log into ``AuditInputs.degraded_since``;
  none there: "since before this boot or not in the kernel log".
- A spare too small cannot take a slot: md refuses a device smaller than the array's component
  size (md.c ``bind_rdev_to_array()``: ``-ENOSPC``), and mdadm --monitor does not move such a
  spare from another array of its spare-group.
- Only ``mdadm --monitor`` moves spares between the arrays of a spare-group (mdadm's Monitor.c;
  mdadm.conf(5) ``spare-group``): with mdmonitor.service inactive, a spare in one array never
  rebuilds another.
"""

from __future__ import annotations

from collections.abc import Iterator

from app.format import duration, percent, speed
from app.model import levels, sync_model
from app.model.devices import Disk, Machine, MdArray, MdMember
from app.rules.finding import Finding
from app.rules.inputs import AuditInputs
from app.rules.mdconf import norm_uuid


def _disk(machine: Machine, dev: str) -> Disk | None:
    under = machine.disks_under(dev)
    return machine.disk(under[0]) if len(under) == 1 else None


def _survives(a: MdArray) -> int:
    working = frozenset(m.slot for m in a.members if m.role == "in_sync" and m.slot is not None)
    return levels.failures_left(a.level, a.raid_disks or 0, a.layout, working)


def _since(a: MdArray, inputs: AuditInputs) -> str:
    got = inputs.degraded_since.get(a.name)
    if got is None or inputs.now is None:
        return "since before this boot, or md's failure line is not in the kernel log"
    at, line = got
    return f"for {duration(max(0.0, inputs.now - at))} (md: {line!r})"


def rebuild_state(a: MdArray) -> str:
    """What the array's rebuild does now, in words."""
    s = a.sync
    spares = [m.device for m in a.members if m.role == "spare"]
    if s is not None and s.action in sync_model.WAITING_ACTIONS:
        return f"its {s.queued or 'recovery'} waits its turn ({s.action}): nothing rebuilt yet"
    if s is not None and s.action == "frozen":
        return "the rebuild is frozen (sync_action frozen): nothing rebuilds until it is idle"
    running = sync_model.md_sync(s)
    if running is not None and running.action in ("recover", "replace"):
        eta = running.eta_s
        return (
            f"rebuilding onto {', '.join(running.targets)}: {percent(running.fraction)} done at "
            f"{speed(running.speed_kib_s)}, about {duration(eta)} left"
        )
    if running is not None:
        return f"not rebuilding: a {running.action} runs"
    if spares:
        if a.array_state == "read-auto":
            return (
                f"not rebuilding: {', '.join(spares)} waits as a spare; the array is "
                "read-auto, and md starts the recovery at its first write"
            )
        return f"not rebuilding although {', '.join(spares)} is a spare"
    return "not rebuilding: no spare"


def _degraded(a: MdArray, inputs: AuditInputs) -> Iterator[Finding]:
    left = _survives(a)
    state = rebuild_state(a)
    running = state.startswith("rebuilding")
    missing = a.degraded
    n = a.raid_disks or 0
    after = (
        f"until it ends, {a.name} survives {left} further failure{'s' if left != 1 else ''}"
        if left > 0
        else f"meanwhile {a.name} survives no further failure: one more lost member loses it"
    )
    yield Finding(
        "warning" if running and left > 0 else "error",
        "md-degraded",
        a.name,
        f"{a.name} is degraded: {missing} of {n} members missing",
        f"{a.name} ({levels.label(a.level)}) runs without {missing} of its {n} members "
        f"{_since(a, inputs)}; {state}; {after}.",
    )


def _group_spares(
    machine: Machine, a: MdArray, inputs: AuditInputs
) -> tuple[str | None, list[tuple[MdArray, MdMember]]]:
    """The spare-group ``a`` is in (mdadm.conf) and the spares other arrays of it hold."""
    groups = _spare_groups(machine, inputs)
    for name, arrays in groups.items():
        if a in arrays:
            return name, [
                (o, m) for o in arrays if o is not a for m in o.members if m.role == "spare"
            ]
    return None, []


def _spare_groups(machine: Machine, inputs: AuditInputs) -> dict[str, list[MdArray]]:
    by_uuid = {norm_uuid(a.uuid): a for a in machine.arrays if a.uuid}
    out: dict[str, list[MdArray]] = {}
    for e in inputs.mdadm_conf or ():
        group = e.options.get("spare-group")
        a = by_uuid.get(norm_uuid(e.uuid)) if e.uuid else None
        if group and a is not None:
            out.setdefault(group, []).append(a)
    return out


def _no_spare(machine: Machine, a: MdArray, inputs: AuditInputs) -> Iterator[Finding]:
    if a.sync is not None and a.sync.active:
        return
    if any(m.role == "spare" for m in a.members):
        return
    group, shared = _group_spares(machine, a, inputs)
    comp = sync_model.component_bytes(a) or 0
    fits = [(o, m) for o, m in shared if not m.size_kib or m.size_kib * 1024 >= comp]
    if fits and inputs.mdmonitor == "active":
        return  # mdadm --monitor moves one of them over
    why = ""
    if fits:
        why = (
            f" Spare-group {group} has {', '.join(m.device for _, m in fits)}, but "
            "mdmonitor.service is not active, so nothing moves it here."
        )
    elif shared:
        why = f" Spare-group {group}'s spares are smaller than {a.name}'s members."
    yield Finding(
        "error",
        "md-degraded-no-spare",
        a.name,
        f"{a.name} is degraded and has no spare to rebuild onto",
        f"Nothing rebuilds {a.name}'s missing member: it holds no spare.{why} Add a disk at "
        f"least as large as its members (mdadm {a.path} --add /dev/DISK, or the member "
        "action 'add'); md starts the recovery at once.",
    )


def _spare_fit(machine: Machine, a: MdArray, spare: MdMember, where: str) -> list[str]:
    """How a spare differs from the members it would join: smaller, slower, another class."""
    out: list[str] = []
    comp = sync_model.component_bytes(a)
    if spare.size_kib and comp and spare.size_kib * 1024 < comp:
        out.append(
            f"it is smaller ({spare.size_kib * 1024:,} B) than {a.name}'s members use "
            f"({comp:,} B): md refuses it"
        )
    d = _disk(machine, spare.device)
    members = [
        x for m in a.members if m.role == "in_sync" and (x := _disk(machine, m.device)) is not None
    ]
    if d is None or not members:
        return out
    kinds = {x.rotational for x in members}
    if len(kinds) == 1 and d.rotational is not None and d.rotational not in kinds:
        theirs = "SSDs" if False in kinds else "hard disks"
        out.append(
            f"it is {'an SSD' if d.is_ssd else 'a hard disk'} while the members are {theirs}"
        )
    mine = sync_model.rated_member_kib_s(d.rotational, d.transport)
    theirs_kib = sync_model.members_rated_kib_s(
        machine, [m.device for m in a.members if m.role == "in_sync"]
    )
    if mine and theirs_kib and mine < theirs_kib:
        out.append(
            f"it is slower ({d.transport or '?'}, about {speed(mine)}) than the members "
            f"(about {speed(theirs_kib)}): the rebuild, and the array after it, run at its pace"
        )
    if d.transport == "usb" and all(x.transport != "usb" for x in members):
        out.append("it hangs on USB, the members do not: a bridge reset drops it mid-rebuild")
    return [f"{spare.device}{where}: {w}" for w in out]


def _spares(machine: Machine, a: MdArray, inputs: AuditInputs) -> Iterator[Finding]:
    problems: list[str] = []
    for m in a.members:
        if m.role == "spare":
            problems += _spare_fit(machine, a, m, "")
    group, shared = _group_spares(machine, a, inputs)
    for o, m in shared:
        problems += _spare_fit(machine, a, m, f" (a spare of {o.name}, spare-group {group})")
    if not problems:
        return
    yield Finding(
        "warning" if a.is_degraded else "advice",
        "md-spare-mismatch",
        a.name,
        f"{a.name}'s spare does not fit its members",
        "; ".join(problems)
        + f". Keep a spare at least as large, as fast and of the same kind as {a.name}'s members.",
    )


def _unwatched_groups(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    if inputs.mdmonitor is None or inputs.mdmonitor == "active":
        return
    for group, arrays in _spare_groups(machine, inputs).items():
        if len(arrays) < 2:
            continue
        names = ", ".join(a.name for a in arrays)
        yield Finding(
            "warning",
            "md-spare-group-unwatched",
            "",
            f"Spare-group {group} ({names}) is not watched",
            f"mdadm.conf puts {names} in spare-group {group}: a spare of one rebuilds another "
            f"only when mdadm --monitor moves it, and mdmonitor.service is {inputs.mdmonitor}. "
            "Enable it (the md-monitor-inactive finding's plan); raidman monitor does not move "
            "spares.",
        )


def check(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    for a in machine.arrays:
        if a.is_container or a.level not in levels.REDUNDANT:
            continue
        if a.is_degraded:
            yield from _degraded(a, inputs)
            yield from _no_spare(machine, a, inputs)
        yield from _spares(machine, a, inputs)
    yield from _unwatched_groups(machine, inputs)
