"""Small helpers the rules share: walking the stack, formatting numbers."""

from __future__ import annotations

from app.model import levels
from app.model.devices import Disk, LogicalVolume, Machine, MdArray, Partition, PhysicalVolume

KiB = 1024
MiB = 1024 * 1024


def human(n: int) -> str:
    """Bytes as an exact binary unit when possible (32 KiB, 1 MiB), else bytes."""
    for unit, size in (("GiB", 1 << 30), ("MiB", MiB), ("KiB", KiB)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    if n >= MiB:
        return f"{n / MiB:.1f} MiB ({n} bytes)"
    return f"{n} bytes"


def is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def device_path(machine: Machine, name: str) -> str:
    """The path a user would type: /dev/VG/LV for logical volumes, /dev/NAME otherwise."""
    d = machine.device(name)
    if isinstance(d, LogicalVolume):
        return d.path
    return f"/dev/{name}"


def array_below(machine: Machine, name: str) -> MdArray | None:
    """The nearest md array at or below ``name`` (the fs's own device, or through LVM/crypt)."""
    a = machine.array(name)
    if a is not None:
        return a
    for n in machine.ancestors_of(name):
        a = machine.array(n)
        if a is not None:
            return a
    return None


def pv_on(machine: Machine, name: str, below: str) -> PhysicalVolume | None:
    """The PV between ``name`` and the device ``below`` (a PV on ``below`` or on a layer
    directly above it, e.g. a LUKS mapping), if ``name`` lives on one."""
    chain = [name, *machine.ancestors_of(name)]
    for n in chain:
        pv = machine.pv(n)
        if pv is not None and (n == below or below in machine.ancestors_of(n)):
            return pv
    return None


def striped_geometry(a: MdArray) -> tuple[int, int] | None:
    """(chunk bytes, data disks) of an array whose data is striped in chunks, else None."""
    if a.level not in levels.STRIPED:
        return None
    if not a.chunk_bytes or not a.data_disks:
        return None
    return a.chunk_bytes, a.data_disks


def member_disk(machine: Machine, member: str) -> Disk | None:
    """The whole disk under an array member (the member itself, or a partition's disk)."""
    d = machine.device(member)
    if isinstance(d, Disk):
        return d
    if isinstance(d, Partition):
        return machine.disk(d.parent)
    for n in machine.disks_under(member):
        return machine.disk(n)
    return None


def ssds_under(machine: Machine, name: str) -> tuple[Disk, ...]:
    out = []
    for n in machine.disks_under(name):
        d = machine.disk(n)
        if d is not None and d.is_ssd:
            out.append(d)
    return tuple(out)
