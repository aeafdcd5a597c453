"""What a benchmark plan costs before it runs: how long it takes at most and what it writes to
each disk, against the disk's rated endurance where known (the plan's consequences say it
before the typed confirmation).

From the plan's own operations: every fio run ends at ``--size`` per job or at ``--runtime``,
whichever comes first, so the runs take at most runs × runtime; the arrays are made with
``--assume-clean`` (no initial sync), so each build, stop and zeroing adds seconds, not a sync.
A write run writes ``numjobs × size`` bytes to its target: the whole amount to a disk measured
alone; spread over an array's members by its level:

* RAID-0: 1/n of it to each of the n members; RAID-1: all of it to every member;
* RAID-10: copies/n to each (raid10.c writes every copy of a chunk);
* RAID-4/5/6: a full-stripe write puts 1/(n − parity) on each member, a small write costs a
  read-modify-write of the data chunk and each parity chunk (raid5.c handle_stripe_dirtying):
  (1 + parity)/n per member; the larger of the two bounds it.
"""

from __future__ import annotations

from app.format import duration
from app.model import Machine, levels
from app.model.endurance import rated_tbw
from app.model.sizes import human_bytes
from app.plans import ops
from app.plans.geometry import PlanError, parse_size
from app.plans.plan import Plan


def member_share(level: str, n: int, layout: str | None) -> float:
    """The share of an array write that lands on each member, at most (see the module doc)."""
    lv = level if level.startswith("raid") else f"raid{level}"
    if n < 1:
        return 1.0
    if lv == "raid0":
        return 1 / n
    if lv == "raid1":
        return 1.0
    if lv == "raid10":
        return min(1.0, levels.raid10_copies(layout) / n)
    if lv in levels.PARITY:
        parity = levels.LEVELS[lv].parity
        return min(1.0, max(1 / max(1, n - parity), (1 + parity) / n))
    return 1.0


def _bytes(size: str) -> int:
    try:
        return parse_size(size)
    except PlanError:
        return 0


def benchmark_cost(plan: Plan, machine: Machine) -> list[str]:
    """The benchmark's duration bound and bytes written per disk, in words; [] for other plans."""
    if plan.kind != "benchmark":
        return []
    arrays: dict[str, ops.CreateArray] = {}
    written: dict[str, float] = {}  # whole disk -> bytes, at most
    runs = 0
    bound = 0
    other = 0
    unbounded = False
    builds = 0
    for s in plan.steps:
        op = s.op
        if isinstance(op, ops.CreateArray):
            arrays[op.path] = op
            builds += 1
        if not isinstance(op, ops.Fio):
            other += 1
            continue
        runs += 1
        if op.runtime is None:
            unbounded = True
        else:
            bound += op.runtime
        if not op.writes_data:
            continue
        total = op.numjobs * _bytes(op.size)
        arr = arrays.get(op.filename)
        if arr is None:
            for disk in machine.disks_under(op.filename.removeprefix("/dev/")):
                written[disk] = written.get(disk, 0) + total
            continue
        share = member_share(arr.level, len(arr.devices), arr.layout)
        for dev in arr.devices:
            for disk in machine.disks_under(dev.removeprefix("/dev/")):
                written[disk] = written.get(disk, 0) + total * share
    took = (
        f"duration unknown: {runs} fio runs, some without a time limit"
        if unbounded
        else f"takes at most {duration(bound)}: {runs} fio runs of at most "
        f"{duration(bound / runs) if runs else '0s'} each"
    )
    out = [
        f"benchmark {took}, plus {other} other steps of seconds each ({builds} "
        f"{'array' if builds == 1 else 'arrays'} built with --assume-clean: no initial sync)"
    ]
    for disk, b in written.items():
        d = machine.disk(disk)
        rating = rated_tbw(d.model if d is not None else None)
        of_rating = (
            f" = {b / rating.bytes:.3%} of its rated {rating.tbw} TB written ({rating.name})"
            if rating is not None
            else " (its rated endurance is not known)"
            if d is not None and d.rotational is not True
            else ""
        )
        out.append(f"benchmark writes at most {human_bytes(int(b))} to {disk}{of_rating}")
    return out
