"""A small recording backend and hand-built machines for plan tests (no simulated backend needed)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from app.backend import CommandResult
from app.model import (
    Disk,
    Filesystem,
    Machine,
    MdArray,
    MdMember,
    Partition,
    PhysicalVolume,
    VolumeGroup,
)
from app.model.live import LiveSample
from app.model.smart import SmartReading
from backends.simulated.usage import usage_of

GIB = 1024**3
Responder = Callable[[tuple[str, ...], str | None], CommandResult | None]


def is_preflight_read(argv: tuple[str, ...]) -> bool:
    return argv[:2] in (("wipefs", "--no-act"), ("mdadm", "--examine")) or argv[:2] == (
        "stat",
        "-c",
    )


@dataclass
class FakeBackend:
    """Records every run(); answers from ``responders`` (first non-None wins), else exit 0."""

    machine: Machine
    read_only: str | None = None
    responders: list[Responder] = field(default_factory=list)
    calls: list[tuple[tuple[str, ...], str | None]] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    smart_readings: dict[str, SmartReading] = field(default_factory=dict)
    smart_asked: list[str] = field(default_factory=list)

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
        return 0.0

    def probe(self) -> Machine:
        return self.machine

    def sample(self) -> LiveSample:  # pragma: no cover - not used by plan tests
        raise NotImplementedError

    def smart(self, disk: str) -> SmartReading:
        self.smart_asked.append(disk)
        return self.smart_readings.get(
            disk, SmartReading(device=disk, available=False, reason="fake: no SMART")
        )

    def read_text(self, path: str) -> str | None:
        return self.files.get(path)

    def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        t = tuple(argv)
        self.calls.append((t, stdin))
        for r in self.responders:
            res = r(t, stdin)
            if res is not None:
                return res
        return CommandResult(t, 0, "", "")

    @property
    def argvs(self) -> list[tuple[str, ...]]:
        return [a for a, _ in self.calls]

    @property
    def ran(self) -> list[tuple[str, ...]]:
        """What ran, less pre-flight's reads (signatures, superblocks, a mount point's
        directories): the steps of a plan, in order."""
        return [a for a in self.argvs if not is_preflight_read(a)]

    def fail_when(self, prog: str, code: int, stderr: str = "", stdout: str = "") -> None:
        def r(argv: tuple[str, ...], stdin: str | None) -> CommandResult | None:
            if argv[0] == prog:
                return CommandResult(argv, code, stdout, stderr)
            return None

        self.responders.append(r)


def with_usage(m: Machine) -> Machine:
    """The machine with the kernel's mounts/swaps/holders as the simulator derives them."""
    return replace(m, usage=usage_of(m))


def nvme(name: str, size: int = 1000 * GIB, rotational: bool = False) -> Disk:
    return Disk(
        name=name, size_bytes=size, model="Fake NVMe", rotational=rotational, transport="nvme"
    )


def blank_machine() -> Machine:
    """Four empty 1 TB NVMe disks plus a root disk sda with / and /boot."""
    return with_usage(
        Machine(
            host="test",
            kernel="6.1",
            disks=(
                nvme("nvme0n1"),
                nvme("nvme1n1"),
                nvme("nvme2n1"),
                nvme("nvme3n1"),
                Disk(name="sda", size_bytes=500 * GIB, rotational=True, partition_table="gpt"),
                Disk(name="sdb", size_bytes=2000 * GIB, rotational=True),
            ),
            partitions=(
                Partition(name="sda1", parent="sda", number=1, start_sector=2048, size_bytes=GIB),
                Partition(
                    name="sda2", parent="sda", number=2, start_sector=4096, size_bytes=400 * GIB
                ),
                Partition(
                    name="sda3", parent="sda", number=3, start_sector=9000, size_bytes=8 * GIB
                ),
            ),
            filesystems=(
                Filesystem(device="sda1", fstype="vfat", mountpoints=("/boot/efi",)),
                Filesystem(device="sda2", fstype="ext4", mountpoints=("/",)),
                Filesystem(device="sda3", fstype="swap"),
            ),
            edges=(("sda", "sda1"), ("sda", "sda2"), ("sda", "sda3")),
        )
    )


def array_machine(*, bitmap: str | None = None, degraded_member: str | None = None) -> Machine:
    """md127: RAID-10 n2 of nvme0n1..nvme3n1 (32K chunk) as an LVM PV, nvme4n1 spare disk free,
    md126: RAID-5 of sdc,sdd,sde (512K), mounted /srv."""
    members = []
    degraded = 0
    for i in range(4):
        dev = f"nvme{i}n1"
        if dev == degraded_member:
            degraded = 1
            continue
        members.append(MdMember(device=dev, slot=i, state=("in_sync",)))
    r10 = MdArray(
        name="md127",
        level="raid10",
        size_bytes=2000 * GIB,
        raid_disks=4,
        chunk_bytes=32 * 1024,
        layout="n2",
        metadata="1.2",
        array_name="host:127",
        array_state="clean",
        degraded=degraded,
        bitmap=bitmap,
        members=tuple(members),
    )
    r5 = MdArray(
        name="md126",
        level="raid5",
        size_bytes=4000 * GIB,
        raid_disks=3,
        chunk_bytes=512 * 1024,
        layout="left-symmetric",
        metadata="1.2",
        array_name="host:126",
        bitmap="internal",
        stripe_cache_size=256,
        members=(
            *tuple(
                MdMember(device=d, slot=i, state=("in_sync",))
                for i, d in enumerate(("sdc", "sdd", "sde"))
            ),
            MdMember(device="sdf", slot=None, state=("spare",)),
        ),
    )
    disks = tuple(nvme(f"nvme{i}n1") for i in range(5)) + tuple(
        Disk(name=d, size_bytes=2000 * GIB, rotational=True) for d in ("sdc", "sdd", "sde", "sdf")
    )
    edges = tuple((f"nvme{i}n1", "md127") for i in range(4) if f"nvme{i}n1" != degraded_member)
    edges += tuple((d, "md126") for d in ("sdc", "sdd", "sde", "sdf"))
    return with_usage(
        Machine(
            host="test",
            kernel="6.1",
            disks=disks,
            arrays=(r10, r5),
            pvs=(PhysicalVolume(device="md127", vg="vg127", size_bytes=2000 * GIB),),
            vgs=(
                VolumeGroup(
                    name="vg127", size_bytes=2000 * GIB, free_bytes=0, extent_size=4 * 1024**2
                ),
            ),
            filesystems=(Filesystem(device="md126", fstype="xfs", mountpoints=("/srv",)),),
            edges=edges,
        )
    )
