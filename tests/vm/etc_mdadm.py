"""A writable /etc/mdadm in the guest that is the guest's own (the guest's / is this host's
filesystem, read-only): the fixture the tests that write mdadm.conf share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.vm.machine import VM


def guest_mount_of(vm: VM, path: str) -> tuple[str, str, str]:
    """(mount point, fstype, options) of the guest mount holding ``path``."""
    best = ("", "", "")
    for line in vm.read("/proc/mounts").splitlines():
        _src, mnt, fstype, opts, *_ = line.split()
        if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best[0]):
            best = (mnt, fstype, opts)
    return best


@pytest.fixture
def etc_mdadm(vm: VM) -> Iterator[str]:
    """A writable /etc/mdadm/mdadm.conf that is the guest's own, restored afterwards.

    The guest's / is this host's filesystem, read-only. virtme-ng puts a tmpfs-backed overlay
    on /etc, so /etc/mdadm is writable in the guest without reaching the host; if a harness
    ever boots without that overlay, a tmpfs over /etc/mdadm (holding a copy of the host's
    files) does the same. A writable /etc that is neither would be the host's: refused."""
    conf = "/etc/mdadm/mdadm.conf"
    mnt, fstype, opts = guest_mount_of(vm, "/etc/mdadm")
    vm.note(f"guest /etc/mdadm lives on {mnt} ({fstype}, {opts})")
    mounted = False
    if fstype not in ("overlay", "tmpfs"):
        if "rw" in opts.split(","):
            pytest.fail(f"/etc/mdadm is on a writable {fstype} at {mnt}: that is the host's")
        vm.sh(
            """
            rm -rf /tmp/raidman-etc-mdadm && mkdir -p /tmp/raidman-etc-mdadm
            cp -a /etc/mdadm/. /tmp/raidman-etc-mdadm/
            mount -t tmpfs -o size=1m,mode=755 raidman-etc-mdadm /etc/mdadm
            cp -a /tmp/raidman-etc-mdadm/. /etc/mdadm/
            """
        )
        mounted = True
    before = vm.try_read(conf)
    try:
        yield conf
    finally:
        if mounted:
            vm.run(["umount", "/etc/mdadm"])
        elif before is None:
            vm.run(["rm", "-f", conf])
        else:
            vm.write(conf, before)
