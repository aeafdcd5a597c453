"""The /etc/fstab line raidman writes for a filesystem it mounts: ``UUID=<fs uuid> DIR FSTYPE
OPTS 0 2``, by UUID (md names can change across reboots), with ``nofail`` (a missing array does
not stop the boot). The mount point and options are the mount operation's
(``app.plans.ops.storage``); the whole-file edit that adds the line is ``app.plans.builders.file_edit``'s.
"""

from __future__ import annotations

import re

from app.plans.ops.storage import mountpoint_problem, options_problem

FSTYPES = ("ext4", "xfs")
FS_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


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
