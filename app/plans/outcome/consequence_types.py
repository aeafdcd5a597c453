"""What running a plan means, as data and in words: :class:`Consequences` (the syncs a plan starts
and each array's redundancy now, during and after: :class:`Redundancy`), the speed limits the
forecasts use (:class:`Limits`), and the lines the text and TUI previews show, e.g. "md0 recover:
about 9h 57m at 24.4 MiB/s (the members' speed); writes 855.0 GiB to sdf1 = 0.9 × its size",
"until then md0 survives no further failure: sde1, sdd1, sdc1; afterwards it survives 1 further
failure again". Computed by :mod:`app.plans.outcome.consequences`; a Plan carries them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from app.format import duration, human_bytes, risk_line, speed
from app.model.risk import RebuildRisk
from app.model.sync_model import MemberWrite, SyncForecast
from app.plans.outcome.lost import Lost

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
class SyncStop:
    """A sync running now that the plan stops: frozen (it does not resume until idle is
    written), ended (a check or repair idled: md does not resume it) or dropped (the member it
    rebuilds fails)."""

    array: str
    action: str
    fraction: float | None  # how far it got
    fate: str  # stopped | ended | dropped
    line: str  # in words
    degraded: bool = False  # the array is degraded: its redundancy waits on this sync

    def to_json(self) -> dict[str, Any]:
        return {
            "array": self.array,
            "action": self.action,
            "fraction": self.fraction,
            "fate": self.fate,
            "degraded": self.degraded,
            "line": self.line,
        }


@dataclass(frozen=True, slots=True)
class Consequences:
    syncs: tuple[SyncForecast, ...] = ()
    redundancy: tuple[Redundancy, ...] = ()
    confirm: Confirm = "yes"
    # arrays the plan stops or deletes, in words (app.plans.guards.lifecycle_checks.offline_lines)
    offline: tuple[str, ...] = ()
    stops: tuple[SyncStop, ...] = ()  # running syncs the plan stops
    lost: tuple[Lost, ...] = ()  # data the plan destroys, by name (app.plans.outcome.lost)
    at_risk: str | None = None  # the name typed to confirm: the thing at risk
    # each rebuild the plan starts, its risk term by term (app.model.risk)
    risks: tuple[RebuildRisk, ...] = ()
    # a check schedule: what its checks read from each disk a year, against its rating
    workload: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "syncs": [s.to_json() for s in self.syncs],
            "redundancy": [r.to_json() for r in self.redundancy],
            "confirm": self.confirm,
            "stops": [s.to_json() for s in self.stops],
            "lost": [x.to_json() for x in self.lost],
        }
        if self.offline:  # only plans that stop an array have it
            d["offline"] = list(self.offline)
        if self.at_risk is not None:
            d["at_risk"] = self.at_risk
        if self.risks:
            d["risks"] = [r.to_json() for r in self.risks]
        if self.workload:
            d["workload"] = list(self.workload)
        return d

    def lines(self) -> list[str]:
        """The consequences in words: what is lost, what stops, one line per sync and per array
        whose redundancy drops."""
        out = [f"LOST: {x.line}" for x in self.lost]
        out += [f"STOPS: {s.line}" for s in self.stops]
        out += [sync_line(s) for s in self.syncs]
        out += [risk_line(r) for r in self.risks]
        by_array = {s.array: s for s in self.syncs}
        for r in self.redundancy:
            line = redundancy_line(r, by_array.get(r.array))
            if line:
                out.append(line)
        return out + list(self.offline) + list(self.workload)


@dataclass(frozen=True, slots=True)
class Limits:
    """md's system-wide speed limits (``dev.raid.speed_limit_min/max``, KiB/s) where known, and
    arrays' own ``md/sync_speed_min/max`` ("(local)") by kernel name."""

    system: tuple[int | None, int | None] = (None, None)
    local: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)


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
    if s.limit_kib_s and s.speed_kib_s and s.speed_kib_s > s.limit_kib_s:
        # md.c md_do_sync: currspeed = done / (seconds since the mark + 1) + 1 is compared with
        # the limit, so the rate md holds runs a little above the limit it shows
        why = (
            f" ({s.speed_why} {speed(s.limit_kib_s)}: md's throttle divides by the seconds since "
            "its mark plus one, so it holds a sync a few % above it)"
        )
    if s.rate_source == "measured" and s.speed_kib_s:
        why += " — measured over the last second"
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
