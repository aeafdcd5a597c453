"""The consequences of a plan in words (``app.plans.consequences``), as the text and TUI
previews show them: "md0 recover: about 9h 57m at 24.4 MiB/s (the members' speed); writes
855.0 GiB to sdf1 = 0.9 × its size", "until then md0 survives no further failure: sde1, sdd1,
sdc1; afterwards it survives 1 further failure again"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from app.format import duration, human_bytes, speed
from app.model import Machine
from app.model.sync_model import MemberWrite, SyncForecast

if TYPE_CHECKING:
    from app.plans.consequences import Redundancy


def _survives(n: int) -> str:
    if n < 0:
        return "is lost"
    if n == 0:
        return "survives no further failure"
    return f"survives {n} further failure{'s' if n != 1 else ''}"


def sync_line(s: SyncForecast) -> str:
    """ "md0 recover: about 9h 57m at 24.4 MiB/s (md's limit); writes 931.4 GiB to sdf1 = 1.0 ×
    its size" """
    lo, hi = s.duration_s_low, s.duration_s_high
    if lo is None:
        took = "duration unknown"
    elif hi is None:
        took = f"at least {duration(lo)}"
    elif abs(hi - lo) < 1:
        took = f"about {duration(lo)}"
    else:
        took = f"{duration(lo)} … {duration(hi)}"
    rate = f" at {speed(s.speed_kib_s)}" if s.speed_kib_s else ""
    why = f" ({s.speed_why})" if s.speed_why and s.speed_kib_s else ""
    written = [m for m in s.members if m.bytes_high > 0]
    if written:
        w = "writes " + ", ".join(_written(m) for m in written)
    else:
        w = "writes nothing (reads only)"
    waits = ""
    if s.waits_for:
        first = f" (about {duration(s.wait_s)})" if s.wait_s is not None else ""
        waits = f"; starts after {', '.join(s.waits_for)}'s sync{first}: they share a disk"
    return f"{s.array} {s.action}: {took}{rate}{why}; {w}{waits}"


def _written(m: MemberWrite) -> str:
    def x(n: int) -> str:
        return f"{n / m.member_bytes:.1f}" if m.member_bytes else "?"

    if m.bytes_low == m.bytes_high:
        return (
            f"{human_bytes(m.bytes_high, trim=True)} to {m.device} = {x(m.bytes_high)} × its size"
        )
    return (
        f"{human_bytes(m.bytes_low, trim=True)} … {human_bytes(m.bytes_high, trim=True)} to "
        f"{m.device} = {x(m.bytes_low)} … {x(m.bytes_high)} × its size"
    )


def redundancy_line(r: Redundancy, sync: SyncForecast | None = None) -> str:
    """ "until then md0 survives no further failure: sda1, sdc1, sdd1, sde1" (empty when nothing
    changes and the array keeps some redundancy)."""
    who = f": {', '.join(r.lost_if)}" if r.lost_if else ""
    if r.during < r.now:
        when = "until then" if sync is not None and r.after > r.during else "from the first step"
        s = f"{when} {r.array} {_survives(r.during)}{who}"
        if r.after == r.now:
            return s + f"; afterwards it {_survives(r.after)} again"
        s += f" (now it {_survives(r.now)})"
        if r.after != r.during:
            s += f"; afterwards it {_survives(r.after)}"
        return s
    if r.after < r.now:
        return f"afterwards {r.array} {_survives(r.after)}{who} (now it {_survives(r.now)})"
    if r.during <= 0:
        return f"{r.array} {_survives(r.during)} meanwhile{who}"
    return ""


def offline_lines(machine: Machine, argvs: Sequence[Sequence[str]]) -> list[str]:
    """What stopping or deleting an array means, from the argv: "md127 (raid10, 4 members,
    1.0 GiB) stops: what it holds is unreachable until it is assembled again", and when every
    member's superblock is erased after, "md127 is deleted: ...". Pure."""
    out: list[str] = []
    erased = {
        a[2].removeprefix("/dev/")
        for a in argvs
        if len(a) == 3 and a[0] == "mdadm" and a[1] == "--zero-superblock"
    }
    for a in argvs:
        if len(a) != 3 or a[0] != "mdadm" or a[1] != "--stop":
            continue
        arr = next((x for x in machine.arrays if a[2] in (x.path, f"/dev/md/{x.name[2:]}")), None)
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
