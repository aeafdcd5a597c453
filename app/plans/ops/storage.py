"""Operations on what sits on a device or under it: partition a disk, erase signatures, discard,
make a filesystem or an LVM volume, mount it, measure it (fio), test it (a SMART self-test)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.plans.ops.base import (
    LVM_NAME,
    MD_DEV,
    ErasesDevice,
    Op,
    OpError,
    device,
    number,
    shown,
    token,
)
from app.plans.shapes import SYSTEM_TREES

LEAVE_FREE_MAX = 50  # percent: more is not over-provisioning, it is a smaller disk
MOUNT_OPTIONS = frozenset({"defaults", "nofail", "noatime", "relatime", "discard"})
FIO_RW = ("randread", "randwrite", "read", "write")
FIO_BLOCKS = ("4k", "64k", "1m")
_SIZE = r"[0-9]{1,12}[KMGTkmgt]?"
_COMPONENT = r"[A-Za-z0-9_+-][A-Za-z0-9._+-]{0,254}"


@dataclass(frozen=True, slots=True)
class PartitionDisk(Op):
    """``parted --script --align optimal DISK mklabel gpt mkpart raid 1MiB END% set 1 raid on``:
    a GPT with one Linux RAID partition from 1 MiB (aligned for any sector size and erase
    block) to ``end_percent`` of the disk (the rest left for over-provisioning)."""

    KIND = "disk-partition"
    disk: str
    end_percent: int = 100

    def __post_init__(self) -> None:
        device(self.disk, "parted")
        number(self.end_percent, "parted: the partition's end (%)", 100 - LEAVE_FREE_MAX, 100)

    def argv(self) -> tuple[str, ...]:
        return (
            *("parted", "--script", "--align", "optimal", self.disk, "mklabel", "gpt"),
            *("mkpart", "raid", "1MiB", f"{self.end_percent}%", "set", "1", "raid", "on"),
        )

    def destroys(self) -> str:
        return self.disk


@dataclass(frozen=True, slots=True)
class Wipe(ErasesDevice):
    """``wipefs -a DEV``: every signature erased (md superblock, filesystem, LVM label,
    partition table)."""

    KIND = "wipe"
    device: str

    def __post_init__(self) -> None:
        device(self.device, "wipefs")

    def argv(self) -> tuple[str, ...]:
        return ("wipefs", "-a", self.device)


@dataclass(frozen=True, slots=True)
class Discard(Op):
    """``blkdiscard DEV``: every block of a member device discarded (the benchmark's clean
    state), or of the benchmark's own array before a write run (RAID-0/1/10 pass it on)."""

    KIND = "discard"
    device: str

    @property
    def is_array(self) -> bool:
        return MD_DEV.fullmatch(self.device) is not None

    def __post_init__(self) -> None:
        device(self.device, "blkdiscard")
        # an array only in a benchmark, and only the one it made (guards.allowlist)
        if self.device.startswith("/dev/md/"):
            raise OpError("blkdiscard: an array by its kernel name only (/dev/mdN)")

    def argv(self) -> tuple[str, ...]:
        return ("blkdiscard", self.device)

    def destroys(self) -> str:
        return self.device


def _label(label: str | None, limit: int, what: str) -> None:
    if label is None:
        return
    if not isinstance(label, str) or not label or len(label) > limit or label.startswith("-"):
        raise OpError(f"{what}: label {shown(label)} is not one raidman plans")
    if not label.isprintable():
        raise OpError(f"{what}: the label has control characters")


@dataclass(frozen=True, slots=True)
class MakeExt4(Op):
    """``mkfs.ext4 -b BLOCK [-E stride=S,stripe_width=W] [-L LABEL] DEV``."""

    KIND = "mkfs-ext4"
    device: str
    block_size: int = 4096
    stride: int | None = None
    stripe_width: int | None = None
    label: str | None = None

    def __post_init__(self) -> None:
        device(self.device, "mkfs.ext4", fs=True)
        if self.block_size not in (1024, 2048, 4096, 65536):
            raise OpError(f"mkfs.ext4: block size {shown(self.block_size)} is not planned")
        if (self.stride is None) != (self.stripe_width is None):
            raise OpError("mkfs.ext4: stride and stripe_width go together")
        if self.stride is not None:
            number(self.stride, "mkfs.ext4: stride", 0, 999_999_999)
            number(self.stripe_width or 0, "mkfs.ext4: stripe_width", 0, 999_999_999)
        _label(self.label, 16, "mkfs.ext4")

    def argv(self) -> tuple[str, ...]:
        e = ("-E", f"stride={self.stride},stripe_width={self.stripe_width}")
        return (
            "mkfs.ext4",
            *("-b", str(self.block_size)),
            *(e if self.stride is not None else ()),
            *(("-L", self.label) if self.label is not None else ()),
            self.device,
        )

    def destroys(self) -> str:
        return self.device


