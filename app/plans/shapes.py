"""Values raidman plans, in one place for the planner (wizards, boost) and the allowlist: what the
planner refuses to build, the allowlist refuses to run, and the other way round.

* ``SPEED_LIMIT_RANGE``: ``dev.raid.speed_limit_min/max`` and an array's ``sync_speed_min/max``
  in KiB/s per device. The sysctls are C ints (drivers/md/md.c ``raid_table``: ``maxlen =
  sizeof(int)``, ``proc_dointvec``), so at most 2^31 - 1; 0 would stop a resync's floor
  (min) or the resync itself (max), and the planner never writes it.
* ``MDADM_CONF``: the files an ARRAY line is appended to.
* ``array_line_problem``: an ARRAY line in the shape ``mdadm --detail --brief/--scan`` prints
  (``ARRAY /dev/md/NAME metadata=1.2 name=host:NAME UUID=8:8:8:8 hex``), nothing else.
* ``created_file_problem``: a file mdadm creates as root (``--bitmap=FILE``, ``--backup-file=``):
  an absolute, plain path outside the system's own trees (mdadm creates it if it is missing, so
  ``/etc/ld.so.preload`` would be a new file every program reads).
"""

from __future__ import annotations

import re

INT_MAX = 2**31 - 1
SPEED_LIMIT_RANGE = (1, INT_MAX)
MDADM_CONF = ("/etc/mdadm/mdadm.conf", "/etc/mdadm.conf")

_UUID = r"[0-9a-fA-F]{8}(?::[0-9a-fA-F]{8}){3}"
_ARRAY_DEV = r"/dev/md(?:[0-9]{1,4}|/[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63})"
_ARRAY_WORD = re.compile(
    rf"UUID={_UUID}|metadata=[0-9a-z.]{{1,8}}|name=[A-Za-z0-9_.:-]{{1,64}}|spares=[0-9]{{1,3}}"
    rf"|container={_ARRAY_DEV}|member=[0-9]{{1,3}}"
)
# where a file mdadm creates must not go: the system's programs, configuration and pseudo files
SYSTEM_TREES = (
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/proc",
    "/run",
    "/sbin",
    "/sys",
    "/usr",
    "/var/lib",
    "/var/log",
    "/var/run",
    "/var/spool",
)
_COMPONENT = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9._+-]{0,254}")


def speed_limit_ok(value: str) -> bool:
    """``value`` is a speed limit raidman writes (decimal KiB/s in ``SPEED_LIMIT_RANGE``)."""
    lo, hi = SPEED_LIMIT_RANGE
    return value.isascii() and value.isdigit() and len(value) <= 10 and lo <= int(value) <= hi


def array_line_problem(line: str) -> str | None:
    """None when ``line`` is one ARRAY line as mdadm prints it, else why not."""
    words = line.split(" ")
    if len(words) < 3 or words[0] != "ARRAY" or not re.fullmatch(_ARRAY_DEV, words[1]):
        return "an ARRAY line names an md device (/dev/mdN or /dev/md/NAME) first"
    keys = [w.split("=", 1)[0] for w in words[2:]]
    if any(not _ARRAY_WORD.fullmatch(w) for w in words[2:]) or len(set(keys)) != len(keys):
        return "an ARRAY line has only metadata=, name=, spares=, container=, member=, UUID="
    if "UUID" not in keys:
        return "an ARRAY line needs the array's UUID (8:8:8:8 hex digits)"
    return None


def created_file_problem(path: str) -> str | None:
    """None when mdadm may create ``path`` (a bitmap or backup file), else why not."""
    parts = path.split("/")
    if not path.startswith("/") or len(parts) < 3:
        return f"{path!r}: an absolute path in a directory (not /)"
    if not all(_COMPONENT.fullmatch(p) for p in parts[1:]):
        return f"{path!r}: plain names only (no '.', '..', hidden or empty parts)"
    for tree in SYSTEM_TREES:
        if path.startswith(tree + "/"):
            return f"{path!r}: not under {tree} (a system directory)"
    return None
