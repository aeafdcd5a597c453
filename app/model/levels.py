"""One table of md RAID-level facts (like mdadm's ``pers[]``): everything raidman knows about a
level lives here — striped or not, parity count, redundancy, the fewest devices mdadm accepts,
how many failures are always survived, and how many chunks one full stripe of data spans.

Sources:

- Minimum devices: mdadm ``Create.c`` ``Create()`` refuses "at least 4 raid-devices needed for
  level 6" and "at least 2 raid-devices needed for level 4 or 5" (the test is ``level >= 4``,
  so it covers RAID-10 too); ``mdadm.c`` refuses ``--raid-devices=1`` for every level as "an
  unusual number of drives" unless ``--force`` is given. So without ``--force``: 2 for RAID-0,
  1, 4, 5 and 10 (and at least as many as RAID-10 keeps copies — the kernel's ``setup_geo``
  refuses fewer disks than copies), 4 for RAID-6.
- Optimal I/O (the kernel's ``queue/optimal_io_size``): RAID-0 chunk × n, RAID-4/5 chunk ×
  (n − 1), RAID-6 chunk × (n − 2) (``drivers/md/raid0.c``, ``raid5.c``); RAID-10 chunk ×
  ``raid10_nr_stripes()`` (``drivers/md/raid10.c``): n / near_copies when n is divisible by
  near_copies, else n. Far and offset copies (near_copies = 1) stripe over all n disks, so a
  4-disk f2 array has an optimal I/O of 4 chunks, and a 3-disk n2 array of 3 chunks.
  RAID-1 and linear publish no optimal I/O (0).
- Sync progress unit: md's ``sync_speed`` and ``sync_completed`` count the sync position, which
  is in member sectors except where the personality syncs over the array's own address space:
  ``raid10_sync_request()`` (``drivers/md/raid10.c``) walks ``mddev->resync_max_sectors`` — the
  array size, set in ``raid10_run()`` — for a resync, check or repair, and ``dev_sectors`` for a
  recovery (``array_sector_syncs`` below). What that means for md's speed limits, durations and
  bytes written lives in :mod:`app.model.sync_model`.

"Data disks" below always means optimal I/O / chunk: what ext4's stripe_width / stride and
XFS's sw must be for the filesystem to write whole stripes as the kernel reports them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.model import md_names


@dataclass(frozen=True, slots=True)
class LevelFacts:
    name: str  # kernel personality name: raid5
    label: str  # for people: RAID-5
    striped: bool  # data laid out in chunks across members (has a chunk size)
    parity: int  # parity blocks per stripe (RAID-4/5: 1, RAID-6: 2)
    redundant: bool  # survives at least one member failure
    min_devices: int  # fewest --raid-devices mdadm --create accepts without --force
    has_layout: bool  # md/layout means something for this level
    # sync actions whose progress counts array sectors, not member sectors (see above)
    array_sector_syncs: frozenset[str] = frozenset()


LEVELS: dict[str, LevelFacts] = {
    f.name: f
    for f in (
        LevelFacts("linear", "linear", False, 0, False, 2, False),
        LevelFacts("raid0", "RAID-0", True, 0, False, 2, True),
        LevelFacts("raid1", "RAID-1", False, 0, True, 2, False),
        LevelFacts("raid4", "RAID-4", True, 1, True, 2, True),
        LevelFacts("raid5", "RAID-5", True, 1, True, 2, True),
        LevelFacts("raid6", "RAID-6", True, 2, True, 4, True),
        LevelFacts(
            "raid10", "RAID-10", True, 0, True, 2, True, frozenset({"resync", "check", "repair"})
        ),
    )
}

STRIPED = frozenset(n for n, f in LEVELS.items() if f.striped)
PARITY = frozenset(n for n, f in LEVELS.items() if f.parity)
REDUNDANT = frozenset(n for n, f in LEVELS.items() if f.redundant)
# The most members (slots) an md array can have: ``super_1_validate()`` (drivers/md/md.c) sets
# ``mddev->max_disks = (4096-256)/2`` (1920; MAX_RAID_DISKS in md.h since 6.x) for 1.x metadata,
# and 0.90 has MD_SB_DISKS = 27 (include/uapi/linux/raid/md_p.h). A raid_disks, slot or member
# number beyond it did not come from md: parsers refuse it instead of sizing a list by it.
MAX_RAID_DISKS = 1920
MIRRORED = frozenset(("raid1", "raid10"))  # redundancy by copies: a rebuild copies a member
# the levels a create wizard offers, most asked-for first: (label, mdadm --level value)
CREATE_CHOICES: tuple[tuple[str, str], ...] = tuple(
    (LEVELS[n].label, n if n == "linear" else n.removeprefix("raid"))
    for n in ("raid10", "raid1", "raid5", "raid6", "raid0", "raid4", "linear")
)


def facts(level: str | None) -> LevelFacts | None:
    return LEVELS.get(level or "")


def label(level: str) -> str:
    f = LEVELS.get(level)
    return f.label if f else level


@dataclass(frozen=True, slots=True)
class Raid10Layout:
    near: int = 2
    far: int = 1
    offset: bool = False

    @property
    def copies(self) -> int:
        return self.near * self.far

    @property
    def name(self) -> str:
        parts = [f"n{self.near}"] if self.near > 1 else []
        if self.far > 1:
            parts.append(f"{'o' if self.offset else 'f'}{self.far}")
        return "".join(parts) or "n1"

    @property
    def number(self) -> int:
        """md/layout for it (``md_names.raid10_encode``: n2 → 0x102, f2 → 0x201, o2 → 0x10201)."""
        return md_names.raid10_encode(self.near, self.far, self.offset)

    @classmethod
    def from_number(cls, number: int) -> Raid10Layout | None:
        """md/layout → the layout; None where md would refuse the number."""
        g = md_names.raid10_decode(number)
        return None if g is None else cls(*g)


_R10 = re.compile(r"(?:n(\d+))?(?:([fo])(\d+))?")


def raid10_layout(layout: str | None) -> Raid10Layout:
    """ "n2" → near 2; "f2" → far 2; "o2" → offset 2; "n2f2" → both; None/unknown → n2
    (mdadm's default)."""
    m = _R10.fullmatch((layout or "").strip().lower())
    if not layout or m is None or not (m.group(1) or m.group(2)):
        return Raid10Layout()
    near = int(m.group(1)) if m.group(1) else 1
    far = int(m.group(3)) if m.group(3) else 1
    if near < 1 or far < 1:
        return Raid10Layout()
    return Raid10Layout(near, far, m.group(2) == "o")


def raid10_copies(layout: str | None) -> int:
    """How many copies of each chunk a RAID-10 layout keeps (near × far)."""
    return raid10_layout(layout).copies


def min_devices(level: str, layout: str | None = None) -> int:
    """The fewest raid devices mdadm --create accepts for the level (without --force)."""
    f = LEVELS.get(level)
    base = f.min_devices if f else 1
    if level == "raid10":
        return max(base, raid10_copies(layout))
    return base


def data_disks(level: str, raid_devices: int, layout: str | None = None) -> int | None:
    """Optimal I/O in chunks (the kernel's io_opt / chunk); RAID-1 1; None for unknown levels."""
    n = raid_devices
    if level == "raid0":
        return n
    if level == "raid1":
        return 1
    if level in PARITY:
        return max(1, n - LEVELS[level].parity)
    if level == "raid10":
        near = raid10_layout(layout).near
        return max(1, n // near if n % near == 0 else n)
    return None


def data_disks_rule(level: str, raid_devices: int, layout: str | None = None) -> str:
    """How data_disks() came about, in words: "RAID-10 f2 of 4: far copies stripe over all 4"."""
    n = raid_devices
    d = data_disks(level, n, layout)
    if level == "raid0":
        return f"RAID-0 of {n}: all {n} hold data"
    if level == "raid1":
        return "RAID-1: every member is a full copy, 1 data disk"
    if level in PARITY:
        p = LEVELS[level].parity
        return f"{label(level)} of {n}: {n} − {p} parity = {d}"
    if level == "raid10":
        g = raid10_layout(layout)
        name = layout or g.name
        if g.near == 1:
            return f"RAID-10 {name} of {n}: {'offset' if g.offset else 'far'} copies stripe over all {n}"
        if n % g.near:
            return (
                f"RAID-10 {name} of {n}: {n} is not divisible by {g.near} near copies, "
                f"so a stripe spans all {n}"
            )
        return f"RAID-10 {name} of {n}: {n} / {g.near} near copies = {d}"
    return f"{level}: no stripe geometry"


def optimal_io_bytes(
    level: str, raid_devices: int, chunk_bytes: int, layout: str | None = None
) -> int:
    """What the kernel publishes as queue/optimal_io_size for the array (0 where it has none)."""
    if level not in STRIPED or not chunk_bytes:
        return 0
    return chunk_bytes * (data_disks(level, raid_devices, layout) or 0)


def failures_survived(level: str, raid_devices: int, layout: str | None = None) -> int:
    """Member failures the array always survives, whichever members fail (RAID-10: a chunk's
    copies may sit on any of the failed members, so copies − 1)."""
    if level == "raid1":
        return max(0, raid_devices - 1)
    if level in PARITY:
        return LEVELS[level].parity
    if level == "raid10":
        return raid10_copies(layout) - 1
    return 0


def raid10_copy_sets(raid_devices: int, layout: str | None) -> tuple[frozenset[int], ...]:
    """The slot sets of a RAID-10 that each hold every copy of some chunk: the array is lost
    once all slots of one set are gone. From ``__raid10_find_phys()`` (``drivers/md/raid10.c``):
    chunk c's near copies sit on the ``near`` consecutive slots from ``(c × near) mod n``, and
    each far (or offset) copy ``f`` ``near × f`` slots further on (mod n, one far set). So a
    4-disk n2 keeps pairs (0,1), (2,3); a 3-disk n2 (0,1), (2,0), (1,2); a 4-disk f2 (0,1),
    (1,2), (2,3), (3,0)."""
    n = raid_devices
    if n <= 0:
        return ()
    g = raid10_layout(layout)
    sets = {
        frozenset((c * g.near + j + f * g.near) % n for j in range(g.near) for f in range(g.far))
        for c in range(n)
    }
    return tuple(sorted(sets, key=lambda s: sorted(s)))


def failures_left(
    level: str, raid_devices: int, layout: str | None, working: frozenset[int] | set[int]
) -> int:
    """Further member failures the array survives, whichever members fail, when only the slots
    in ``working`` (0 … raid_devices − 1) hold in-sync data; −1 when it is already lost.
    RAID-1: working − 1 (md runs on one mirror); RAID-4/5/6: parity − missing (``raid5.c``
    ``has_failed()``: ``degraded > max_degraded``); RAID-10: the fewest working slots of one
    copy set − 1 (``raid10.c`` ``_enough()`` walks the same sets); RAID-0/linear: 0."""
    n = raid_devices
    alive = {s for s in working if 0 <= s < n}
    if level == "raid1":
        return len(alive) - 1
    if level in PARITY:
        return LEVELS[level].parity - (n - len(alive))
    if level == "raid10":
        sets = raid10_copy_sets(n, layout)
        return min((len(s & alive) for s in sets), default=0) - 1
    return 0 if len(alive) == n else -1


def lost_if(
    level: str, raid_devices: int, layout: str | None, working: dict[int, str]
) -> tuple[str, ...]:
    """The members (``working``: slot → device) whose next failure loses the array: RAID-1 the
    last working mirror, RAID-4/5/6 every member once the parity is used up, RAID-10 the last
    working slot of a copy set (by slot, from the layout). Empty while any one failure is
    survived."""
    slots = frozenset(working)
    return tuple(
        working[s]
        for s in sorted(working)
        if failures_left(level, raid_devices, layout, slots - {s}) < 0
    )
