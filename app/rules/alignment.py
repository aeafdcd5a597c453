"""Partition alignment and suspicious I/O topology (the USB-SATA bridge case).

The kernel computes a partition's ``alignment_offset`` (what lsblk shows as ALIGNMENT) as
``(g + disk_alignment_offset - start_bytes % g) % g`` with ``g = max(physical_block_size,
minimum_io_size)`` (block/blk-settings.c ``queue_limit_alignment_offset``). A JMicron bridge
reporting physical 4096 / optimal 33553920 (= 65535 × 512) made parted and YaST start
partitions at multiples of 65535 sectors; 65535 × 512 % 4096 = 3584, so the kernel reports
alignment offsets 512 and 1024 for partitions at 65535 and 131070.
"""

from __future__ import annotations

from collections.abc import Iterator

from app.model import levels
from app.model.devices import SECTOR, Disk, Machine, Partition
from app.rules.finding import Finding
from app.rules.inputs import AuditInputs
from app.rules.stack import MiB, human, is_pow2, member_disk

BRIDGE_SECTORS = 65535
# What such a bridge's disk shows as optimal_io_size: 65535 × 512 as reported, and rounded down
# to the physical block (at least 4096) by newer kernels (block/blk-settings.c
# blk_validate_limits: ``io_opt = round_down(io_opt, max(4096, physical_block_size))``).
BRIDGE_OPT_IO = (BRIDGE_SECTORS * SECTOR, BRIDGE_SECTORS * SECTOR // 4096 * 4096)


def is_bridge_value(opt: int) -> bool:
    """Whether ``opt`` is the 65535-sector optimal I/O size of a USB-SATA bridge (either form)."""
    return opt in BRIDGE_OPT_IO


def kernel_alignment_offset(disk: Disk, start_sector: int) -> int:
    """What the kernel would report as the partition's alignment_offset, in bytes."""
    g = max(disk.physical_sector, disk.min_io, disk.logical_sector)
    return (g + disk.alignment_offset - (start_sector * SECTOR) % g) % g


def _bridge_pattern(parts: list[Partition]) -> list[Partition]:
    """Partitions whose start is a multiple of 65535 sectors but not of 2048 (1 MiB)."""
    return [
        p
        for p in parts
        if p.start_sector > 0
        and p.start_sector % BRIDGE_SECTORS == 0
        and p.start_sector % 2048 != 0
    ]


def check(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    parts_of: dict[str, list[Partition]] = {}
    for p in machine.partitions:
        parts_of.setdefault(p.parent, []).append(p)

    for p in machine.partitions:
        disk = machine.disk(p.parent)
        if disk is None:
            continue
        start = p.start_bytes
        computed = kernel_alignment_offset(disk, p.start_sector)
        lsblk = p.alignment_offset
        phys = disk.physical_sector
        if lsblk != 0 or computed != 0:
            if lsblk < 0:
                said = "the kernel reports it cannot be aligned (ALIGNMENT -1)"
            elif lsblk:
                said = f"the kernel reports an alignment offset of {lsblk} bytes (lsblk ALIGNMENT)"
            else:
                said = f"it is {computed} bytes away from the next physical sector boundary"
            pattern = ""
            if p in _bridge_pattern(parts_of.get(disk.name, [])):
                pattern = (
                    f" Its start is {p.start_sector // BRIDGE_SECTORS} × 65535 sectors: the pattern"
                    " parted/YaST produce when a USB-SATA bridge reports an optimal I/O size of"
                    " 33553920 bytes (65535 sectors)."
                )
            yield Finding(
                "error",
                "partition-misaligned",
                p.name,
                f"{p.name} does not start on a physical sector boundary",
                f"{p.name} starts at sector {p.start_sector} ({start} bytes); {disk.name} has "
                f"{phys}-byte physical sectors and {start} mod {phys} = {start % phys}: {said}. "
                "Every write of a physical sector becomes a read-modify-write of two."
                + pattern
                + " Fixing it means moving the partition (back up, recreate it at a multiple of "
                "2048 sectors, restore): that destroys its data, so no one-key fix is offered.",
                None,
                fix_destroys_data=True,
            )
        elif start % MiB != 0:
            yield Finding(
                "warning",
                "partition-not-1mib",
                p.name,
                f"{p.name} is not 1 MiB aligned",
                f"{p.name} starts at sector {p.start_sector} ({start} bytes), not a multiple of "
                f"2048 sectors (1 MiB); {start} mod 1048576 = {start % MiB}. It is aligned to "
                f"the {phys}-byte physical sector, but SSD erase blocks, RAID chunks and "
                "thin-provisioned LUNs expect 1 MiB alignment. Moving the partition destroys "
                "its data, so no one-key fix is offered.",
                None,
                fix_destroys_data=True,
            )

    for disk in machine.disks:
        opt = disk.optimal_io
        phys = disk.physical_sector
        if opt <= 0 or (is_pow2(opt) and opt % phys == 0):
            continue
        reasons = []
        if not is_pow2(opt):
            reasons.append("not a power of two")
        if opt % phys:
            reasons.append(f"not a multiple of the {phys}-byte physical sector")
        detail = (
            f"{disk.name} reports optimal I/O size {opt} bytes"
            + (f" (= {opt // SECTOR} sectors)" if opt % SECTOR == 0 else "")
            + f", {' and '.join(reasons)}; physical sector {phys}, minimum I/O {disk.min_io}."
        )
        if is_bridge_value(opt):
            detail += (
                " 65535 sectors is the 16-bit maximum some USB-SATA bridges (JMicron) report"
                " instead of a real value (newer kernels round it down to"
                f" {BRIDGE_OPT_IO[1]}); the disk itself most likely has no such"
                " preference, and it may report other sizes when attached directly to SATA."
            )
        if disk.transport == "usb":
            detail += " The disk is attached over USB."
        bridged = _bridge_pattern(parts_of.get(disk.name, []))
        if bridged:
            names = ", ".join(f"{p.name} ({p.start_sector})" for p in bridged)
            detail += (
                f" Partitions starting at multiples of 65535 sectors: {names} — the pattern "
                "partitioning tools derive from this value; partition new disks at 1 MiB "
                "(parted -a optimal with explicit MiB units, or sgdisk default)."
            )
        yield Finding(
            "warning",
            "suspicious-io-topology",
            disk.name,
            f"{disk.name} reports a suspicious optimal I/O size ({human(opt)})",
            detail,
        )


def check_arrays(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    """An array's own optimal_io_size inflated by a member's.

    md stacks each member's limits into the array's (block/blk-settings.c ``blk_stack_limits``:
    ``io_opt = lcm_not_zero(top, bottom)``), so one member reporting a bogus optimal I/O size (a
    USB-SATA bridge's 65535 sectors, some SAS controllers) makes the array's the least common
    multiple of it and the stripe. mkfs.ext4, mkfs.xfs and pvcreate read the array's value."""
    for a in machine.arrays:
        got = inputs.optimal_io.get(a.name)
        if got is None or a.is_container or a.raid_disks is None:
            continue
        n = a.previous_raid_disks or a.raid_disks  # the kernel's until a reshape ends
        want = levels.optimal_io_bytes(a.level, n, a.chunk_bytes or 0, a.layout)
        if got <= want or got <= 4096:
            continue  # not inflated (a mirror passes on its members' small value, e.g. 512)
        culprits = []
        for m in a.members:
            d = member_disk(machine, m.device)
            if d is not None and d.optimal_io and (not want or d.optimal_io % want):
                culprits.append(
                    f"{d.name} reports {d.optimal_io}"
                    + (
                        " (a USB-SATA bridge's 65535 sectors)"
                        if is_bridge_value(d.optimal_io)
                        else ""
                    )
                )
        expected = (
            f"{human(want)} ({want} bytes: chunk × data disks)"
            if want
            else "none (a mirror has no stripe)"
        )
        yield Finding(
            "warning",
            "md-optimal-io-inflated",
            a.name,
            f"{a.name} reports an optimal I/O size of {human(got)}",
            f"{a.name}'s queue/optimal_io_size is {got} bytes; its geometry gives {expected}. "
            "The kernel combines the array's value with each member's (their least common "
            "multiple)"
            + (f", and {'; '.join(culprits)}" if culprits else "")
            + ". mkfs.ext4, mkfs.xfs and pvcreate read this value, so left to themselves they "
            "align to it: give the geometry explicitly (mkfs.ext4 -E stride=,stripe_width=, "
            "mkfs.xfs -d su=,sw=, pvcreate --dataalignment), as raidman's filesystem plan does.",
        )
