"""SSD over-provisioning: the share of each used SSD that no partition covers.

The iX article advises leaving 7–12 % of an SSD unallocated (never written, so the controller
can use it as spare area), which lowers write amplification under sustained random writes.
"""

from __future__ import annotations

from collections.abc import Iterator

from app.model.devices import Machine
from app.rules.finding import Finding
from app.rules.inputs import AuditInputs

OP_MIN = 0.07
OP_MAX = 0.12


def check(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
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
            f"{d.name}: {share * 100:.1f} % of the SSD left unallocated",
            f"{d.name} ({d.model or 'SSD'}): {how}, leaving {share * 100:.1f} % "
            f"unallocated. The source articles advise 7–12 % (here at least "
            f"{spare / 1e9:.1f} GB) as extra spare area, which keeps write speed and "
            "write amplification steady under sustained writes. Regular TRIM of free "
            "filesystem space has a similar effect. Shrinking partitions or arrays to make "
            "room is not something to do in one key; plan it at the next rebuild.",
        )
