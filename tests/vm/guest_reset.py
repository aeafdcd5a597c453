"""Runs INSIDE the guest: bring every test disk back to blank (``vm.reset_disks()``)."""

from __future__ import annotations

import glob
import os
import subprocess
import time
from typing import Any

DISK_GLOBS = ("/sys/block/nvme*n*", "/sys/block/vd*")
MOUNT_PREFIXES = ("/dev/md", "/dev/mapper/", "/dev/dm-", "/dev/nvme", "/dev/vd")


def _run(argv: list[str], log: list[str]) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    log.append(f"{' '.join(argv)} -> {p.returncode}")
    return p


def _lines(argv: list[str], log: list[str]) -> list[str]:
    return [x.strip() for x in _run(argv, log).stdout.splitlines() if x.strip()]


def _arrays() -> list[str]:
    return sorted(os.path.basename(p) for p in glob.glob("/sys/block/md*"))


def _disks() -> list[str]:
    out: list[str] = []
    for g in DISK_GLOBS:
        out += sorted(os.path.basename(p) for p in glob.glob(g))
    return out


def _partitions(disk: str) -> list[str]:
    return sorted(os.path.basename(p) for p in glob.glob(f"/sys/block/{disk}/{disk}*"))


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
    _run(["swapoff", "-a"], log)
    for vg in _lines(["vgs", "--noheadings", "-o", "vg_name"], log):
        _run(["vgchange", "-an", vg], log)
        _run(["vgremove", "-ff", "-y", vg], log)
    for pv in _lines(["pvs", "--noheadings", "-o", "pv_name"], log):
        _run(["pvremove", "-ff", "-y", pv], log)
    _run(["dmsetup", "remove_all", "-f"], log)
    stopped: list[str] = []
    for _ in range(4):  # stacked arrays, and udev re-assembling what was just stopped
        for md in _arrays():
            _run(["mdadm", "--stop", f"/dev/{md}"], log)
            stopped.append(md)
        for disk in _disks():
            for dev in [*_partitions(disk), disk]:
                _run(["mdadm", "--zero-superblock", "--force", f"/dev/{dev}"], log)
                _run(["wipefs", "-a", "-q", f"/dev/{dev}"], log)
            _run(
                ["dd", "if=/dev/zero", f"of=/dev/{disk}", "bs=1M", "count=4", "oflag=direct"],
                log,
            )
            _run(["blockdev", "--rereadpt", f"/dev/{disk}"], log)
        _run(["udevadm", "settle", "--timeout=30"], log)
        if not _arrays() and not any(_partitions(d) for d in _disks()):
            break
    remaining = _arrays() + [p for d in _disks() for p in _partitions(d)]
    if remaining:
        raise RuntimeError(f"reset left {remaining}:\n" + "\n".join(log[-60:]))
    return {"stopped": sorted(set(stopped)), "disks": _disks(), "seconds": time.monotonic() - t0}