@dataclass(frozen=True, slots=True)
class MakeXfs(Op):
    """``mkfs.xfs [-d su=SU,sw=SW[,agcount=N]] [-L LABEL] DEV``."""

    KIND = "mkfs-xfs"
    device: str
    su: str | None = None  # mkfs.xfs's size spelling ("64k")
    sw: int | None = None
    agcount: int | None = None
    label: str | None = None

    def __post_init__(self) -> None:
        device(self.device, "mkfs.xfs", fs=True)
        if (self.su is None) != (self.sw is None):
            raise OpError("mkfs.xfs: su and sw go together")
        if self.su is not None:
            token(self.su, "mkfs.xfs: su", r"[0-9]{1,9}[kmgKMG]?")
            number(self.sw or 0, "mkfs.xfs: sw", 0, 9999)
        if self.agcount is not None:
            if self.su is None:
                raise OpError("mkfs.xfs: agcount is planned only with su and sw")
            number(self.agcount, "mkfs.xfs: agcount", 0, 9999)
        _label(self.label, 12, "mkfs.xfs")

    def argv(self) -> tuple[str, ...]:
        d: tuple[str, ...] = ()
        if self.su is not None:
            ag = f",agcount={self.agcount}" if self.agcount is not None else ""
            d = ("-d", f"su={self.su},sw={self.sw}{ag}")
        label = ("-L", self.label) if self.label is not None else ()
        return ("mkfs.xfs", *d, *label, self.device)

    def destroys(self) -> str:
        return self.device


@dataclass(frozen=True, slots=True)
class TuneExt4Stride(Op):
    """``tune2fs -E stride=S,stripe_width=W DEV``: an existing ext4's RAID hints."""

    KIND = "tune-ext4"
    device: str
    stride: int
    stripe_width: int

    def __post_init__(self) -> None:
        device(self.device, "tune2fs", fs=True)
        number(self.stride, "tune2fs: stride", 0, 999_999_999)
        number(self.stripe_width, "tune2fs: stripe_width", 0, 999_999_999)

    def argv(self) -> tuple[str, ...]:
        return (
            "tune2fs",
            "-E",
            f"stride={self.stride},stripe_width={self.stripe_width}",
            self.device,
        )

    def names(self) -> tuple[str, ...]:
        return (self.device,)


@dataclass(frozen=True, slots=True)
class PvCreate(Op):
    """``pvcreate [--dataalignment SIZE] DEV``."""

    KIND = "lvm-pvcreate"
    device: str
    data_alignment: str | None = None

    def __post_init__(self) -> None:
        device(self.device, "pvcreate", fs=True)
        if self.data_alignment is not None:
            token(self.data_alignment, "pvcreate: --dataalignment", _SIZE)

    def argv(self) -> tuple[str, ...]:
        align = ("--dataalignment", self.data_alignment) if self.data_alignment else ()
        return ("pvcreate", *align, self.device)

    def destroys(self) -> str:
        return self.device


@dataclass(frozen=True, slots=True)
class VgCreate(Op):
    """``vgcreate VG DEV``."""

    KIND = "lvm-vgcreate"
    vg: str
    device: str

    def __post_init__(self) -> None:
        if not isinstance(self.vg, str) or LVM_NAME.fullmatch(self.vg) is None:
            raise OpError(f"vgcreate: {shown(self.vg)} is not an LVM name")
        device(self.device, "vgcreate", fs=True)

    def argv(self) -> tuple[str, ...]:
        return ("vgcreate", self.vg, self.device)

    def names(self) -> tuple[str, ...]:
        return (self.device,)


@dataclass(frozen=True, slots=True)
class LvCreate(Op):
    """``lvcreate --yes --name LV --extents N%FREE|--size SIZE VG``."""

    KIND = "lvm-lvcreate"
    vg: str
    name: str
    extents: str | None = None  # "100%FREE", "50%VG", "1000"
    size: str | None = None  # "10G"

    def __post_init__(self) -> None:
        for v, what in ((self.vg, "volume group"), (self.name, "logical volume")):
            if not isinstance(v, str) or LVM_NAME.fullmatch(v) is None:
                raise OpError(f"lvcreate: {what} {shown(v)} is not an LVM name")
        if (self.extents is None) == (self.size is None):
            raise OpError("lvcreate: --extents or --size, one of them")
        if self.extents is not None:
            token(self.extents, "lvcreate: --extents", r"[0-9]{1,3}%(FREE|VG|PVS)|[0-9]{1,12}")
        if self.size is not None:
            token(self.size, "lvcreate: --size", r"[0-9]{1,12}(\.[0-9]+)?[KMGTPkmgtp]?")

    def argv(self) -> tuple[str, ...]:
        amount = ("--extents", self.extents) if self.extents is not None else ("--size", self.size)
        return ("lvcreate", "--yes", "--name", self.name, *(str(x) for x in amount), self.vg)

    def creates(self) -> str:
        return f"/dev/{self.vg}/{self.name}"


