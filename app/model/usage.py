"""What the kernel itself says is using each block device: mounts, swaps, holders, partitions.

Read from ``/proc/self/mountinfo`` (major:minor resolved to kernel names through sysfs),
``/proc/swaps``, ``/sys/block/*/holders`` and ``/sys/block/*/*/holders`` — never from blkid,
wipefs or lsblk's FSTYPE, which a denied or missing tool leaves empty. Pre-flight and the device
pickers decide "in use" from this; a check that could not be read is listed in ``unread`` and
refuses every device (``app.plans.in_use``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

# the names used in ``KernelUsage.unread``
MOUNTS = "mounts"
SWAPS = "swaps"
HOLDERS = "holders"


@dataclass(frozen=True, slots=True)
class KernelUsage:
    mounts: tuple[tuple[str, str], ...] = ()  # (kernel name, mountpoint)
    swaps: tuple[tuple[str, str], ...] = ()  # (kernel name, /proc/swaps file name) active swap
    holders: tuple[tuple[str, str], ...] = ()  # (device, holder): md, dm, bcache on top of it
    partitions: tuple[tuple[str, str], ...] = ()  # (partition, whole disk)
    unread: tuple[tuple[str, str], ...] = ()  # (MOUNTS | SWAPS | HOLDERS, why it was not read)

    def mountpoints(self, name: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(mp for n, mp in self.mounts if n == name))

    def swap_files(self, name: str) -> tuple[str, ...]:
        return tuple(f for n, f in self.swaps if n == name)

    def holders_of(self, name: str) -> tuple[str, ...]:
        return tuple(h for d, h in self.holders if d == name)

    def slaves_of(self, name: str) -> tuple[str, ...]:
        return tuple(d for d, h in self.holders if h == name)

    def partitions_of(self, disk: str) -> tuple[str, ...]:
        return tuple(p for p, d in self.partitions if d == disk)

    def disk_of(self, partition: str) -> str | None:
        for p, d in self.partitions:
            if p == partition:
                return d
        return None

    def stacked_on(self, name: str) -> Iterator[tuple[str, tuple[str, ...]]]:
        """Every device built on ``name`` through holders, each once, with the path to it."""
        seen = {name}
        queue: list[tuple[str, tuple[str, ...]]] = [(h, (h,)) for h in self.holders_of(name)]
        while queue:
            n, path = queue.pop(0)
            if n in seen:
                continue
            seen.add(n)
            yield n, path
            queue.extend((h, (*path, h)) for h in self.holders_of(n))

    def whole_disks_under(self, name: str) -> tuple[str, ...]:
        """The whole disks ``name`` lives on (through slaves and partition parents)."""
        out: list[str] = []
        seen: set[str] = set()
        queue = [name]
        while queue:
            n = queue.pop(0)
            if n in seen:
                continue
            seen.add(n)
            disk = self.disk_of(n)
            slaves = self.slaves_of(n)
            if disk is not None:
                queue.append(disk)
            elif slaves:
                queue.extend(slaves)
            else:
                out.append(n)
        return tuple(out)
