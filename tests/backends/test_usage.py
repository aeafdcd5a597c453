"""The kernel's in-use tables read by backends.linux.usage: mountinfo major:minor through sysfs,
bind mounts, major-0 mounts, swap partitions and files, holders through partitions and dm.

The fake source's mountinfo lines are in the kernel's format (Documentation/filesystems/proc.rst
3.5); the real dev-host capture is tests/fixtures/preflight/devhost-root-on-vda.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.backend import CommandResult
from app.model.devices import ProbeNote
from app.model.live import DiskIO
from app.model.usage import HOLDERS, MOUNTS, SWAPS
from backends.linux.usage import read_usage

MOUNTINFO = """\
22 1 8:2 / / rw,relatime - ext4 /dev/sda2 rw
23 22 8:1 / /boot rw,relatime - vfat /dev/sda1 rw
24 22 253:0 / /srv rw,relatime - xfs /dev/mapper/vg0-srv rw
25 22 253:0 /exports /home/exports rw,relatime - xfs /dev/mapper/vg0-srv rw
26 22 0:45 / /data rw,relatime - btrfs /dev/sdd rw
27 22 0:21 / /proc rw - proc proc rw
28 22 0:50 / /merged rw - overlay overlay rw,lowerdir=/srv/a
"""
PROC_SWAPS = """\
Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority
/dev/sda3                               partition\t8388604\t\t0\t\t-2
/srv/swap\\040file                       file\t\t1048572\t\t0\t\t-3
"""


class FakeSource:
    smart = True

    def __init__(
        self,
        files: dict[str, str],
        dirs: dict[str, tuple[str, ...]],
        links: dict[str, str],
        unrecorded: Sequence[str] = (),
    ) -> None:
        self.files, self.dirs, self.links = files, dirs, links
        self.unrecorded = set(unrecorded)

    def recorded(self, path: str) -> bool:
        return path not in self.unrecorded

    def read_text(self, path: str) -> str | None:
        return self.files.get(path)

    def listdir(self, path: str) -> tuple[str, ...]:
        return self.dirs.get(path, ())

    def readlink(self, path: str) -> str | None:
        return self.links.get(path)

    def run(
        self, argv: Sequence[str], stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        return CommandResult(tuple(argv), 127)

    def disk_io(self) -> tuple[DiskIO, ...]:
        return ()

    def uname(self) -> tuple[str, str]:
        return ("h", "6.1")

    def euid(self) -> int:
        return 0

    def now(self) -> float:
        return 0.0

    def take_notes(self) -> tuple[ProbeNote, ...]:
        return ()


def _server(**kw: object) -> FakeSource:
    """sda1 /boot, sda2 /, sda3 swap; sdb1+sdc1 → md0 → dm-0 (vg0-srv on /srv, bind on
    /home/exports); sdd btrfs on /data (major 0); sde free."""
    files = {
        "/proc/self/mountinfo": MOUNTINFO,
        "/proc/swaps": PROC_SWAPS,
        "/sys/class/block/sdd/dev": "8:48\n",
    }
    dirs = {
        "/sys/block": ("dm-0", "md0", "sda", "sdb", "sdc", "sdd", "sde"),
        "/sys/block/sda": ("dev", "holders", "queue", "sda1", "sda2", "sda3"),
        "/sys/block/sdb": ("holders", "sdb1"),
        "/sys/block/sdc": ("holders", "sdc1"),
        "/sys/block/sdb/sdb1/holders": ("md0",),
        "/sys/block/sdc/sdc1/holders": ("md0",),
        "/sys/block/md0/holders": ("dm-0",),
    }
    links = {
        "/sys/dev/block/8:2": "../../devices/pci0000:00/ata1/host0/block/sda/sda2",
        "/sys/dev/block/8:1": "../../devices/pci0000:00/ata1/host0/block/sda/sda1",
        "/sys/dev/block/253:0": "../../devices/virtual/block/dm-0",
        "/dev/mapper/vg0-srv": "../dm-0",
    }
    return FakeSource(files, dirs, links, **kw)  # type: ignore[arg-type]


def test_mounts_resolved_through_sysfs_with_bind_mounts_and_major_zero() -> None:
    u = read_usage(_server())
    assert u.mountpoints("sda2") == ("/",)
    assert u.mountpoints("sda1") == ("/boot",)
    assert u.mountpoints("dm-0") == ("/srv", "/home/exports")  # the bind mount counts too
    assert u.mountpoints("sdd") == ("/data",)  # btrfs: major 0, source a real block device
    assert "root" not in {n for n, _ in u.mounts}
    assert not any(mp in ("/proc", "/merged") for _, mp in u.mounts)
    assert u.unread == ()


def test_swaps_partition_and_file() -> None:
    u = read_usage(_server())
    assert u.swap_files("sda3") == ("/dev/sda3",)
    assert u.swap_files("dm-0") == ("/srv/swap file",)  # the file's mount decides the device


def test_holders_partitions_and_the_disks_under_a_mount() -> None:
    u = read_usage(_server())
    assert u.disk_of("sdb1") == "sdb" and u.partitions_of("sda") == ("sda1", "sda2", "sda3")
    assert [n for n, _ in u.stacked_on("sdb1")] == ["md0", "dm-0"]
    # md0 on sdb1 and sdc1, dm-0 on md0: the disks and the partitions that carry it
    assert sorted(u.carriers_under("dm-0")) == [("sdb", "sdb1"), ("sdc", "sdc1")]
    assert u.carriers_under("sda2") == (("sda", "sda2"),)
    assert u.carriers_under("sda") == (("sda", "sda"),)


def test_lsblk_majmin_is_the_fallback_when_sysfs_has_no_link() -> None:
    src = _server()
    del src.links["/sys/dev/block/8:2"]
    u = read_usage(src, {"8:2": "sda2"})
    assert u.mountpoints("sda2") == ("/",)


def test_unreadable_and_unrecorded_are_listed_not_passed() -> None:
    src = _server(unrecorded=("/proc/swaps", "/sys/block/sde/holders"))
    del src.files["/proc/self/mountinfo"]
    u = read_usage(src)
    what = {w for w, _ in u.unread}
    assert what == {MOUNTS, SWAPS, HOLDERS}
    assert (SWAPS, "/proc/swaps not recorded in this capture") in u.unread
    assert (HOLDERS, "/sys/block/sde/holders not recorded in this capture") in u.unread
    assert u.mounts == ()


def test_garbled_mountinfo_is_unread() -> None:
    src = _server()
    src.files["/proc/self/mountinfo"] = "this is not mountinfo\n"
    u = read_usage(src)
    assert [w for w, _ in u.unread] == [MOUNTS, SWAPS]
    assert "cannot read /proc/self/mountinfo" in u.unread[0][1]
    # the swap file's device cannot be known without the mount table: not passed either
    assert u.unread[1] == (SWAPS, "cannot tell which device holds the swap /srv/swap file")
