"""The simulated kernel's mounts, swaps, holders and partitions.

In a simulation the model *is* the kernel, so its answer is derived from the machine the
simulator built: mountpoints of its filesystems (a swap with a mountpoint — lsblk's "[SWAP]" —
is active swap), holders from the device graph (every child that is not a partition).
The test fakes use the same function.
"""

from __future__ import annotations

from app.model import Machine
from app.model.usage import KernelUsage


def usage_of(machine: Machine) -> KernelUsage:
    mounts: list[tuple[str, str]] = []
    swaps: list[tuple[str, str]] = []
    for fs in machine.filesystems:
        if fs.fstype == "swap":
            if fs.mountpoints:
                swaps.append((fs.device, f"/dev/{fs.device}"))
            continue
        mounts.extend((fs.device, mp) for mp in fs.mountpoints if mp.startswith("/"))
    partitions = tuple((p.name, p.parent) for p in machine.partitions)
    part_names = {p for p, _ in partitions}
    holders = tuple((a, b) for a, b in machine.edges if b not in part_names)
    return KernelUsage(
        mounts=tuple(mounts), swaps=tuple(swaps), holders=holders, partitions=partitions
    )
