"""What the kernel itself says is using each block device: mounts, swaps, holders, partitions.

Read from ``/proc/self/mountinfo`` (major:minor resolved to kernel names through sysfs),
``/proc/swaps``, ``/sys/block/*/holders`` and ``/sys/block/*/*/holders`` — never from blkid,
wipefs or lsblk's FSTYPE, which a denied or missing tool leaves empty. Pre-flight and the device
pickers decide "in use" from this; a check that could not be read is listed in ``unread`` and
refuses every device (``app.plans.guards.in_use``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

# the names used in ``KernelUsage.unread``
MOUNTS = "mounts"
SWAPS = "swaps"
HOLDERS = "holders"


def _index(
    pairs: tuple[tuple[str, str], ...], *, reverse: bool = False
) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for a, b in pairs:
        k, v = (b, a) if reverse else (a, b)
        out.setdefault(k, []).append(v)
    return {k: tuple(v) for k, v in out.items()}


@dataclass(frozen=True)  # not slots: the lookups below are indexed once (1,000 disks on a picker)
class KernelUsage:
    mounts: tuple[tuple[str, str], ...] = ()  # (kernel name, mountpoint)
    swaps: tuple[tuple[str, str], ...] = ()  # (kernel name, /proc/swaps file name) active swap
    holders: tuple[tuple[str, str], ...] = ()  # (device, holder): md, dm, bcache on top of it
    partitions: tuple[tuple[str, str], ...] = ()  # (partition, whole disk)
    unread: tuple[tuple[str, str], ...] = ()  # (MOUNTS | SWAPS | HOLDERS, why it was not read)
    # (kernel name, filesystem type) of each mounted block device, as mountinfo's field 9 says:
    # the type of a mounted filesystem when lsblk's FSTYPE is empty (no udev data)
    fstypes: tuple[tuple[str, str], ...] = ()

    def fstype(self, name: str) -> str | None:
        """The type the kernel mounted ``name`` with (the first mount of it), if mounted."""
        return next((t for n, t in self.fstypes if n == name), None)

    @cached_property
    def _mounts(self) -> dict[str, tuple[str, ...]]:
        return {k: tuple(dict.fromkeys(v)) for k, v in _index(self.mounts).items()}

    @cached_property
    def _swaps(self) -> dict[str, tuple[str, ...]]:
        return _index(self.swaps)

    @cached_property
    def _holders(self) -> dict[str, tuple[str, ...]]:
        return _index(self.holders)

    @cached_property
    def _slaves(self) -> dict[str, tuple[str, ...]]:
        return _index(self.holders, reverse=True)

    @cached_property
    def _partitions(self) -> dict[str, tuple[str, ...]]:
        return _index(self.partitions, reverse=True)

    @cached_property
    def _disk_of(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for p, d in self.partitions:
            out.setdefault(p, d)
        return out

    def mountpoints(self, name: str) -> tuple[str, ...]:
        return self._mounts.get(name, ())

    def swap_files(self, name: str) -> tuple[str, ...]:
        return self._swaps.get(name, ())

    def holders_of(self, name: str) -> tuple[str, ...]:
        return self._holders.get(name, ())

    def slaves_of(self, name: str) -> tuple[str, ...]:
        return self._slaves.get(name, ())

    def partitions_of(self, disk: str) -> tuple[str, ...]:
        return self._partitions.get(disk, ())

    def disk_of(self, partition: str) -> str | None:
        return self._disk_of.get(partition)

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

    def carriers_under(self, name: str) -> tuple[tuple[str, str], ...]:
        """(whole disk, the device on that disk that carries ``name``: a partition or the disk
        itself) for every disk ``name`` lives on, through slaves and partition parents. Two
        partitions of one disk under ``name`` are two carriers of that disk."""
        out: dict[tuple[str, str], None] = {}
        seen: set[tuple[str, str | None]] = set()
        queue: list[tuple[str, str | None]] = [(name, None)]
        while queue:
            n, part = queue.pop(0)
            if (n, part) in seen:
                continue
            seen.add((n, part))
            disk = self.disk_of(n)
            slaves = self.slaves_of(n)
            if disk is not None:
                queue.append((disk, n))
            elif slaves:
                queue.extend((s, None) for s in slaves)
            else:
                out[(n, part or n)] = None
        return tuple(out)
