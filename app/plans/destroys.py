"""Whether a step destroys data, and what a destructive plan's user types to confirm: both read
from the argv, never from a flag a plan (file) carries.

``destroys(argv)`` names what the command overwrites (None when it overwrites nothing):
  * ``mdadm --create MD ... DEVS``: a new superblock on every member; the array's initial sync
    writes over whatever the members held;
  * ``mdadm MD --add|--add-spare DEV``: a new superblock on DEV; a recovery onto it overwrites it;
  * ``mdadm ... --zero-superblock DEV`` / ``wipefs`` (any option but ``--no-act``): erase
    signatures (retiring an array or a member: app.plans.wizards.lifecycle);
  * ``mkfs.*`` and ``pvcreate``: a new filesystem / LVM label over the device's content;
  * ``parted ... DEV mklabel``: a new partition table over the disk (a member being prepared).

``confirm_target(steps)`` is the device the first destroying step overwrites: the array being
created (``/dev/md/127`` → ``127``, ``/dev/md127`` → ``md127``), the device being added, the
device a filesystem or PV is made on. The executor, ``apply`` and the TUI all use it through
``Plan`` (``Plan.__post_init__``), whoever built the plan.

This module knows the argv shapes the allowlist (app.plans.allowlist) accepts; it imports
nothing from app.plans so that ``Plan`` itself can use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

_ADD = ("--add", "--add-spare")


def destroys(argv: Sequence[str]) -> str | None:
    """What ``argv`` overwrites ("/dev/sdb", "/dev/md/127"), or None when it destroys nothing."""
    if not argv:
        return None
    prog = argv[0].rsplit("/", 1)[-1]
    a = tuple(argv[1:])
    if prog == "mdadm":
        if "--zero-superblock" in a:
            devs = [x for x in a if x.startswith("/dev/")]
            return devs[0] if devs else "a device"
        if len(a) >= 2 and a[0] == "--create":
            return a[1]
        if len(a) >= 3 and a[1] in _ADD:
            return a[2]
        return None
    if prog == "wipefs":
        if "--no-act" in a or "-n" in a:
            return None
        devs = [x for x in a if not x.startswith("-")]
        return devs[-1] if devs else "a device"
    if prog == "parted":  # a new partition table over the whole disk
        devs = [x for x in a if x.startswith("/dev/")]
        return devs[0] if devs else "a device"
    if prog.startswith("mkfs") or prog == "pvcreate":
        return a[-1] if a else "a device"
    return None


def confirm_name(path: str) -> str:
    """What the user types for ``path``: ``/dev/md/127`` → ``127``, ``/dev/sdb`` → ``sdb``,
    ``/dev/vg0/data`` → ``vg0/data``."""
    if path.startswith("/dev/md/"):
        return path[len("/dev/md/") :]
    return path.removeprefix("/dev/")


def confirm_target(argvs: Iterable[Sequence[str]]) -> str | None:
    """The name typed to confirm: what the first destroying step overwrites (None: none does);
    the array, when an earlier step stopped it (deleting an array erases its members one by one,
    and what the user means to destroy is the array)."""
    stopped: str | None = None
    for argv in argvs:
        if len(argv) == 3 and argv[0] == "mdadm" and argv[1] == "--stop":
            stopped = argv[2]
        hit = destroys(argv)
        if hit is not None:
            return confirm_name(stopped if stopped is not None else hit)
    return None
