"""``/proc/self/mountinfo`` (Documentation/filesystems/proc.rst, "3.5 /proc/<pid>/mountinfo")::

    36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
    (1)(2)(3)   (4)   (5)      (6)      (7)   (8) (9)   (10)         (11)

Fields 4, 5 and 10 escape space, tab, newline and backslash as octal (``\\040`` ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.parsers.errors import ParseError
from app.parsers.safe import ascii_int, only_parse_errors

SOURCE = "mountinfo"

_OCTAL = re.compile(r"\\([0-7]{3})")


def unescape(s: str) -> str:
    """Undo the kernel's octal escapes (``\\040`` -> space)."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), s)


@dataclass(frozen=True, slots=True)
class MountEntry:
    mount_id: int
    parent_id: int
    major: int
    minor: int
    root: str
    mountpoint: str
    options: tuple[str, ...]  # per-mount options: rw, noatime, ...
    optional: tuple[str, ...]  # shared:N, master:N, propagate_from:N, unbindable
    fstype: str
    source: str  # "/dev/sda1", "proc", "none", ...
    super_options: tuple[str, ...]

    @property
    def device(self) -> str:
        """``major:minor`` as lsblk and sysfs ``dev`` write it."""
        return f"{self.major}:{self.minor}"

    @property
    def read_only(self) -> bool:
        return "ro" in self.options


def _opts(s: str) -> tuple[str, ...]:
    return tuple(unescape(o) for o in s.split(",") if o)


# a mount point and a root are at most PATH_MAX (4096) each, escaped 4 bytes a byte; options
# are short: a line longer than this is not the kernel's (and is not quoted whole in a note)
MAX_LINE = 64 * 1024


def parse_mountinfo_line(line: str, lineno: int | None = None) -> MountEntry:
    if len(line) > MAX_LINE:
        raise ParseError(SOURCE, f"a line of {len(line)} characters is not the kernel's", lineno)
    fields = line.split(" ")
    try:
        sep = fields.index("-", 6)
    except ValueError:
        raise ParseError(SOURCE, f"no ' - ' separator in {line!r}", lineno) from None
    if len(fields) - sep - 1 < 2 or sep < 6:
        raise ParseError(SOURCE, f"too few fields in {line!r}", lineno)
    mount_id, parent_id = ascii_int(fields[0]), ascii_int(fields[1])
    if mount_id is None or parent_id is None:
        raise ParseError(SOURCE, f"mount ids are not numbers in {line!r}", lineno)
    majmin = fields[2]
    major_s, colon, minor_s = majmin.partition(":")
    major, minor = ascii_int(major_s), ascii_int(minor_s)
    if not colon or major is None or minor is None:
        raise ParseError(SOURCE, f"bad major:minor {majmin!r}", lineno)
    tail = fields[sep + 1 :]
    return MountEntry(
        mount_id=mount_id,
        parent_id=parent_id,
        major=major,
        minor=minor,
        root=unescape(fields[3]),
        mountpoint=unescape(fields[4]),
        options=_opts(fields[5]),
        optional=tuple(f for f in fields[6:sep] if f),
        fstype=unescape(tail[0]),
        source=unescape(tail[1]),
        super_options=_opts(tail[2]) if len(tail) > 2 else (),
    )


@only_parse_errors(SOURCE)
def parse_mountinfo(text: str) -> tuple[MountEntry, ...]:
    """Every mount, in the kernel's order (parents before children). Blank lines are skipped."""
    return tuple(
        parse_mountinfo_line(line, i) for i, line in enumerate(text.splitlines(), 1) if line.strip()
    )


def mountpoints_by_device(entries: tuple[MountEntry, ...]) -> dict[str, tuple[str, ...]]:
    """``"major:minor"`` -> mountpoints in mount order (each once)."""
    out: dict[str, list[str]] = {}
    for e in entries:
        mps = out.setdefault(e.device, [])
        if e.mountpoint not in mps:
            mps.append(e.mountpoint)
    return {k: tuple(v) for k, v in out.items()}
