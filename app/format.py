"""Pure text formatting shared by the TUI and the text report (no Textual, no Rich)."""

from __future__ import annotations

from app.model import levels
from app.model.devices import SECTOR, MdArray, MdMember, SyncStatus
from app.model.drive_ratings import ure_words
from app.model.risk import RebuildRisk
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
    """ "2h 05m", "20m 06s", "45s", "0.2s" (under ten seconds to the tenth: a step that took
    0.2 s is not "0s" in one place and "0.2 s" in another); "?" if unknown."""
    if seconds is None:
        return "?"
    if seconds < 9.95:
        return f"{max(0.0, seconds):.1f}".removesuffix(".0") + "s"
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


def sync_summary(
    sync: SyncStatus | None, waits: tuple[str, ...] = (), *, rate: bool = False
) -> str:
    """ "resync 16.3%"; with ``rate`` "recover 40.0% · 661.1 MiB/s · ETA 20m 06s" (the
    banner's speed and ETA, from the same figures); "" when idle; a sync md holds back:
    "recover waits for md127" (``waits``: the arrays it waits for, when known), "resync
    pending"."""
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
    if rate and sync.speed_kib_s:
        parts.append(speed(sync.speed_kib_s))
    if rate and sync.eta_s is not None:
        parts.append(f"ETA {duration(sync.eta_s)}")
    return " · ".join(parts)


def array_summary(array: MdArray, waits: tuple[str, ...] = (), *, rate: bool = False) -> str:
    """One line for a tree label, what matters first (a narrow pane drops the end part by
    part): "raid10 [UUUU] · resync 16.3% · 661.1 MiB/s · ETA 20m 06s · n2 · 32K" (``rate``:
    the sync's speed and ETA; ``waits``: see :func:`sync_summary`)."""
    parts = [array.level]
    smap = mdstat_map(array)
    if smap:
        parts[0] += f" {smap}"
    if array.is_degraded:
        parts.append(f"DEGRADED({array.degraded})")
    s = sync_summary(array.sync, waits, rate=rate)
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


# ---- an array's rebuild risk (app.model.risk), every term shown ------------------------------


def expected_count(x: float | None) -> str:
    """An expected count: "0.29", "0.0031", "2.4"; "unknown"."""
    if x is None:
        return "unknown"
    return f"{x:.2f}" if x >= 0.01 or x == 0 else f"{x:.1e}"


def _risk_scenario(r: RebuildRisk) -> str:
    if r.scenario == "running":
        return f"the recovery onto {', '.join(r.rebuilt)}, {percent(r.done_fraction)} done"
    if r.scenario == "planned":
        return f"the rebuild this plan starts onto {', '.join(r.rebuilt)}"
    if r.scenario == "after-a-disk-is-added":
        return f"the recovery of {', '.join(r.rebuilt)} once a disk is added"
    return f"if {', '.join(r.rebuilt)} fails"


def risk_line(r: RebuildRisk) -> str:
    """One line, every term: "md0 rebuild risk (the recovery onto sdf1, 8.2% done): 4 survivors
    still read 3.3 TiB × 8 bits × 1 per 10^14 bits (WD Red datasheet) = 0.29 unreadable sectors
    expected; corrects one meanwhile: yes (RAID-6 with 1 failed survives 1 further failure);
    window 9h 57m (md's ETA at its current speed)"."""
    readers = [s for s in r.survivors if s.read_bytes]
    still = "still read" if r.scenario == "running" else "read"
    who = f"{len(readers)} survivor{'s' if len(readers) != 1 else ''}"
    rate = r.ure_per_bit
    if rate is not None:
        fam = {s.family for s in readers}
        src = f" ({fam.pop()} datasheet)" if len(fam) == 1 else ""
        rate_text = f"{ure_words(rate).split(': ')[-1]}{src}"
    elif r.unknown_rates:
        rate_text = (
            f"rate unknown for {', '.join(r.unknown_rates)} (model not in the datasheet table)"
        )
    else:
        rate_text = "each survivor's own datasheet rate"
    failed = r.level.replace("raid", "RAID-")
    if r.corrects_one:
        corrects = (
            f"yes ({failed} survives {r.failures_left} further "
            f"failure{'s' if r.failures_left != 1 else ''} while it rebuilds)"
        )
    else:
        what = "block" if r.level in ("raid1", "raid10") else "stripe"
        corrects = f"no ({failed} has no redundancy left while it rebuilds: that {what} is lost)"
    expected = r.ure_expected
    count = (
        "unknown" if expected is None else f"{expected_count(expected)} unreadable sectors expected"
    )
    return (
        f"{r.array} rebuild risk ({_risk_scenario(r)}): {who} {still} "
        f"{human_bytes(r.read_bytes)} × 8 bits × {rate_text} = {count}; corrects one "
        f"meanwhile: {corrects}; window {duration(r.window_s)} ({r.window_why})"
    )


def risk_member_lines(r: RebuildRisk, *, counted_only: bool = False) -> list[str]:
    """Each member's SMART evidence: "sdb1 (faulty, 21013 h): 5 Reallocated_Sector_Ct 1816 in
    (1100, 4500]: 150.3 %/yr (126.8–176.8)", and where the rates come from. ``counted_only``:
    the members with a non-zero count only (the Details pane)."""
    out: list[str] = []
    sources: set[int] = set()
    for m in r.members:
        if counted_only and not any(e.value for e in m.evidence):
            continue
        hours = f", {m.power_on_hours} h" if m.power_on_hours is not None else ""
        head = f"{m.device} ({m.role}{hours})"
        if not m.smart_read:
            out.append(f"{head}: SMART not read")
            continue
        if m.note:
            out.append(f"{head}: {m.note}")
            continue
        if not m.evidence:
            out.append(f"{head}: none of attributes 5, 187, 188, 197, 198, 199 reported")
            continue
        parts = [
            f"{e.attribute} {e.name} {e.value} ({e.bin_text}): {e.afr_text}" for e in m.evidence
        ]
        sources.update(e.attribute for e in m.evidence)
        fails = m.failures_in(r.window_s)
        tail = (
            f" — at its worst bin's rate, {expected_count(fails)} failures expected in the window"
            if fails is not None
            else ""
        )
        out.append(f"{head}: {'; '.join(parts)}{tail}")
    if sources:
        out.append(
            "annual failure rates (failures per drive-year): Backblaze drive stats as Scrutiny "
            "bins them (ata_attribute_metadata.go, ObservedThresholds)"
        )
    return out
