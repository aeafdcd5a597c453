"""``/proc/swaps`` (mm/swapfile.c, ``swap_show``)::

    Filename                                Type            Size            Used            Priority
    /dev/sda3                               partition       8388604         0               -2
    /swap\\040file                          file            1048572         0               -3

The file name is escaped like mountinfo's (space, tab, newline, backslash as octal); Size and
Used are KiB.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.parsers.errors import ParseError
from app.parsers.mountinfo import unescape
from app.parsers.safe import ascii_int

SOURCE = "swaps"


@dataclass(frozen=True, slots=True)
class SwapEntry:
    filename: str
    type: str  # "partition" or "file"
    size_kib: int | None
    used_kib: int | None


def _int(s: str) -> int | None:
    """A size in KiB, or None when the field is not one (a 5,000-digit number, "²"): the
    sizes are only shown, so an unreadable one costs that field, not the file."""
    return ascii_int(s)


def parse_swaps(text: str) -> tuple[SwapEntry, ...]:
    lines = text.splitlines()
    if not lines or not lines[0].startswith("Filename"):
        raise ParseError(SOURCE, "no 'Filename' header", 1)
    out = []
    for i, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) < 2:
            raise ParseError(SOURCE, f"too few fields in {line!r}", i)
        out.append(
            SwapEntry(
                filename=unescape(fields[0]),
                type=fields[1],
                size_kib=_int(fields[2]) if len(fields) > 2 else None,
                used_kib=_int(fields[3]) if len(fields) > 3 else None,
            )
        )
    return tuple(out)
