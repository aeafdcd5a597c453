"""An LVM RAID LV (dm-raid: md's personalities under device-mapper) as raidman reads it.

Sources:

- ``lvs`` fields (lvm2 ``lib/report/columns.h``; ``man lvs``): ``sync_percent``,
  ``raid_sync_action``, ``raid_mismatch_count``, ``raid_min_recovery_rate`` /
  ``raid_max_recovery_rate`` (KiB/s per device, 0 = unset), ``lv_health_status`` and the 9th
  ``lv_attr`` character, the volume health: ``p`` partial (a PV it uses is missing), ``r``
  refresh needed (an image failed and came back), ``m`` mismatches exist (the last check or
  repair counted some), ``w`` write-mostly, ``X`` unknown, ``-`` fine.
- ``dmsetup status`` of the dm-raid target (kernel
  ``Documentation/admin-guide/device-mapper/dm-raid.rst``; ``drivers/md/dm-raid.c``
  ``raid_status()``): ``<s> <l> raid <raid_type> <#devices> <health_chars> <sync_ratio>
  <sync_action> <mismatch_cnt> <data_offset> <journal_char>``; per device ``A`` alive and in
  sync, ``a`` alive but not in sync, ``D`` dead/failed; ``sync_ratio`` is ``done/total`` in
  512-byte sectors of one device (``rs_get_progress()``; ``resync_max_sectors``), the count
  ``sync_percent`` is made from. dm-raid has no ``sync_speed``: a speed is two looks apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SECTOR = 512

# lv_attr[8], the volume health (man lvs)
HEALTH_BITS: dict[str, str] = {
    "p": "partial",
    "r": "refresh needed",
    "m": "mismatches exist",
    "w": "write-mostly",
    "X": "unknown",
}
# dm-raid.rst: the health character of each device
DEVICE_HEALTH: dict[str, str] = {"A": "in sync", "a": "not in sync", "D": "failed"}
# dm-raid.rst: sync_action words (md's, as dm-raid.c decipher_sync_action() prints them)
DM_SYNC_ACTIONS = ("idle", "frozen", "resync", "recover", "check", "repair", "reshape", "undef")


@dataclass(frozen=True, slots=True)
class DmRaidStatus:
    """One ``dmsetup status`` line of a dm-raid target."""

    name: str  # the dm name: "vgr-r1"
    raid_type: str  # raid1, raid5_ls, raid6_zr, raid10, ...
    devices: int
    health: str  # one character per device: A / a / D
    done_sectors: int
    total_sectors: int
    sync_action: str | None = None  # absent before dm-raid 1.5.0
    mismatch_cnt: int | None = None
    data_offset: int | None = None  # sectors
    journal: str | None = None  # A / D / "-" (no journal)

    @property
    def failed(self) -> tuple[int, ...]:
        return tuple(i for i, c in enumerate(self.health) if c == "D")

    @property
    def fraction(self) -> float | None:
        return min(1.0, self.done_sectors / self.total_sectors) if self.total_sectors else None


@dataclass(frozen=True, slots=True)
class RaidImage:
    """Image N of a raid LV: its ``_rimage_N`` and ``_rmeta_N`` sub-LVs and the PVs they use."""

    index: int
    image: str  # "r1_rimage_0"
    meta: str | None  # "r1_rmeta_0" (raid0 has none)
    pvs: tuple[str, ...]  # kernel names of the PVs holding the image and its metadata
    health: str | None = None  # dm-raid's character for this device (A / a / D)
    kernel_name: str | None = None  # the image's dm device ("dm-3"), when active

    @property
    def failed(self) -> bool:
        return self.health == "D" or "[unknown]" in self.pvs


@dataclass(frozen=True, slots=True)
class RaidLv:
    """The RAID state of one LV of segment type raid0/1/4/5/6/10."""

    images: tuple[RaidImage, ...] = ()
    sync_percent: float | None = None
    sync_action: str | None = None  # raid_sync_action: idle, resync, recover, check, repair, ...
    mismatches: int | None = None  # raid_mismatch_count
    min_rate_kib_s: int | None = None  # raid_min_recovery_rate; None = unset (0)
    max_rate_kib_s: int | None = None  # raid_max_recovery_rate; None = unset (0)
    health_status: str | None = None  # lv_health_status ("partial", "refresh needed", ...)
    health_bit: str | None = None  # lv_attr[8] when not "-"
    integrity_mismatches: int | None = None  # integritymismatches (--raidintegrity LVs)
    # raidintegritymode of a --raidintegrity LV: "journal" (lvm's default: every write goes to
    # dm-integrity's journal first, then to its place) or "bitmap"; None without integrity
    integrity_mode: str | None = None
    dm: DmRaidStatus | None = None  # dmsetup status of its target, when read

    @property
    def partial(self) -> bool:
        return self.health_bit == "p" or (self.health_status or "") == "partial"

    @property
    def failed_images(self) -> tuple[RaidImage, ...]:
        return tuple(i for i in self.images if i.failed)

    @property
    def syncing(self) -> bool:
        action = self.dm.sync_action if self.dm is not None else self.sync_action
        return action not in (None, "idle", "frozen", "undef")

    @property
    def health_words(self) -> str | None:
        """What is wrong, in lvm's words: ``lv_health_status``, else the attr bit's meaning."""
        if self.health_status:
            return self.health_status
        return HEALTH_BITS.get(self.health_bit or "")

    def to_json(self) -> dict[str, Any]:
        dm = self.dm
        return {
            "sync_percent": self.sync_percent,
            "sync_action": self.sync_action,
            "mismatches": self.mismatches,
            "min_rate_kib_s": self.min_rate_kib_s,
            "max_rate_kib_s": self.max_rate_kib_s,
            "health_status": self.health_status,
            "health_bit": self.health_bit,
            "integrity_mismatches": self.integrity_mismatches,
            "integrity_mode": self.integrity_mode,
            "images": [
                {
                    "index": i.index,
                    "image": i.image,
                    "meta": i.meta,
                    "pvs": list(i.pvs),
                    "health": i.health,
                }
                for i in self.images
            ],
            "dm": None
            if dm is None
            else {
                "raid_type": dm.raid_type,
                "devices": dm.devices,
                "health": dm.health,
                "done_sectors": dm.done_sectors,
                "total_sectors": dm.total_sectors,
                "sync_action": dm.sync_action,
                "mismatch_cnt": dm.mismatch_cnt,
                "data_offset": dm.data_offset,
                "journal": dm.journal,
            },
        }


def is_raid_segtype(segtype: str) -> bool:
    """raid0..raid10 and their layouts (raid5_ls, raid6_zr, raid0_meta, ...); not "mirror"."""
    return segtype.startswith("raid")
