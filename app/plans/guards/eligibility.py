"""Which disks and partitions a wizard may offer as new array members, and why not the others.

UI-free and built on ``app.plans.guards.in_use`` — the same check pre-flight refuses with — so a device
a picker shows as eligible is never refused by pre-flight for being in use, and a device pre-flight
would refuse is shown with the reason.

    candidates(machine, smart={...}, min_size_bytes=256 * GIB)
    -> (Candidate(name="nvme0n1", size_bytes=..., reason=None, ...),
        Candidate(name="vda", ..., reason="vda1 mounted on /"), ...)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.format import human_bytes
from app.model import Disk, Machine, Partition
from app.model.smart import SmartReading
from app.plans.guards.in_use import system_disk_warning, write_refusals
from app.plans.outcome.lost import carrier_refusals
from app.plans.superblocks import Superblocks

# ATA attributes whose raw count > 0 is worth a warning on a new member (smartctl names)
WATCHED_ATTRIBUTES: dict[int, str] = {
    5: "reallocated sectors",
    187: "reported uncorrectable errors",
    197: "pending sectors",
    198: "offline-uncorrectable sectors",
    199: "UDMA CRC errors",
}


@dataclass(frozen=True, slots=True)
class Candidate:
    name: str  # kernel name
    size_bytes: int
    model: str | None
    rotational: bool | None
    reason: str | None  # None = eligible; else the first reason it is not ("mounted on /", ...)
    kind: str = "disk"  # "disk" or "partition"
    reasons: tuple[str, ...] = ()  # every reason it is not eligible (reason is the first)
    # warnings that do not make it ineligible (SMART counts > 0, "sda also holds / (sda2)")
    notes: tuple[str, ...] = ()

    @property
    def eligible(self) -> bool:
        return self.reason is None


def smart_failed(reading: SmartReading | None) -> bool:
    return reading is not None and (reading.health or "").upper() == "FAILED"


def smart_warnings(reading: SmartReading | None) -> tuple[str, ...]:
    """Pre-fail counts above zero (ATA attributes; NVMe media errors / critical warning)."""
    if reading is None or not reading.available:
        return ()
    out: list[str] = []
    for attr_id, what in WATCHED_ATTRIBUTES.items():
        a = reading.attribute(attr_id)
        if a is not None and a.raw is not None and a.raw > 0:
            out.append(f"{a.raw} {what}")
    media = reading.nvme.get("media_errors")
    if media:
        out.append(f"{media} NVMe media errors")
    crit = reading.nvme.get("critical_warning")
    if crit:
        out.append(f"NVMe critical warning 0x{crit:02x}")
    return tuple(out)


def disk_of(machine: Machine, name: str) -> str:
    """The whole disk a disk or partition lives on (its own name for a disk)."""
    p = machine.partition(name)
    return p.parent if p is not None else name


def needed_member_bytes(machine: Machine, array: str) -> int | None:
    """What each member of ``array`` must hold: the largest data offset + used size of its
    members (md/dev-*/offset + md/dev-*/size), else the array size over its data disks."""
    a = machine.array(array)
    if a is None:
        return None
    need = [
        (m.data_offset_sectors or 0) * 512 + m.size_kib * 1024
        for m in a.members
        if m.size_kib is not None
    ]
    if need:
        return max(need)
    if a.size_bytes and a.data_disks:
        return a.size_bytes // a.data_disks
    return None


def ineligible_reasons(
    machine: Machine,
    name: str,
    *,
    smart: Mapping[str, SmartReading] | None = None,
    min_size_bytes: int | None = None,
    superblocks: Superblocks | None = None,
    joining: str | None = None,
) -> tuple[str, ...]:
    """Every reason ``name`` cannot be a new member; () when it can. A device carrying an md
    superblock the kernel does not run from it is never free (``carrier_refusals``: an
    array's copy, an unassembled array's carrier), unless it goes back into that very array
    (``joining``)."""
    reasons = [i.brief for i in write_refusals(machine, name)]
    reasons += [i.brief for i in carrier_refusals(machine, superblocks, (name,), joining)]
    dev = machine.device(name)
    size = dev.size_bytes if isinstance(dev, Disk | Partition) else None
    if min_size_bytes is not None and size is not None and size < min_size_bytes:
        reasons.append(f"too small (needs {human_bytes(min_size_bytes, trim=True)})")
    if smart is not None and smart_failed(smart.get(disk_of(machine, name))):
        reasons.append("SMART FAILED")
    return tuple(dict.fromkeys(reasons))


def candidates(
    machine: Machine,
    *,
    smart: Mapping[str, SmartReading] | None = None,
    min_size_bytes: int | None = None,
    superblocks: Superblocks | None = None,
    joining: str | None = None,
) -> tuple[Candidate, ...]:
    """Every disk (not CD-ROMs) and partition, each with why it cannot be a member (or None).

    ``smart`` maps whole-disk kernel names to readings (a partition uses its disk's);
    ``min_size_bytes`` is what the array needs per member (add/replace/grow):
    ``needed_member_bytes(machine, "md127")``; ``superblocks`` (where read) marks the carriers
    of md superblocks not running from them, but for ``joining``, the array a device goes into.
    Order: eligible first, then by name.
    """
    out: list[Candidate] = []
    for d in machine.disks:
        if d.kind == "rom":
            continue
        more = (smart, min_size_bytes, superblocks, joining)
        out.append(_candidate(machine, d.name, d, "disk", *more))
        for p in machine.partitions:
            if p.parent == d.name:
                out.append(_candidate(machine, p.name, d, "partition", *more))
    out.sort(key=lambda c: (c.reason is not None, c.name))
    return tuple(out)


def _candidate(
    machine: Machine,
    name: str,
    disk: Disk,
    kind: str,
    smart: Mapping[str, SmartReading] | None,
    min_size_bytes: int | None,
    superblocks: Superblocks | None = None,
    joining: str | None = None,
) -> Candidate:
    dev = machine.device(name)
    size = dev.size_bytes if isinstance(dev, Disk | Partition) else 0
    reasons = ineligible_reasons(
        machine,
        name,
        smart=smart,
        min_size_bytes=min_size_bytes,
        superblocks=superblocks,
        joining=joining,
    )
    notes = smart_warnings(smart.get(disk.name)) if smart is not None else ()
    system = None if reasons else system_disk_warning(machine, name)
    if system is not None:
        notes = (system.brief, *notes)
    return Candidate(
        name=name,
        size_bytes=size,
        model=disk.model,
        rotational=disk.rotational,
        reason=reasons[0] if reasons else None,
        kind=kind,
        reasons=reasons,
        notes=notes,
    )
