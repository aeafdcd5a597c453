"""Runs INSIDE the guest: bring every test disk back to blank (``vm.reset_disks()``).

Fast on purpose (every scenario starts with it): signatures are destroyed by zeroing the first
4 MiB and the last 1 MiB of each device from Python (md superblocks 0.90/1.0/1.1/1.2 and their
bitmaps, GPT and its backup, LVM labels, ext4/XFS superblocks), top of the stack first, so
nothing reappears when a later scenario builds the same geometry again. Processes are only
started where the kernel needs them (umount, vgchange, dmsetup, mdadm --stop, re-read the
partition table, udevadm settle).
"""

from __future__ import annotations

import fcntl
import glob
import os
import subprocess
import time
from typing import Any

DISK_GLOBS = ("/sys/block/nvme*n*", "/sys/block/vd*")
MOUNT_PREFIXES = ("/dev/md", "/dev/mapper/", "/dev/dm-", "/dev/nvme", "/dev/vd")
HEAD = 4 << 20
TAIL = 1 << 20
BLKRRPART = 0x125F


def _run(argv: list[str], log: list[str]) -> subprocess.CompletedProcess[str]:
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    log.append(
        f"{' '.join(argv)} -> {p.returncode} ({time.monotonic() - t0:.2f} s) {p.stderr.strip()[:200]}"
    )
    return p


def _names(pattern: str) -> list[str]:
    return sorted(os.path.basename(p) for p in glob.glob(pattern))


def _disks() -> list[str]:
    return [n for g in DISK_GLOBS for n in _names(g)]


def _partitions(disk: str) -> list[str]:
    return _names(f"/sys/block/{disk}/{disk}*")


def _zero_ends(dev: str, log: list[str]) -> None:
    """Zero the head and the tail of /dev/<dev> (errors logged, never raised)."""
    try:
        fd = os.open(f"/dev/{dev}", os.O_WRONLY | os.O_EXCL)
    except OSError:
        try:  # busy (still held): write anyway
            fd = os.open(f"/dev/{dev}", os.O_WRONLY)
        except OSError as e:
            log.append(f"zero {dev}: {e}")
            return
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
        for start, length in ((0, min(HEAD, size)), (max(0, size - TAIL), min(TAIL, size))):
            os.lseek(fd, start, os.SEEK_SET)
            os.write(fd, bytes(length))
        os.fsync(fd)
    except OSError as e:
        log.append(f"zero {dev}: {e}")
    finally:
        os.close(fd)


def _reread(disk: str, log: list[str]) -> None:
    try:
        fd = os.open(f"/dev/{disk}", os.O_RDONLY)
        try:
            fcntl.ioctl(fd, BLKRRPART)
        finally:
            os.close(fd)
    except OSError as e:
        log.append(f"BLKRRPART {disk}: {e}")
        _run(["partx", "-d", f"/dev/{disk}"], log)


def reset() -> dict[str, Any]:
    with open("/proc/cmdline") as f:
        if "virtme" not in f.read():  # never wipe a real machine's disks
            raise RuntimeError("guest_reset.reset() refuses to run outside the virtme-ng guest")
    log: list[str] = []
    t0 = time.monotonic()
    with open("/proc/mounts") as f:
        mounts = [line.split()[:2] for line in f]
    for dev, mnt in sorted(mounts, key=lambda m: -len(m[1])):
        if dev.startswith(MOUNT_PREFIXES) and _run(["umount", mnt], log).returncode != 0:
            _run(["umount", "-l", mnt], log)
    with open("/proc/swaps") as f:
        if len(f.read().splitlines()) > 1:
            _run(["swapoff", "-a"], log)
    if _names("/sys/block/dm-*"):
        for dm in _names("/sys/block/dm-*"):
            _zero_ends(dm, log)
        _run(["vgchange", "-an"], log)
        _run(["dmsetup", "remove_all", "-f"], log)
    stopped: list[str] = []
    for _ in range(4):  # stacked arrays, and udev re-assembling what was just stopped
        arrays = _names("/sys/block/md*")
        for md in arrays:
            _zero_ends(md, log)
        for md in reversed(arrays):  # md127 on top of md0.. is rare; retry loop handles it
            _run(["mdadm", "--stop", f"/dev/{md}"], log)
            stopped.append(md)
        for disk in _disks():
            parts = _partitions(disk)
            for part in parts:
                _zero_ends(part, log)
            _zero_ends(disk, log)
            if parts:
                _reread(disk, log)
        if arrays or stopped:
            _run(["udevadm", "settle", "--timeout=30"], log)
        if not _names("/sys/block/md*") and not any(_partitions(d) for d in _disks()):
            break
    for disk in _disks():  # a test's scheduler fix stays with the disk: back to the kernel's
        # default for a multi-queue NVMe device ("none"), where the disk offers it
        path = f"/sys/block/{disk}/queue/scheduler"
        try:
            with open(path) as f:
                now = f.read()
            if "[none]" not in now and "none" in now.split():
                with open(path, "w") as w:
                    w.write("none")
                log.append(f"{disk}: scheduler back to none")
        except OSError as e:
            log.append(f"{disk}: scheduler not reset: {e}")
    remaining = _names("/sys/block/md*") + [p for d in _disks() for p in _partitions(d)]
    if remaining:
        raise RuntimeError(f"reset left {remaining}:\n" + "\n".join(log[-60:]))
    return {
        "stopped": sorted(set(stopped)),
        "disks": _disks(),
        "seconds": time.monotonic() - t0,
        "log": log,
    }