@dataclass(frozen=True, slots=True)
class Fio(Op):
    """One fio run of the benchmark (``app.plans.builders.benchmark``): direct I/O, JSON output."""

    KIND = "fio"
    filename: str
    rw: str
    bs: str
    numjobs: int
    size: str
    runtime: int | None = None  # seconds: the run ends at --size or here, whichever comes first

    def __post_init__(self) -> None:
        device(self.filename, "fio: --filename", fs=True)
        if self.runtime is not None:
            number(self.runtime, "fio: --runtime", 1, 3600)
        if self.rw not in FIO_RW:
            raise OpError(f"fio: --rw={shown(self.rw)} is not a pattern raidman runs")
        if self.bs not in FIO_BLOCKS:
            raise OpError(f"fio: --bs={shown(self.bs)} is not a block size raidman runs")
        number(self.numjobs, "fio: --numjobs", 1, 99)
        token(self.size, "fio: --size", _SIZE)

    def argv(self) -> tuple[str, ...]:
        return (
            "fio",
            "--name=raidman",
            f"--filename={self.filename}",
            "--direct=1",
            "--ioengine=psync",
            f"--rw={self.rw}",
            f"--bs={self.bs}",
            f"--numjobs={self.numjobs}",
            f"--size={self.size}",
            *((f"--runtime={self.runtime}",) if self.runtime is not None else ()),
            "--group_reporting",
            "--output-format=json",
        )

    @property
    def writes_data(self) -> bool:
        return "write" in self.rw

    def destroys(self) -> str | None:
        return self.filename if self.writes_data else None

    def names(self) -> tuple[str, ...]:
        return (self.filename,)


@dataclass(frozen=True, slots=True)
class SmartTest(Op):
    """``smartctl -t short|long DEV``: a self-test inside the drive (nothing written)."""

    KIND = "smart-test"
    device: str
    test: str = "short"

    def __post_init__(self) -> None:
        device(self.device, "smartctl")
        if self.test not in ("short", "long"):
            raise OpError(f"smartctl: -t {shown(self.test)} is not planned (short, long)")

    def argv(self) -> tuple[str, ...]:
        return ("smartctl", "-t", self.test, self.device)

    def names(self) -> tuple[str, ...]:
        return (self.device,)


# a data filesystem is mounted below these or on a directory of its own at the top
# (/srv/data, /mnt/backup, /data): never on them, nor on or below the directories the system,
# its users and its programs keep (mounting over /home hides every user's files)
NOT_ON = ("/", "/root", "/home", "/opt", "/tmp", "/var", "/srv", "/mnt", "/media", "/lost+found")
NOT_UNDER = (*SYSTEM_TREES, "/root", "/home", "/opt", "/tmp", "/var", "/snap", "/lost+found")


def mountpoint_problem(path: str) -> str | None:
    """None when raidman may create and mount on ``path``: absolute, plain names, below /srv,
    /mnt or /media or a new directory at the top (/data), never a directory the system, its
    users or its programs keep (/, /root, /home, /opt, /tmp, /var, /etc, /usr, ...)."""
    parts = path.split("/")
    if not path.startswith("/") or len(parts) < 2 or path == "/" or path.endswith("/"):
        return f"{path!r}: an absolute directory, not /"
    if not all(re.fullmatch(_COMPONENT, p) for p in parts[1:]) or len(path) > 1024:
        return f"{path!r}: plain names only (no '.', '..', spaces, hidden or empty parts)"
    if path in NOT_ON:
        return f"{path!r}: a directory the system keeps; mount below /srv, /mnt or /media"
    for tree in NOT_UNDER:
        if path == tree or path.startswith(tree + "/"):
            return f"{path!r}: not in {tree} (the system's, its users' or its programs')"
    return None


def options_problem(opts: str) -> str | None:
    words = opts.split(",")
    if not opts or any(w not in MOUNT_OPTIONS for w in words) or len(set(words)) != len(words):
        return f"mount options {opts!r}: only {', '.join(sorted(MOUNT_OPTIONS))}"
    return None


@dataclass(frozen=True, slots=True)
class MakeMountPoint(Op):
    """``mkdir -p DIR`` for a mount point outside the system's own trees."""

    KIND = "mkdir-mountpoint"
    path: str

    def __post_init__(self) -> None:
        bad = mountpoint_problem(self.path) if isinstance(self.path, str) else "not a path"
        if bad is not None:
            raise OpError(f"mkdir: {bad}")

    def argv(self) -> tuple[str, ...]:
        return ("mkdir", "-p", self.path)


@dataclass(frozen=True, slots=True)
class Mount(Op):
    """``mount -o OPTS DEV DIR``."""

    KIND = "mount"
    device: str
    mountpoint: str
    options: str = "defaults"

    def __post_init__(self) -> None:
        device(self.device, "mount", fs=True)
        bad = options_problem(self.options) or mountpoint_problem(self.mountpoint)
        if bad is not None:
            raise OpError(f"mount: {bad}")

    def argv(self) -> tuple[str, ...]:
        return ("mount", "-o", self.options, self.device, self.mountpoint)

    def names(self) -> tuple[str, ...]:
        return (self.device,)
