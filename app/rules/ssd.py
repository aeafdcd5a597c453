"""SSD over-provisioning: the share of each used SSD that no partition covers, and how full
the filesystems on SSDs are.

The iX article advises leaving 7–12 % of an SSD unallocated (never written, so the controller
can use it as spare area), which lowers write amplification under sustained random writes.
Article 000 (point 5 of its SSD rules) keeps 25 % of every filesystem free.
"""

from __future__ import annotations

from collections.abc import Iterator

from app.model.devices import Machine
from app.model.sizes import human_bytes
from app.rules.finding import Finding
from app.rules.inputs import AuditInputs

OP_MIN = 0.07
OP_MAX = 0.12
FS_FULL = 0.75  # article 000: "25% sollten immer als freier Platz zur Verfügung stehen"


def _fuller_than_75(machine: Machine) -> Iterator[Finding]:
    for fs in machine.filesystems:
        if not fs.size_bytes or fs.used_bytes is None or fs.fstype in ("swap", "iso9660"):
            continue
        ssds = [n for n in machine.disks_under(fs.device) if (d := machine.disk(n)) and d.is_ssd]
        if not ssds:
            continue
        share = fs.used_bytes / fs.size_bytes
        if share <= FS_FULL:
            continue
        where = fs.mountpoints[0] if fs.mountpoints else f"/dev/{fs.device}"
        yield Finding(
            "advice",
            "ssd-fs-full",
            fs.device,
            f"{where} on SSD is {share:.0%} full",
            f"The {fs.fstype} filesystem on /dev/{fs.device} ({where}) uses {fs.used_bytes} of "
            f"{fs.size_bytes} bytes ({share:.0%}) and lives on SSD(s) {', '.join(ssds)}. "
            "Keep 25 % of every filesystem on SSDs free: free blocks stay "
            "available in large contiguous runs (less fragmentation) and fstrim has room to "
            "hand back to the controller, which measured 10–20 % faster after trimming "
            "filesystems that were more than 40 % written. Grow the filesystem or move data.",
        )


def check(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    yield from _fuller_than_75(machine)
    for d in machine.disks:
        if not d.is_ssd or d.kind != "disk" or d.size_bytes <= 0:
            continue
        children = machine.children_of(d.name)
        if not children:
            continue  # unused: nothing to advise yet
        parts = [p for p in machine.partitions if p.parent == d.name]
        if parts:
            used = sum(p.size_bytes for p in parts)
            how = f"its {len(parts)} partition(s) cover {used} of {d.size_bytes} bytes"
        else:
            used = d.size_bytes
            how = f"it is used whole (by {', '.join(children)})"
        share = max(0, d.size_bytes - used) / d.size_bytes
        if share >= OP_MIN:
            continue
        spare = int(d.size_bytes * OP_MIN)
        yield Finding(
            "advice",
            "ssd-overprovisioning",
            d.name,
            f"{d.name}: {share * 100:.1f}% of the SSD left unallocated",
            f"{d.name} ({d.model or 'SSD'}): {how}, leaving {share * 100:.1f}% "
            f"unallocated. 7–12% (here at least "
            f"{human_bytes(spare)}) of extra spare area keeps write speed and "
            "write amplification steady under sustained writes. Regular TRIM of free "
            "filesystem space has a similar effect. Shrinking partitions or arrays to make "
            "room is not something to do in one key; plan it at the next rebuild."
            + _container_note(machine, children),
        )


def _container_note(machine: Machine, children: tuple[str, ...]) -> str:
    """A disk given whole to a firmware RAID container (IMSM/DDF): the firmware's set-up lets
    the last volume take all the space that is left, so no spare area stays unless asked for."""
    for child in children:
        a = machine.array(child)
        if a is not None and a.is_container:
            return (
                f" {child} is a firmware RAID container ({a.metadata}): its set-up gives the "
                "last volume all the space left on the disks, so spare area is kept only by "
                "giving every volume an explicit, smaller size when it is made (mdadm --size)."
            )
    return ""
