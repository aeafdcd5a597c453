"""What the Sync card says about md's speed limits for one running sync: the limits in force,
the sync's speed in the same unit, whether the limit holds it back, and whether it is boosted.

md's ``speed_limit_min/max`` (and an array's ``sync_speed_min/max``) throttle each *member's*
sync I/O (Documentation/admin-guide/md.rst), while ``sync_speed`` is the *progress* of the sync
position. Where progress counts array sectors (a RAID-10 resync/check/repair) one unit of
progress is several members' worth, so the two are compared only after converting with
:func:`app.model.levels.progress_per_member`. Pure: no I/O, no UI.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.format import speed
from app.model import levels
from app.model.devices import MdArray
from app.sync.boost import SYSCTL_MAX, SYSCTL_MIN, BoostRecord
from app.sync.tracker import SyncView

# within 5 % of the bound counts as held by it (md's sleep-when-over-the-limit loop averages a
# little under the bound: seed 000's 384214 K/s under a bound of 2 × 200000)
AT_CEILING = 0.95


@dataclass(frozen=True, slots=True)
class SyncLimits:
    array: str
    action: str
    progress_kib_s: int | None  # the kernel's sync_speed (array progress)
    min_kib_s: int | None  # in force, per member (sync_speed_min)
    max_kib_s: int | None  # in force, per member (sync_speed_max)
    factor: float  # members' worth of data per unit of progress
    why_factor: str  # "" when 1
    boost: BoostRecord | None = None

    @property
    def member_kib_s(self) -> float | None:
        """The sync's speed per member: the unit the limits are in."""
        if self.progress_kib_s is None:
            return None
        return self.progress_kib_s / self.factor

    @property
    def at_ceiling(self) -> bool:
        """The per-member speed is at (within 5 % of) the ceiling: the limit holds it back."""
        m = self.member_kib_s
        if m is None or not self.max_kib_s:
            return False
        return m >= AT_CEILING * self.max_kib_s

    @property
    def boosted(self) -> bool:
        return self.boost is not None

    def limits_text(self) -> str:
        """ "limits 1000.0 KiB/s … 195.3 MiB/s per member; now 187.6 MiB/s per member" """
        lo = speed(self.min_kib_s)
        hi = speed(self.max_kib_s)
        s = f"limits {lo} … {hi} per member; now {speed(self.member_kib_s)} per member"
        if self.why_factor:
            s += f" ({speed(self.progress_kib_s)} progress ÷ {self.factor:g}: {self.why_factor})"
        return s

    def state_text(self) -> str:
        """Whether the limit is what holds the sync back, and what a boost changed."""
        if self.boost is None:
            if self.at_ceiling:
                return "at its ceiling: raising the limit (b: boost) would make it faster"
            return ""
        raised = []
        for key, label in ((SYSCTL_MIN, "min"), (SYSCTL_MAX, "max")):
            new = self.boost.applied.get(f"sysctl:{key}")
            old = self.boost.previous.get(f"sysctl:{key}")
            if new is not None:
                raised.append(f"{label} {speed(int(old)) if old else '?'} → {speed(int(new))}")
        cache = [v for k, v in self.boost.applied.items() if k.endswith("/stripe_cache_size")]
        if cache:
            old = next(
                (v for k, v in self.boost.previous.items() if k.endswith("/stripe_cache_size")),
                "?",
            )
            raised.append(f"stripe cache {old} → {cache[0]}")
        what = ", ".join(raised) if raised else "nothing needed raising"
        s = (
            f"boosted ({what}): limits are restored when this {self.boost.action} of "
            f"{self.array} ends, even after a restart of raidman"
        )
        if self.at_ceiling:
            s += "; still at the boosted ceiling"
        elif self.max_kib_s is not None:
            s += "; now below its ceiling (the disks limit it)"
        return s


def sync_limits(view: SyncView, array: MdArray | None, boost: BoostRecord | None) -> SyncLimits:
    """The limits of ``view``'s sync; ``array`` (the probed array) gives the level's progress
    unit, ``boost`` the boost record of the array, if any."""
    factor = 1.0
    why = ""
    if array is not None:
        factor = levels.progress_per_member(
            array.level, array.raid_disks, array.layout, view.action
        )
        if factor != 1.0:
            layout = f" {array.layout}" if array.layout else ""
            why = (
                f"a {levels.label(array.level or '')}{layout} {view.action} of "
                f"{array.raid_disks} counts array sectors"
            )
    if boost is not None and boost.action != view.action:
        boost = None  # a record left from another sync: restored by the session, not shown
    return SyncLimits(
        array=view.array,
        action=view.action,
        progress_kib_s=view.speed_kib_s,
        min_kib_s=view.min_speed_kib_s,
        max_kib_s=view.max_speed_kib_s,
        factor=factor,
        why_factor=why,
        boost=boost,
    )
