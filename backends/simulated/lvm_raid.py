"""LVM RAID LVs in the simulator: each image's PVs, dm-raid's health characters, a sync that
moves with the simulated clock (the VM's raid1 moved at ~1.6 MiB/s under md's 1000 KiB/s min),
and what ``dmsetup status --target raid`` prints and ``lvchange --syncaction`` starts. The probe
hands the same :class:`app.model.lvm_raid.RaidLv` out as the Linux one reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.model.devices import LogicalVolume
from app.model.lvm_raid import DmRaidStatus, RaidImage, RaidLv

SECTOR = 512
IDLE = "idle"


@dataclass
class SimRaid:
    images: list[tuple[str, ...]]  # the PVs of each image, in image order
    image_bytes: int
    raid_type: str = "raid1"  # dm-raid's name: raid1, raid5_ls, ...
    health: list[str] = field(default_factory=list)  # A / a / D per image
    action: str = IDLE
    started_at: float = 0.0
    start_done: int = 0  # sectors done when the sync started
    rate_kib_s: int = 0  # progress rate of the running sync
    mismatches: int = 0  # raid_mismatch_count (the last check's)
    finds: int = 0  # what the next check or repair counts
    min_rate_kib_s: int | None = None
    max_rate_kib_s: int | None = None

    def __post_init__(self) -> None:
        if not self.health:
            self.health = ["A"] * len(self.images)

    @property
    def total(self) -> int:
        return self.image_bytes // SECTOR

    def done(self, t: float) -> int:
        if self.action == IDLE:
            return self.total
        moved = int(max(0.0, t - self.started_at) * self.rate_kib_s * 2)
        return min(self.total, self.start_done + moved)

    def settle(self, t: float) -> None:
        """A sync that reached the end by ``t`` is over: images in sync, a check's count kept."""
        if self.action != IDLE and self.done(t) >= self.total:
            if self.action in ("check", "repair"):
                self.mismatches = self.finds
                if self.action == "repair":
                    self.finds = 0
            self.health = ["D" if c == "D" else "A" for c in self.health]
            self.action = IDLE

    def start(self, action: str, t: float, rate_kib_s: int) -> None:
        self.settle(t)
        self.action, self.started_at, self.start_done, self.rate_kib_s = action, t, 0, rate_kib_s
        self.mismatches = 0


def attr(raid: SimRaid) -> str:
    """lv_attr of the LV: rwi-a-r- plus the health character."""
    bit = "p" if "D" in raid.health else "m" if raid.mismatches and raid.action == IDLE else "-"
    return f"rwi-a-r-{bit}-"


def raid_model(lv: LogicalVolume, raid: SimRaid, t: float) -> RaidLv:
    raid.settle(t)
    done = raid.done(t)
    dm = DmRaidStatus(
        name=lv.dm_name,
        raid_type=raid.raid_type,
        devices=len(raid.images),
        health="".join(raid.health),
        done_sectors=done,
        total_sectors=raid.total,
        sync_action=raid.action,
        mismatch_cnt=raid.mismatches,
        data_offset=0,
        journal="-",
    )
    bit = attr(raid)[8]
    health = {"p": "partial", "m": "mismatches exist"}.get(bit)
    images = tuple(
        RaidImage(
            i,
            f"{lv.name}_rimage_{i}",
            f"{lv.name}_rmeta_{i}",
            pvs if raid.health[i] != "D" else ("[unknown]",),
            raid.health[i],
        )
        for i, pvs in enumerate(raid.images)
    )
    return RaidLv(
        images=images,
        sync_percent=round(100.0 * done / raid.total, 2) if raid.total else None,
        sync_action=raid.action,
        mismatches=raid.mismatches,
        min_rate_kib_s=raid.min_rate_kib_s,
        max_rate_kib_s=raid.max_rate_kib_s,
        health_status=health,
        health_bit=bit if bit != "-" else None,
        dm=dm,
    )


def status_line(lv: LogicalVolume, raid: SimRaid, t: float) -> str:
    """One line of ``dmsetup status --target raid`` (dm-raid.rst's format)."""
    raid.settle(t)
    length = lv.size_bytes // SECTOR
    return (
        f"{lv.dm_name}: 0 {length} raid {raid.raid_type} {len(raid.images)} "
        f"{''.join(raid.health)} {raid.done(t)}/{raid.total} {raid.action} {raid.mismatches} 0 -"
    )
