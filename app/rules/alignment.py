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

from app.model.devices import SECTOR, Disk, Machine, Partition
from app.rules.finding import Finding
from app.rules.inputs import AuditInputs
from app.rules.stack import MiB, human, is_pow2

BRIDGE_SECTORS = 65535


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
        if opt == BRIDGE_SECTORS * SECTOR:
            detail += (
                " 65535 sectors is the 16-bit maximum some USB-SATA bridges (JMicron) report"
                " instead of a real value; the disk itself most likely has no such"
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
