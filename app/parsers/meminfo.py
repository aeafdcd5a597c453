"""``/proc/meminfo`` (fs/proc/meminfo.c, ``meminfo_proc_show``): one ``Name:  value kB`` a line.
Only ``MemAvailable`` is read (what can be allocated without swapping, mm's own estimate)."""

from __future__ import annotations

from app.parsers.safe import ascii_int

MAX_LINES = 200  # the kernel prints ~55; more is not a meminfo


def mem_available_bytes(text: str | None) -> int | None:
    """MemAvailable in bytes; None when absent or not a plain "<digits> kB" value."""
    if not text:
        return None
    for line in text.splitlines()[:MAX_LINES]:
        name, sep, rest = line.partition(":")
        if sep and name == "MemAvailable":
            parts = rest.split()
            if len(parts) != 2 or parts[1] != "kB":
                return None
            kib = ascii_int(parts[0])
            return None if kib is None else kib * 1024
    return None
