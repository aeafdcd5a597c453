"""A small hand-built Backend for focused UI and report tests.

The machine: four NVMe disks, each with one partition that is a member of ``md127`` (raid10
near-2, 32 KiB chunk, resyncing), LVM on the array (vg0/root as dm-0) with ext4 mounted on /,
and a USB disk whose SMART is unavailable. ``degraded=True`` fails member nvme3n1p1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from app.backend import BackendError, CommandResult
from app.model import (
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
from app.model.live import LiveSample, MdLive
from app.model.smart import SmartReading

GIB = 1024**3
DISK_BYTES = 500107862016
PART_BYTES = DISK_BYTES - 2048 * 512 - 1024 * 1024
MDSTAT = """Personalities : [raid10]
md127 : active raid10 nvme3n1p1[3] nvme2n1p1[2] nvme1n1p1[1] nvme0n1p1[0]
      976508928 blocks super 1.2 32K chunks 2 near-copies [4/4] [UUUU]
      [===>.................]  resync = 16.3% (159170560/976508928) finish=20.1min speed=677000K/sec

unused devices: <none>
"""


def build_machine(*, degraded: bool = False, done_sectors: int = 318341120) -> Machine:
    disks = [
        Disk(
            name=f"nvme{i}n1",
            size_bytes=DISK_BYTES,
            model="Samsung SSD 850 EVO 500GB",
            serial=f"S2RBNX0J10{i:04d}",
            rotational=False,
            transport="nvme",
            scheduler="none",
            partition_table="gpt",
            discard_granularity=512,
            discard_max_bytes=2147450880,
        )
        for i in range(4)
    ]
    disks.append(
        Disk(
            name="sda",
            size_bytes=256 * GIB,
            model="USB SATA bridge",
            rotational=False,
            transport="usb",
            physical_sector=4096,
            min_io=4096,
            optimal_io=33553920,
            removable=True,
            scheduler="mq-deadline",
        )
    )
    parts = [
        Partition(
            name=f"nvme{i}n1p1",
            parent=f"nvme{i}n1",
            number=1,
            start_sector=2048,
            size_bytes=PART_BYTES,
            type_name="Linux RAID",
        )
        for i in range(4)
    ]
    members = []
    for i in range(4):
        state: tuple[str, ...] = ("in_sync",)
        if degraded and i == 3:
            state = ("faulty",)
        members.append(
            MdMember(
                device=f"nvme{i}n1p1", slot=i, state=state, errors=0, data_offset_sectors=264192
            )
        )
    total = 976508928 * 2
    sync = SyncStatus(
        action="resync", done_sectors=done_sectors, total_sectors=total, speed_kib_s=677000
    )
    array = MdArray(
        name="md127",
        level="raid10",
        size_bytes=976508928 * 1024,
        raid_disks=4,
        chunk_bytes=32 * 1024,
        layout="n2",
        metadata="1.2",
        array_name="evo:127",
        uuid="3f1c2a9e:5b7d4c11:8e2f6a03:9d4b1e77",
        array_state="active",
        degraded=1 if degraded else 0,
        members=tuple(members),
        sync=sync,
        stripe_cache_size=None,
    )
    pv = PhysicalVolume(
        device="md127", vg="vg0", size_bytes=array.size_bytes or 0, free_bytes=0, pe_start=1048576
    )
    vg = VolumeGroup(
        name="vg0",
        size_bytes=pv.size_bytes,
        free_bytes=0,
        extent_size=4 * 1024 * 1024,
        pv_count=1,
        lv_count=1,
    )
    lv = LogicalVolume(
        name="root",
        vg="vg0",
        size_bytes=pv.size_bytes,
        segtype="linear",
        kernel_name="dm-0",
        attr="-wi-ao----",
        devices=("md127",),
    )
    fs = Filesystem(
        device="dm-0",
        fstype="ext4",
        mountpoints=("/",),
        size_bytes=pv.size_bytes,
        used_bytes=120 * GIB,
        avail_bytes=pv.size_bytes - 120 * GIB,
        block_size=4096,
        stride=8,
        stripe_width=16,
    )
    edges = [(d.name, p.name) for d, p in zip(disks, parts, strict=False)]
    edges += [(p.name, "md127") for p in parts]
    edges.append(("md127", "dm-0"))
    return Machine(
        host="evo",
        kernel="6.1.0-18-amd64",
        disks=tuple(disks),
        partitions=tuple(parts),
        arrays=(array,),
        pvs=(pv,),
        vgs=(vg,),
        lvs=(lv,),
        filesystems=(fs,),
        edges=tuple(edges),
        notes=(ProbeNote("smartctl", "smartctl not found: SMART unavailable"),),
        mdstat=MDSTAT,
        taken_at=1000.0,
        is_root=False,
    )


@dataclass
class FakeBackend:
    """Implements app.backend.Backend over ``build_machine``; errors can be injected."""

    machine: Machine = field(default_factory=build_machine)
    read_only: str | None = "not root"
    fail_probe: str | None = None
    fail_sample: str | None = None
    clock: float = 1000.0
    probes: int = 0
    samples: int = 0

    @property
    def name(self) -> str:
        return "fake"

    @property
    def smart_enabled(self) -> bool:
        return True

    @property
    def read_only_reason(self) -> str | None:
        return self.read_only

    def now(self) -> float:
        return self.clock

    def probe(self) -> Machine:
        self.probes += 1
        if self.fail_probe:
            raise BackendError(self.fail_probe)
        return self.machine

    def sample(self) -> LiveSample:
        self.samples += 1
        if self.fail_sample:
            raise BackendError(self.fail_sample)
        return LiveSample(
            taken_at=self.clock,
            arrays=tuple(
                MdLive(
                    name=a.name,
                    array_state=a.array_state,
                    degraded=a.degraded,
                    sync=a.sync,
                    member_states=tuple((m.device, m.state) for m in a.members),
                    level=a.level,
                )
                for a in self.machine.arrays
            ),
        )

    def set_sync(self, done_sectors: int | None, action: str = "resync") -> None:
        """Move the (single) array's sync; ``None`` ends it."""
        arrays = []
        for a in self.machine.arrays:
            sync = None
            if done_sectors is not None and a.sync is not None:
                sync = replace(a.sync, done_sectors=done_sectors, action=action)
            arrays.append(replace(a, sync=sync))
        self.machine = replace(self.machine, arrays=tuple(arrays))

    def smart(self, disk: str) -> SmartReading:
        if disk == "sda":
            return SmartReading(device=disk, available=False, reason="USB bridge blocks SMART")
        return SmartReading(device=disk, available=True, health="PASSED", protocol="NVMe")

    def read_text(self, path: str) -> str | None:
        return None

    def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        return CommandResult(argv=tuple(argv), returncode=127, stderr="fake backend runs nothing")
