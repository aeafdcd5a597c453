"""Hand-built Machines mirroring real topologies, and a dict-backed Backend for gather()."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from app.backend import CommandResult
from app.model import (
    Disk,
    Filesystem,
    LogicalVolume,
    Machine,
    MdArray,
    MdMember,
    Partition,
    PhysicalVolume,
    VolumeGroup,
)
from app.model.live import LiveSample
from app.model.smart import SmartReading

SAMPLES = Path(__file__).parent / "samples"
GiB = 1 << 30
EVO_BYTES = 500107862016  # Samsung 850 EVO 500 GB
EVO_UUID = "3aaf6c4e:4e6fe9d5:9bb0d6a3:2f6c1d0e"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def usb_bridge(*, via_usb: bool = True) -> Machine:
    """The Samsung 850 Pro of seed 003 behind a JMicron USB-SATA bridge: physical 4096,
    min 4096, optimal 33553920; YaST/parted put partitions at multiples of 65535 sectors
    (fdisk listing in the article). ``alignment_offset`` values are what the real kernel
    reports for such a disk (issue 6: 512 and 1024 for the first two)."""
    size = 512110190592
    if via_usb:
        disk = Disk(
            "sdh",
            size,
            model="Samsung SSD 850 PRO 512GB",
            rotational=False,
            transport="usb",
            physical_sector=4096,
            min_io=4096,
            optimal_io=33553920,
            scheduler="mq-deadline",
            partition_table="gpt",
        )
        starts = [
            (65535, 65535, 512),
            (131070, 1245165, 1024),
            (1376235, 35651040, 0),
        ]  # sdh3: offset not given, computed
    else:
        disk = Disk(
            "sdh",
            size,
            model="Samsung SSD 850 PRO 512GB",
            rotational=False,
            transport="sata",
            physical_sector=512,
            min_io=512,
            optimal_io=0,
            scheduler="mq-deadline",
            partition_table="gpt",
        )
        starts = [(2048, 65536, 0), (67584, 1245184, 0), (1312768, 35651584, 0)]
    parts = tuple(
        Partition(f"sdh{i}", "sdh", i, start, n * 512, alignment_offset=ao)
        for i, (start, n, ao) in enumerate(starts, 1)
    )
    return Machine(
        host="mytux",
        kernel="6.1.0",
        disks=(disk,),
        partitions=parts,
        edges=tuple(("sdh", p.name) for p in parts),
    )


@dataclass
class Stack:
    """ext4 (or xfs) on LV vg0/data on PV md0 on an md array of partitions on SSDs."""

    level: str = "raid10"
    layout: str | None = "n2"
    chunk: int = 32 * 1024
    n: int = 4
    fstype: str = "ext4"
    pe_start: int = 1 << 20
    extent: int = 4 << 20
    bitmap: str | None = "internal"
    stripe_cache: int | None = None
    metadata: str = "1.2"
    data_offset: int = 262144
    part_fraction: float = 0.9  # share of each SSD its one partition covers
    rotational: bool = False
    md_discard: int = 2147450880
    name: str = "md0"
    disk_kw: dict[str, object] = field(default_factory=dict)

    def machine(self) -> Machine:
        disks, parts, members, edges = [], [], [], []
        psize = int(EVO_BYTES * self.part_fraction) // (1 << 20) * (1 << 20)
        for i in range(self.n):
            dn = "sd" + "abcdefgh"[i]
            disks.append(
                Disk(
                    dn,
                    EVO_BYTES,
                    model="Samsung SSD 850 EVO 500GB",
                    rotational=self.rotational,
                    transport="sata",
                    discard_granularity=512,
                    discard_max_bytes=2147450880,
                    scheduler="[mq-deadline] none",
                    partition_table="gpt",
                    **self.disk_kw,  # type: ignore[arg-type]
                )
            )
            parts.append(Partition(f"{dn}1", dn, 1, 2048, psize))
            members.append(
                MdMember(f"{dn}1", i, ("in_sync",), 0, self.data_offset, (psize // 1024) - 131072)
            )
            edges += [(dn, f"{dn}1"), (f"{dn}1", self.name)]
        arr = MdArray(
            self.name,
            self.level,
            size_bytes=psize * 2,
            raid_disks=self.n,
            chunk_bytes=self.chunk,
            layout=self.layout,
            metadata=self.metadata,
            array_name="host:evo",
            uuid=EVO_UUID,
            array_state="clean",
            bitmap=self.bitmap,
            members=tuple(members),
            stripe_cache_size=self.stripe_cache,
        )
        pv = PhysicalVolume(self.name, "vg0", psize * 2, pe_start=self.pe_start)
        vg = VolumeGroup("vg0", psize * 2, 0, self.extent)
        lv = LogicalVolume("data", "vg0", psize, "linear", kernel_name="dm-0", devices=(self.name,))
        fs = Filesystem("dm-0", self.fstype, mountpoints=("/srv",), block_size=4096)
        edges += [(self.name, "dm-0")]
        return Machine(
            host="host",
            kernel="6.1.0",
            disks=tuple(disks),
            partitions=tuple(parts),
            arrays=(arr,),
            pvs=(pv,),
            vgs=(vg,),
            lvs=(lv,),
            filesystems=(fs,),
            edges=tuple(edges),
        )


def conf_text(uuid: str = EVO_UUID, devname: str = "/dev/md/evo") -> str:
    return (
        "# mdadm.conf\nHOMEHOST <system>\nMAILADDR root\n"
        f"ARRAY {devname} metadata=1.2 name=host:evo UUID={uuid}\n"
    )


Handler = Callable[[tuple[str, ...], str | None], CommandResult]


@dataclass
class DictBackend:
    """A Backend answering ``run``/``read_text`` from dicts; unknown programs exit 127."""

    commands: dict[tuple[str, ...], CommandResult | str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    raise_on: tuple[str, ...] = ()
    calls: list[tuple[str, ...]] = field(default_factory=list)

    name: str = "dict"
    read_only_reason: str | None = "test"

    def now(self) -> float:
        return 0.0

    def probe(self) -> Machine:
        raise NotImplementedError

    def sample(self) -> LiveSample:
        raise NotImplementedError

    def smart(self, disk: str) -> SmartReading:
        return SmartReading(disk, False, "test")

    def read_text(self, path: str) -> str | None:
        if any(path.startswith(r) for r in self.raise_on):
            raise PermissionError(13, "Permission denied", path)
        return self.files.get(path)

    def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        key = tuple(argv)
        self.calls.append(key)
        if key[0] in self.raise_on:
            raise OSError("boom")
        r = self.commands.get(key)
        if r is None:
            return CommandResult(key, 127, "", f"{key[0]}: not found")
        if isinstance(r, str):
            return CommandResult(key, 0, r, "")
        return r


def with_array(m: Machine, **changes: object) -> Machine:
    return replace(m, arrays=tuple(replace(a, **changes) for a in m.arrays))  # type: ignore[arg-type]
