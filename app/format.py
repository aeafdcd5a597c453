"""Pure text formatting shared by the TUI and the text report (no Textual, no Rich)."""

from __future__ import annotations

from app.model import levels
from app.model.devices import SECTOR, MdArray, MdMember, SyncStatus
from app.model.sizes import human_bytes as human_bytes  # the one formatter (app.model.sizes)

# Semantic state names -> the colour every view uses (Rich colour names).
STATE_COLOURS: dict[str, str] = {
    "ok": "green",
    "error": "red",
    "warning": "yellow",
    "spare": "blue",
    "muted": "bright_black",
}


def exact_bytes(n: int | None) -> str:
    """Bytes with thousands separators: "500,107,862,016 B"."""
    return "?" if n is None else f"{n:,} B"


def size_both(n: int | None) -> str:
    """ "465.8 GiB (500,107,862,016 B)"."""
    if n is None:
        return "?"
    return f"{human_bytes(n)} ({exact_bytes(n)})"


def short_size(n: int | None) -> str:
    """Compact size for tree labels: "32K", "512K", "1M", "465.8G"."""
    if n is None:
        return "?"
    for unit, div in (("T", 1024**4), ("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if n >= div:
            q = n / div
            return f"{q:.0f}{unit}" if q == int(q) else f"{q:.1f}{unit}"
    return f"{n}B"


def duration(seconds: float | None) -> str:
    """ "2h 05m", "20m 06s", "45s"; "?" if unknown."""
    if seconds is None:
        return "?"
    s = round(seconds)
    if s >= 86400:
        return f"{s // 86400}d {(s % 86400) // 3600:02d}h"
    if s >= 3600:
        return f"{s // 3600}h {(s % 3600) // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s}s"


def speed(kib_s: int | float | None) -> str:
    """A KiB/s figure as the admin reads it: "661.1 MiB/s"."""
    if kib_s is None:
        return "?"
    return f"{human_bytes(int(kib_s * 1024))}/s"


def middle_ellipsis(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells, its middle replaced by "…" (both ends of a UUID
    stay recognisable): "6f1c2a3b…e202d2a2"."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    keep = width - 1
    head = (keep + 1) // 2
    tail = keep - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


def percent(fraction: float | None) -> str:
    return "?" if fraction is None else f"{fraction * 100:.1f}%"


def sectors(n: int | None) -> str:
    """ "2048 sectors (1.0 MiB)"."""
    if n is None:
        return "?"
    return f"{n:,} sectors ({human_bytes(n * SECTOR)})"


def member_colour(member: MdMember) -> str:
    """in_sync green, faulty red, spare blue, rebuilding yellow, anything else muted."""
    role = member.role
    if role == "in_sync":
        return STATE_COLOURS["ok"]
    if role == "faulty":
        return STATE_COLOURS["error"]
    if role in ("spare",):
        return STATE_COLOURS["spare"]
    if role in ("rebuilding", "replacement"):
        return STATE_COLOURS["warning"]
    if role == "journal":
        return "cyan"
    return STATE_COLOURS["muted"]


def member_marks(member: MdMember) -> str:
    """Extra flags worth showing next to a member: "(W)" write-mostly, "(J)", "(R)", "(F)"."""
    marks = []
    if member.write_mostly:
        marks.append("W")
    if "journal" in member.state:
        marks.append("J")
    if "replacement" in member.state:
        marks.append("R")
    if "faulty" in member.state:
        marks.append("F")
    if member.role == "spare":
        marks.append("S")
    return "".join(f"({m})" for m in marks)


def array_state_colour(array: MdArray) -> str:
    if array.array_state in ("inactive", "broken", "clear") or (
        array.members and all(m.role == "faulty" for m in array.members)
    ):
        return STATE_COLOURS["error"]
    if array.is_degraded:
        return STATE_COLOURS["error"]
    if array.sync is not None and array.sync.active:
        return STATE_COLOURS["warning"]
    return STATE_COLOURS["ok"]


def mdstat_map(array: MdArray) -> str:
    """The [UUUU] / [_UUU] map of /proc/mdstat, from the member slots; "" for containers."""
    if array.is_container or not array.raid_disks:
        return ""
    if array.raid_disks > levels.MAX_RAID_DISKS:  # not md's (the parsers refuse it): no map
        return f"[{array.raid_disks} slots?]"
    slots = ["_"] * array.raid_disks
    for m in array.members:
        if m.slot is not None and 0 <= m.slot < array.raid_disks and m.role == "in_sync":
            slots[m.slot] = "U"
    return "[" + "".join(slots) + "]"


def sync_summary(sync: SyncStatus | None, waits: tuple[str, ...] = ()) -> str:
    """ "resync 16.3%", "recover 40.0% · 661.1 MiB/s · ETA 20m 06s", "" when idle; a sync md
    holds back: "recover waits for md127" (``waits``: the arrays it waits for, when known),
    "resync pending"."""
    if sync is None or not sync.active:
        return ""
    if sync.action == "delayed":
        what = sync.queued or "sync"
        return f"{what} waits for {', '.join(waits)}" if waits else f"{what} waits its turn"
    if sync.action == "pending":
        return f"{sync.queued or 'resync'} pending"
    parts = [sync.action]
    if sync.fraction is not None:
        parts[0] += f" {percent(sync.fraction)}"
    return " · ".join(parts)


def array_summary(array: MdArray, waits: tuple[str, ...] = ()) -> str:
    """One line for a tree label, what matters first (a narrow pane cuts the end):
    "raid10 [UUUU] · resync 16.3% · n2 · 32K"; ``waits``: see :func:`sync_summary`."""
    parts = [array.level]
    smap = mdstat_map(array)
    if smap:
        parts[0] += f" {smap}"
    if array.is_degraded:
        parts.append(f"DEGRADED({array.degraded})")
    s = sync_summary(array.sync, waits)
    if s:
        parts.append(s)
    elif array.is_container:
        # md says "inactive" of every IMSM/DDF container (it holds metadata, no data of its
        # own; its volumes are the arrays): the metadata says what it is
        parts.append(array.metadata or "external")
    elif array.array_state and array.array_state not in ("clean", "active"):
        parts.append(array.array_state)
    if array.layout and array.level in levels.STRIPED - {"raid0"}:
        parts.append(array.layout)
    if array.chunk_bytes:
        parts.append(short_size(array.chunk_bytes))
    return " · ".join(parts)
