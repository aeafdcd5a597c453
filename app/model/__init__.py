"""The device model: what a machine's storage stack is, independent of how it was learned."""

from app.model.devices import (
    CryptMapping,
    Disk,
    Filesystem,
    LogicalVolume,
    Machine,
    MdArray,
    MdMember,
    Partition,
    PhysicalVolume,
    ProbeNote,
    SyncStatus,
    VolumeGroup,
)
from app.model.usage import KernelUsage

__all__ = [
    "CryptMapping",
    "Disk",
    "Filesystem",
    "KernelUsage",
    "LogicalVolume",
    "Machine",
    "MdArray",
    "MdMember",
    "Partition",
    "PhysicalVolume",
    "ProbeNote",
    "SyncStatus",
    "VolumeGroup",
]
