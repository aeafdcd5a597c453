"""How ``raidman plan`` and ``raidman apply`` say no: one shape and one exit code for every
refusal, whatever refused (the plan's builder, pre-flight, the file's checks, the read-only
backend, a missing confirmation). Whatever the command printed on stdout comes first (the
plan, with its REFUSED lines); then, on stderr, one line per reason and "nothing was run".
Input that cannot be used at all (the command line, an unreadable plan file) stays exit 2."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from app.escape import escape_controls

REFUSED = 3  # the exit code of every refusal: nothing was run


def refuse(command: str, reasons: Iterable[str]) -> int:
    """Say why ``raidman COMMAND`` ran nothing; returns ``REFUSED``."""
    for why in reasons:
        print(f"raidman {command}: refused: {escape_controls(why)}", file=sys.stderr)
    print(f"raidman {command}: nothing was run", file=sys.stderr)
    return REFUSED
