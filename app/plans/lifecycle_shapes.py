"""The argv shapes of an array's life outside md's own management: partitioning a new member,
stopping, assembling and retiring an array, wiping a member, mounting a filesystem and writing
its /etc/fstab line. ``app.plans.allowlist`` asks ``lifecycle_problem`` for these programs; the
builders (app.plans.wizards.lifecycle) emit exactly these shapes.

* ``parted --script --align optimal DEV mklabel gpt mkpart raid 1MiB END set 1 raid on``: a GPT
  with one partition starting at 1 MiB (aligned for every sector size and erase block raidman
  meets), of type Linux RAID, ending at ``100%`` or a smaller share (over-provisioning);
* ``mdadm --stop MD``, ``mdadm --assemble --scan``, ``mdadm --assemble MD --uuid=UUID``,
  ``mdadm --zero-superblock DEV``, ``wipefs -a DEV``;
* ``mkdir -p DIR`` and ``mount -o OPTS DEV DIR`` (DIR outside the system's own trees);
* /etc/fstab, written atomically with a backup: ``cp -p /etc/fstab NEW``, ``tee -a NEW`` with one
  line (by ``UUID=``, with ``nofail``), ``findmnt --verify --tab-file NEW``, ``cp -p /etc/fstab
  BACKUP``, ``mv NEW /etc/fstab`` (a rename: readers see the old file or the new, never half).
"""

from __future__ import annotations

import re

from app.plans.shapes import SYSTEM_TREES

FSTAB = "/etc/fstab"
FSTAB_NEW = "/etc/fstab.raidman-new"
FSTAB_BACKUP = "/etc/fstab.raidman-backup"
MOUNT_OPTIONS = frozenset({"defaults", "nofail", "noatime", "relatime", "discard"})
FSTYPES = ("ext4", "xfs")
LEAVE_FREE_MAX = 50  # percent: more is not over-provisioning, it is a smaller disk

_NAME = r"[A-Za-z0-9][A-Za-z0-9._+:-]*"
DEV = re.compile(rf"/dev/{_NAME}")
MD_DEV = re.compile(r"/dev/md[0-9]+|/dev/md/[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}")
UUID = re.compile(r"[0-9a-fA-F]{8}(?::[0-9a-fA-F]{8}){3}")
FS_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_COMPONENT = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9._+-]{0,254}")
_END = re.compile(r"([0-9]{1,3})%")


def mountpoint_problem(path: str) -> str | None:
    """None when raidman may create and mount on ``path``: absolute, plain names, not "/" nor
    inside the system's own trees (/etc, /usr, /boot, ...)."""
    parts = path.split("/")
    if not path.startswith("/") or len(parts) < 2 or path == "/" or path.endswith("/"):
        return f"{path!r}: an absolute directory, not /"
    if not all(_COMPONENT.fullmatch(p) for p in parts[1:]) or len(path) > 1024:
        return f"{path!r}: plain names only (no '.', '..', spaces, hidden or empty parts)"
    for tree in SYSTEM_TREES:
        if path == tree or path.startswith(tree + "/"):
            return f"{path!r}: not {tree} (a system directory)"
    return None


def options_problem(opts: str) -> str | None:
    words = opts.split(",")
    if not opts or any(w not in MOUNT_OPTIONS for w in words) or len(set(words)) != len(words):
        return f"mount options {opts!r}: only {', '.join(sorted(MOUNT_OPTIONS))}"
    return None


def fstab_line_problem(line: str) -> str | None:
    """None when ``line`` is one fstab line raidman writes: ``UUID=<fs uuid> DIR FSTYPE OPTS 0
    2`` with ``nofail`` among the options."""
    f = line.split(" ")
    if len(f) != 6 or not f[0].startswith("UUID=") or not FS_UUID.fullmatch(f[0][5:]):
        return "an fstab line names the filesystem by UUID= first (6 fields, one space apart)"
    bad = mountpoint_problem(f[1]) or options_problem(f[3])
    if bad is not None:
        return bad
    if f[2] not in FSTYPES or "nofail" not in f[3].split(",") or f[4:] != ["0", "2"]:
        return "an fstab line raidman writes is ext4/xfs, with nofail, dump 0, pass 2"
    return None


