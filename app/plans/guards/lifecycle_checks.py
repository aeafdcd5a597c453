"""Pre-flight of the array's life (stop, retire, wipe), from the kernel's truth.

* ``stop_refusals``: md refuses to stop an array that is open (drivers/md/md.c ``do_md_stop``:
  "md: %s still in use." when ``mddev->openers`` is above the caller's own, -EBUSY): a mounted
  filesystem, an active LVM volume group (its LVs hold the PV open), a dm/md device stacked on
  it (sysfs ``holders/``). raidman refuses the plan for the same reasons before anything runs,
  from ``app.plans.guards.in_use`` (mountinfo, holders, the model's PVs); a PV whose volume group has
  no active LV holds nothing open and is no refusal.
* ``erase_refusals``: a device whose signatures are erased (``mdadm --zero-superblock``,
  ``wipefs -a``) must be in use by nothing -- the in-use check of a new member -- except by
  the arrays an earlier step of the same plan stops: it is judged on the machine as it will
  be after those stops (the arrays, their edges and their sysfs holders gone). SMART is not
  asked: a failing disk is exactly the one being retired.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from app.format import human_bytes
from app.model import Machine
from app.plans.guards.in_use import Issue, in_use, write_refusals
from app.plans.ops import Op, StopArray, ZeroSuperblock


def _vg_active(machine: Machine, vg: str | None) -> bool:
    return vg is not None and any(lv.vg == vg and lv.active for lv in machine.lvs)


def stop_refusals(machine: Machine, array: str) -> list[Issue]:
    """Why ``array`` (kernel name) cannot be stopped now; [] when it can."""
    a = machine.array(array)
    if a is None:
        return [Issue("unknown", array, "no such md array is running", "not running")]
    pv = machine.pv(array)
    out = []
    for i in in_use(machine, array):
        if pv is not None and i.message.startswith("is an LVM physical volume"):
            if not _vg_active(machine, pv.vg):
                continue
            i = replace(i, message=f"{i.message} with active logical volumes (vgchange -an first)")
        out.append(i)
    return out


def after_stops(
    machine: Machine, stopped: Iterable[str], removed: Iterable[tuple[str, str]] = ()
) -> Machine:
    """``machine`` as it is once the arrays ``stopped`` are stopped and the members ``removed``
    ((array, device): ``mdadm --remove``, which unbinds the member: md.c ``unbind_rdev_from_array``
    drops its holder link) are out of their arrays."""
    gone = set(stopped)
    out = set(removed)
    if not gone and not out:
        return machine
    usage = machine.usage
    if usage is not None:
        usage = replace(
            usage,
            holders=tuple((d, h) for d, h in usage.holders if h not in gone and (h, d) not in out),
        )
    arrays = tuple(
        replace(a, members=tuple(m for m in a.members if (a.name, m.device) not in out))
        for a in machine.arrays
        if a.name not in gone
    )
    return replace(
        machine,
        arrays=arrays,
        edges=tuple(
            (p, c)
            for p, c in machine.edges
            if c not in gone and p not in gone and (c, p) not in out
        ),
        usage=usage,
    )


def erase_refusals(
    machine: Machine,
    devices: Iterable[str],
    stopped: Iterable[str],
    removed: Iterable[tuple[str, str]] = (),
) -> list[Issue]:
    """Why the signatures of ``devices`` must not be erased now (after ``stopped`` stop and the
    members ``removed`` are out of their arrays)."""
    after = after_stops(machine, stopped, removed)
    out: list[Issue] = []
    for d in dict.fromkeys(devices):
        out += write_refusals(after, d)
    return out


def lifecycle_refusals(
    machine: Machine,
    stopped: Iterable[str],
    erased: Iterable[str],
    removed: Iterable[tuple[str, str]] = (),
) -> list[Issue]:
    """The refusals of a plan's stops and erasures (``ArgvDevices.stopped``/``erased``/
    ``removed``)."""
    stops = list(stopped)
    out = [i for a in stops for i in stop_refusals(machine, a)]
    return out + erase_refusals(machine, erased, stops, removed)


def offline_lines(machine: Machine, steps: Sequence[Op]) -> list[str]:
    """What stopping or deleting an array means, from the operations: "md127 (raid10, 4
    members, 1.0 GiB) stops: what it holds is unreachable until it is assembled again", and
    when every member's superblock is erased after, "md127 is deleted: ...". Pure."""
    out: list[str] = []
    erased = {
        d.removeprefix("/dev/")
        for op in steps
        if isinstance(op, ZeroSuperblock)
        for d in op.devices
    }
    for op in steps:
        if not isinstance(op, StopArray):
            continue
        path = op.array_path
        arr = next((x for x in machine.arrays if path in (x.path, f"/dev/md/{x.name[2:]}")), None)
        if arr is None:
            continue
        size = human_bytes(arr.size_bytes, trim=True) if arr.size_bytes else "size unknown"
        n = len(arr.members)
        what = f"{arr.name} ({arr.level}, {n} member{'s' if n != 1 else ''}, {size})"
        members = {m.device for m in arr.members}
        if members and members <= erased:
            out.append(
                f"{what} is deleted: its members' superblocks are erased, the array cannot be "
                "assembled again and its data is gone"
            )
        else:
            out.append(f"{what} stops: what it holds is unreachable until it is assembled again")
    return out
