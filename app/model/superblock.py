"""What one device's md superblock says (``mdadm --examine``), beside what the kernel says.

md keeps an ``events`` counter in every member's superblock and bumps it on each superblock
update (drivers/md/md.c ``md_update_sb``: ``mddev->events++`` for every change it writes, and
the clean/active transitions of ``set_in_sync``/``md_write_start``). The running array's count
is the highest its working members carry; a member that left keeps the count of its last write.
On assembly md kicks a member whose events are behind (md.c ``analyze_sbs``: "kicking
non-fresh ... from array!") and a re-add decides between a bitmap-based catch-up and a full
recovery from how far behind it is (super_1_validate: a device whose ``events`` is older than
the bitmap's ``events_cleared`` cannot use the bitmap). Showing "events N (array M: K behind)"
makes that decision visible before the plan is made.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Superblock:
    device: str  # kernel name examined, e.g. "nvme0n1p1"
    array_uuid: str | None = None  # mdadm's spelling 8:8:8:8
    name: str | None = None  # "host:127"
    level: str | None = None  # "raid10"
    raid_devices: int | None = None
    events: int | None = None
    update_time: int | None = None  # epoch seconds (MD_UPDATE_TIME)
    device_uuid: str | None = None
    device_role: str | None = None  # "Active device 0", "spare", ...
    array_state: str | None = None  # "AA.A" as this member last saw the array
    bitmap: str | None = None  # "internal at offset 8 sectors" words; None: no bitmap line
    recovery_offset_sectors: int | None = None
    bad_blocks: str | None = None  # "Bad Block Log : 512 entries available at offset 16 sectors"
    metadata: str | None = None  # "1.2"
    state: tuple[str, ...] = ()  # "clean", "active"

    def behind(self, array_events: int | None) -> int | None:
        """How many events this superblock is behind ``array_events`` (0 when level or ahead)."""
        if self.events is None or array_events is None:
            return None
        return max(0, array_events - self.events)


def array_events(superblocks: tuple[Superblock, ...] | list[Superblock]) -> int | None:
    """The array's event count: the highest its members' superblocks carry (md writes the
    count to every working member at once, md.c ``md_update_sb``)."""
    vals = [s.events for s in superblocks if s.events is not None]
    return max(vals) if vals else None