def _parted(a: tuple[str, ...]) -> str | None:
    head = ("--script", "--align", "optimal")
    tail = ("mklabel", "gpt", "mkpart", "raid", "1MiB")
    if len(a) != 14 or a[:3] != head or not DEV.fullmatch(a[3]) or a[4:9] != tail:
        return "parted: raidman only writes a GPT with one Linux RAID partition from 1MiB"
    m = _END.fullmatch(a[9])
    if m is None or not 100 - LEAVE_FREE_MAX <= int(m.group(1)) <= 100:
        return f"parted: the partition ends at {100 - LEAVE_FREE_MAX}%..100% of the disk"
    if a[10:] != ("set", "1", "raid", "on"):
        return "parted: the partition's type is Linux RAID (set 1 raid on)"
    return None


def mdadm_problem(a: tuple[str, ...]) -> str | None:
    """None for the lifecycle's mdadm shapes; a reason for other lifecycle-looking ones; the
    caller's own reason when ``a`` is none of these (returns "" then)."""
    if a == ("--assemble", "--scan"):
        return None
    if len(a) == 2 and a[0] == "--stop":
        return None if MD_DEV.fullmatch(a[1]) else f"mdadm --stop: {a[1]!r} is not an md device"
    if len(a) == 3 and a[0] == "--assemble":
        if MD_DEV.fullmatch(a[1]) and a[2].startswith("--uuid=") and UUID.fullmatch(a[2][7:]):
            return None
        return "mdadm --assemble: MD --uuid=8:8:8:8 hex, or --scan"
    if len(a) == 2 and a[0] == "--zero-superblock":
        return None if DEV.fullmatch(a[1]) else "mdadm --zero-superblock: one device path"
    return ""


def lifecycle_problem(argv: tuple[str, ...], stdin: str | None) -> str | None:
    """Why ``argv`` (parted, wipefs, mkdir, mount, cp, mv, findmnt, or tee to the new fstab) is
    not one raidman plans; None when it is."""
    prog, a = argv[0], argv[1:]
    if prog == "parted":
        return _parted(a)
    if prog == "wipefs":
        if len(a) == 2 and a[0] == "-a" and DEV.fullmatch(a[1]):
            return None
        return "wipefs: raidman only erases every signature of one device (-a DEV)"
    if prog == "mkdir":
        if len(a) == 2 and a[0] == "-p":
            return mountpoint_problem(a[1])
        return "mkdir: raidman only makes a mount point (-p DIR)"
    if prog == "mount":
        if len(a) == 4 and a[0] == "-o" and (DEV.fullmatch(a[2]) or MD_DEV.fullmatch(a[2])):
            return options_problem(a[1]) or mountpoint_problem(a[3])
        return "mount: raidman only mounts one device (-o OPTS DEV DIR)"
    if prog == "cp":
        if a in (("-p", FSTAB, FSTAB_NEW), ("-p", FSTAB, FSTAB_BACKUP)):
            return None
        return f"cp: raidman only copies {FSTAB} to {FSTAB_NEW} or {FSTAB_BACKUP}"
    if prog == "mv":
        return (
            None if a == (FSTAB_NEW, FSTAB) else f"mv: raidman only moves {FSTAB_NEW} over {FSTAB}"
        )
    if prog == "findmnt":
        if a == ("--verify", "--tab-file", FSTAB_NEW):
            return None
        return f"findmnt: raidman only verifies {FSTAB_NEW}"
    if prog == "tee" and a == ("-a", FSTAB_NEW):
        text = stdin or ""
        lines = text.splitlines()
        if len(lines) != 1 or text != lines[0] + "\n":
            return "fstab: one line is appended"
        return fstab_line_problem(lines[0])
    return f"{prog}: not the command raidman plans"


PROGRAMS = ("parted", "wipefs", "mkdir", "mount", "cp", "mv", "findmnt")
