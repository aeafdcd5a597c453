"""Array geometry → filesystem alignment: ext4 stride/stripe_width, XFS su/sw, LVM data alignment.

stride       = chunk / filesystem block          (blocks written to one member before moving on)
stripe_width = stride × data disks               (blocks in one full stripe)
data disks   : optimal I/O / chunk as the kernel computes it (app.model.levels): RAID-0 n,
               RAID-4/5 n−1, RAID-6 n−2, RAID-10 n/near_copies when n divides evenly, else n
               (far and offset layouts stripe over all n).

Example (the source article): RAID-10 near-2 of 4 SSDs, 32 KiB chunk, 4 KiB blocks →
stride = 32/4 = 8, stripe_width = 8 × 2 = 16.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.model import levels, md_names
from app.model.devices import MdArray

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
PAGE = 4096  # bytes per stripe-cache entry page on the usual platforms

LEVELS = tuple(levels.LEVELS)


class PlanError(ValueError):
    """The wizard's inputs cannot make a sensible plan; the message is meant for the user."""


def normalize_level(level: str | int) -> str:
    """ "10", "raid10", "RAID10", 10 → "raid10"; "linear" stays (``md_names.level_name``)."""
    name = md_names.level_name(level)
    if name is not None:
        return name
    raise PlanError(f"unknown RAID level {level!r}; choose one of 0, 1, 4, 5, 6, 10, linear")


def parse_size(text: str | int, *, default_unit: int = KIB) -> int:
    """ "32K", "32KiB", "512k", "1M", "4096B", "32" (KiB, like mdadm's --chunk) → bytes."""
    if isinstance(text, int):
        return text * default_unit
    m = re.fullmatch(r"\s*(\d+)\s*([kKmMgG]?)(i?[bB])?\s*", text)
    if not m:
        raise PlanError(f"not a size: {text!r} (use e.g. 32K, 512K, 1M)")
    n = int(m.group(1))
    unit = m.group(2).upper()
    if not unit:
        mult = 1 if m.group(3) and m.group(3).upper() == "B" else default_unit
    else:
        mult = {"K": KIB, "M": MIB, "G": GIB}[unit]
    return n * mult


def human_kib(n_bytes: int) -> str:
    """32768 → "32K" (mdadm/mkfs style suffix)."""
    if n_bytes % MIB == 0 and n_bytes >= MIB:
        return f"{n_bytes // MIB}M"
    if n_bytes % KIB == 0:
        return f"{n_bytes // KIB}K"
    return f"{n_bytes}B"


def data_disks(level: str, raid_devices: int, layout: str | None = None) -> int:
    """Chunks in one full stripe of data (the kernel's optimal I/O / chunk; app.model.levels)."""
    lvl = normalize_level(level)
    d = levels.data_disks(lvl, raid_devices, layout)
    if d is None:
        raise PlanError(f"{lvl} has no stripe geometry")
    return d


def data_disks_explained(level: str, raid_devices: int, layout: str | None = None) -> str:
    return levels.data_disks_rule(normalize_level(level), raid_devices, layout)


# mkfs.xfs (xfsprogs >= 5.19) takes no stripe geometry from the device below 1 GiB of data
# ("small data volume, ignoring data volume stripe unit"), and with su/sw given there it picks
# more, smaller allocation groups than the 64 MiB minimum log fits in ("Log size must be at
# least 64MB", seen on a 510 MiB RAID-10 in the VM): xfsprogs mkfs/xfs_mkfs.c
XFS_AUTO_STRIPE_MIN_BYTES = 1 << 30
XFS_SMALL_AGCOUNT = 4  # mkfs.xfs's own count there; its 300 MB minimum assumes 4 AGs
# mkfs.xfs (xfsprogs >= 5.19) refuses a data section under 300 MiB: "Filesystem must be larger
# than 300MB." (mkfs/xfs_mkfs.c validate_sb_features: sb_dblocks < MEGABYTES(300, blocklog),
# i.e. 300 << 20 bytes; "64MB log * (8 / 7) * 4 AGs = 293MB")
XFS_MIN_BYTES = 300 * MIB


@dataclass(frozen=True, slots=True)
class Geometry:
    """What filesystem alignment needs to know about an array (existing or about to be created)."""

    level: str
    raid_devices: int
    chunk_bytes: int
    layout: str | None = None

    @classmethod
    def of(cls, array: MdArray) -> Geometry | None:
        """An existing array's geometry; None where its data is not striped in chunks or md
        has not told its chunk or member count."""
        if array.level not in levels.STRIPED or not array.chunk_bytes or not array.raid_disks:
            return None
        return cls(array.level, array.raid_disks, array.chunk_bytes, array.layout)

    @property
    def striped(self) -> bool:
        return self.level in levels.STRIPED

    @property
    def data_disks(self) -> int:
        return data_disks(self.level, self.raid_devices, self.layout)

    @property
    def stripe_bytes(self) -> int:
        """One full stripe of data: chunk × data disks (also LVM's --dataalignment)."""
        return self.chunk_bytes * self.data_disks

    def ext4(self, block_size: int = 4096) -> tuple[int, int]:
        """(stride, stripe_width) in filesystem blocks."""
        if self.chunk_bytes % block_size:
            raise PlanError(
                f"chunk {human_kib(self.chunk_bytes)} is not a multiple of the "
                f"{block_size}-byte filesystem block"
            )
        stride = self.chunk_bytes // block_size
        return stride, stride * self.data_disks

    def ext4_explained(self, block_size: int = 4096) -> str:
        stride, width = self.ext4(block_size)
        return (
            f"stride = chunk {human_kib(self.chunk_bytes)} / block {human_kib(block_size)} = {stride}; "
            f"data disks: {data_disks_explained(self.level, self.raid_devices, self.layout)}; "
            f"stripe_width = {stride} × {self.data_disks} = {width}"
        )

    def xfs(self) -> tuple[str, int]:
        """(su, sw): stripe unit as a mkfs.xfs size string, stripe width in units."""
        return human_kib(self.chunk_bytes).lower(), self.data_disks

    def xfs_bytes(self) -> tuple[int, int]:
        """(sunit, swidth) in bytes: su = chunk, swidth = su × sw (one full stripe)."""
        return self.chunk_bytes, self.stripe_bytes

    def xfs_explained(self) -> str:
        su, sw = self.xfs()
        return (
            f"su = chunk = {su}; sw = data disks = {sw} "
            f"({data_disks_explained(self.level, self.raid_devices, self.layout)})"
        )


# md's default stripe_cache_size (drivers/md/raid5.c NR_STRIPES 256) and the one value raidman
# raises it to, in the audit's fix, its boot-time rule and boost: the value measured best for a
# 5-disk RAID-6 (256 -> 8192: writes 37 -> 130 MB/s, rebuild 25 -> 66 MB/s); it costs
# stripe_cache_memory(8192, n) = 32 MiB per member device.
STRIPE_CACHE_DEFAULT = 256
STRIPE_CACHE_ENTRIES = 8192


def stripe_cache_memory(pages: int, members: int) -> int:
    """Bytes the md stripe cache takes: entries × 4 KiB page × member count."""
    return pages * PAGE * members


def stripe_cache_devices(array: MdArray) -> int:
    """The devices a stripe holds a page for: ``raid5.c`` gives every stripe_head one buffer
    per raid device slot (``grow_buffers()`` allocates ``conf->pool_size`` pages, the number of
    raid disks), so a spare or a faulty member that lost its slot costs nothing."""
    if array.raid_disks:
        return array.raid_disks
    return sum(1 for m in array.members if m.slot is not None and m.working)
