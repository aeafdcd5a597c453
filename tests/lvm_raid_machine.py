"""A machine holding the VM's LVM RAID captures (tests/parsers/samples/lvm_raid): VG vgr on four
256 MiB NVMe PVs, raid1 vgr/r1 (and raid5 vgr/r5 from the check on), as the probe reads them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.model.devices import Disk, Machine, PhysicalVolume, VolumeGroup
from app.model.usage import KernelUsage
from app.parsers.lvm import parse_lvs, parse_pvs
from app.parsers.lvm_raid import attach_status, parse_raid_status

SAMPLES = Path(__file__).parent / "parsers" / "samples" / "lvm_raid"
PV_BYTES = 264241152
EXTENT = 4 * 1024 * 1024


def raid_machine(look: str, *, lost: str | None = None, free: int | None = None) -> Machine:
    """``look``: a_r1_syncing, b_r1_syncing, e_r1_checked, f_pv_lost, g_after_repair; ``lost``
    a disk that is gone (its PV [unknown]); ``free``: every PV's free bytes, when not the
    capture's (f_pv_lost's own pvs otherwise, or 200 MiB)."""
    lvs = parse_lvs((SAMPLES / f"{look}.lvs.json").read_text()).lvs
    lvs = attach_status(lvs, parse_raid_status((SAMPLES / f"{look}.dmstatus").read_text()))
    lvs = tuple(replace(lv, kernel_name=f"dm-{i}") for i, lv in enumerate(lvs))
    names = [f"nvme{i}n1" for i in range(4) if f"nvme{i}n1" != lost]
    disks = tuple(
        Disk(name=n, size_bytes=268435456, transport="nvme", rotational=False) for n in names
    )
    if look == "f_pv_lost":
        pvs = parse_pvs((SAMPLES / "f_pv_lost.pvs.json").read_text())
    else:
        pvs = tuple(PhysicalVolume(n, "vgr", PV_BYTES, 200 * 1024 * 1024) for n in names)
    if free is not None:
        pvs = tuple(replace(pv, free_bytes=free) for pv in pvs)
    vg = VolumeGroup("vgr", 4 * PV_BYTES, 0, EXTENT)
    edges = tuple((pv.device, "vg:vgr") for pv in pvs if not pv.device.startswith("["))
    return Machine(
        host="h",
        kernel="6.1",
        disks=disks,
        pvs=pvs,
        vgs=(vg,),
        lvs=lvs,
        edges=edges,
        is_root=True,
        usage=KernelUsage(),
    )
