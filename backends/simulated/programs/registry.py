"""The simulated programs by name: ``run(argv)`` finds the handler here.

Adding a program is one module in this package and one line in ``HANDLERS``.
"""

from __future__ import annotations

from collections.abc import Sequence

from backends.simulated.programs import (
    blkid,
    disk_tools,
    files,
    fio,
    fs,
    kernel_log,
    lifecycle,
    lvm,
    lvm_raid,
    mdadm,
    smartctl_tests,
    system,
    wipefs,
)
from backends.simulated.programs.argv import Handler, Result
from backends.simulated.state import SimState

HANDLERS: dict[str, Handler] = {
    "mdadm": mdadm.mdadm,
    "wipefs": wipefs.wipefs,
    "pvcreate": lvm.pvcreate,
    "vgcreate": lvm.vgcreate,
    "lvcreate": lvm.lvcreate,
    "lvm": lvm.lvm_config,
    "lvchange": lvm_raid.lvchange,
    "dmsetup": lvm_raid.dmsetup,
    "mkfs.ext4": fs.mkfs_ext4,
    "mkfs.xfs": fs.mkfs_xfs,
    "tune2fs": fs.tune2fs,
    "xfs_info": fs.xfs_info,
    "tee": system.tee,
    "sysctl": system.sysctl,
    "smartctl": smartctl_tests.smartctl,  # -t and the logs; the table in system.smartctl
    "journalctl": kernel_log.journalctl,
    "dmesg": kernel_log.dmesg,
    "mount": lifecycle.mount,  # with -o OPTS
    "parted": lifecycle.parted,
    "mkdir": lifecycle.mkdir,
    "cp": lifecycle.cp,
    "findmnt": lifecycle.findmnt,
    "stat": lifecycle.stat,  # mount-point pre-flight (app.plans.guards.mountpoints)
    "umount": system.umount,
    "systemctl": system.systemctl,
    "cat": system.cat,
    "blkid": blkid.blkid,
    "update-initramfs": system.noop(
        "update-initramfs: Generating /boot/initrd.img-6.1.0-18-amd64\n"
    ),
    "udevadm": system.noop(),
    "partprobe": system.noop(),
    "sync": system.noop(),
    **files.HANDLERS,  # mv, rm (under /etc)
    **fio.HANDLERS,  # fio, blkdiscard
    **disk_tools.HANDLERS,  # ls, readlink, ledctl, hdparm, nvme, sg_sanitize, sg_requests
}


def dispatch(st: SimState, argv: Sequence[str], stdin: str | None) -> Result:
    if not argv:
        return 127, "", "demo: empty command\n"
    prog = argv[0].rsplit("/", 1)[-1]
    handler = HANDLERS.get(prog)
    if handler is None:
        return 127, "", f"demo: {argv[0]}: command not found (not simulated)\n"
    return handler(st, list(argv[1:]), stdin)
