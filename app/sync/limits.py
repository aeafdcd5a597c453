"""What the Sync card says about md's speed limits for one running sync: the limits in force,
the sync's speed in the same unit, whether the limit holds it back, and whether it is
boosted (the ETA is md's own, ``SyncStatus.eta_s``, on the card as on every screen).

md's ``speed_limit_min/max`` (and an array's own ``sync_speed_min/max``) bound the sync's
*progress* rate — the very figure ``sync_speed`` reports — whatever the level: ``md_do_sync()``
compares ``currspeed``, computed from ``io_sectors`` (the progress count), with
``speed_min()``/``speed_max()`` (see :mod:`app.model.sync_model`). A 4-disk RAID-10 resync held
4,401 KiB/s under ``speed_limit_max`` 4,000 (VM, issue 22): at its ceiling. Pure: no I/O, no UI.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.format import speed
from app.model import sync_model
from app.model.devices import LogicalVolume, MdArray
from app.sync.boost import SYSCTL_MAX, SYSCTL_MIN, BoostRecord
from app.sync.tracker import SyncView


@dataclass(frozen=True, slots=True)
class SyncLimits:
    array: str
    action: str
    progress_kib_s: int | None  # the kernel's sync_speed (progress)
    min_kib_s: int | None  # in force (sync_speed_min): bounds the progress rate
    max_kib_s: int | None  # in force (sync_speed_max)
    local: bool = False  # the max in force is the array's own (md/sync_speed_max "(local)")
    boost: BoostRecord | None = None
    lv: bool = False  # a raid LV's sync ("VG/LV"): its own limits are lvchange's --*recoveryrate
    lv_min: bool = False  # the min in force is the LV's --minrecoveryrate (else md's min)

    @property
    def at_ceiling(self) -> bool | None:
        """The progress rate is at (within 5 % of) the max limit: the limit holds it back.
        None when the speed or the limit is unknown."""
        return sync_model.at_ceiling(self.progress_kib_s, self.max_kib_s)

    @property
    def boosted(self) -> bool:
        return self.boost is not None

    def limits_text(self) -> str:
        """ "limits 1000.0 KiB/s … 3.9 MiB/s; now 4.3 MiB/s" (the same unit: progress). A raid
        LV's names where each comes from: its max may be below md's min, which then holds it
        (md.c md_do_sync throttles only above the min), so "lo … hi" would read backwards."""
        if self.lv:
            who = "its --minrecoveryrate" if self.lv_min else "md's min"
            lo = f"{who} {speed(self.min_kib_s)}"
            hi = (
                f"its --maxrecoveryrate {speed(self.max_kib_s)}"
                if self.max_kib_s is not None
                else "md's max (no --maxrecoveryrate)"
            )
            return f"limits: {lo}, {hi}; now {speed(self.progress_kib_s)}"
        lo = speed(self.min_kib_s)
        hi = speed(self.max_kib_s)
        own = f" ({self.array}'s own)" if self.local else ""
        return f"limits {lo} … {hi}{own}; now {speed(self.progress_kib_s)}"

    def state_text(self) -> str:
        """Whether the limit is what holds the sync back, and what a boost changed."""
        if self.boost is None:
            if self.at_ceiling and self.lv:
                lo, hi = self.min_kib_s, self.max_kib_s
                if lo is not None and hi is not None and hi < lo:
                    # md throttles only above its min (md.c md_do_sync)
                    return (
                        "held at md's min: its --maxrecoveryrate is below it, so it does not bind"
                    )
                return (
                    "at its ceiling: raising its --maxrecoveryrate (lvchange) would make it faster"
                )
            if self.at_ceiling:
                return "at its ceiling: raising the limit (b: boost) would make it faster"
            return ""
        raised = []
        for key, label in ((SYSCTL_MIN, "min"), (SYSCTL_MAX, "max")):
            new = self.boost.applied.get(f"sysctl:{key}")
            old = self.boost.previous.get(f"sysctl:{key}")
            if new is not None:
                raised.append(f"{label} {speed(int(old)) if old else '?'} → {speed(int(new))}")
        for name, label in (("sync_speed_min", "min"), ("sync_speed_max", "max")):
            new = next((v for k, v in self.boost.applied.items() if k.endswith(f"/{name}")), None)
            if new is not None:
                old = next(
                    (v for k, v in self.boost.previous.items() if k.endswith(f"/{name}")), "?"
                )
                raised.append(f"{self.array}'s {label} {_limit(old)} → {_limit(new)}")
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


def _limit(value: str) -> str:
    """A sync_speed_min/max value as written: a number of KiB/s or "system"."""
    return speed(int(value)) if value.strip().isdigit() else value.strip()


def sync_limits(
    view: SyncView,
    array: MdArray | None,
    boost: BoostRecord | None,
    lv_obj: LogicalVolume | None = None,
) -> SyncLimits:
    """The limits of ``view``'s sync; ``array`` (the probed array) says whether the array has
    its own max limit, ``boost`` is the boost record of the array, if any. A raid LV's sync
    ("VG/LV", no md array) carries its LV's --maxrecoveryrate as its max where set, and its
    --minrecoveryrate as its min where ``lv_obj`` (the probed LV) has one."""
    lv = array is None and "/" in view.array
    if boost is not None and boost.action != view.action:
        boost = None  # a record left from another sync: restored by the session, not shown
    return SyncLimits(
        array=view.array,
        action=view.action,
        progress_kib_s=view.speed_kib_s,
        min_kib_s=view.min_speed_kib_s,
        max_kib_s=view.max_speed_kib_s,
        local=(array is not None and array.speed_max_local is not None)
        or (lv and view.max_speed_kib_s is not None),
        boost=boost,
        lv=lv,
        lv_min=bool(
            lv and lv_obj is not None and lv_obj.raid is not None and lv_obj.raid.min_rate_kib_s
        ),
    )
