"""Pure pieces of the Wear pane: bytes written over time as a text plot with sync events marked,
how a write counter's unit reads, smartctl's exit status bits, and how big a sync's write was.

No Textual, no Rich: lists of strings and small frozen dataclasses, tested directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo

from app.format import STATE_COLOURS
from app.model.smart_units import WriteCounter
from app.wear.delta import MemberWear, SyncWear, array_wear
from app.wear.records import Snapshot, SyncEvent
from app.wear.snapshots import SnapshotStore

BLOCKS = " ▁▂▃▄▅▆▇█"  # 0..8 eighths of a cell
MARK_SYMBOLS = ("▲", "◆", "●", "■", "★", "▼")
SPAN_FILL = "─"

# a sync that wrote at least this share of a member's capacity is worth a colour
BIG_SHARE = 0.5
HUGE_SHARE = 1.0

# smartctl(8) EXIT STATUS, bit -> meaning
EXIT_BITS: tuple[tuple[int, str], ...] = (
    (1, "command line did not parse"),
    (2, "device open failed (or the device did not answer IDENTIFY)"),
    (4, "some SMART or ATA command to the disk failed, or a checksum error"),
    (8, "SMART status check returned DISK FAILING"),
    (16, "prefail attributes at or below their threshold"),
    (32, "some attributes were at or below their threshold in the past"),
    (64, "the device error log contains errors"),
    (128, "the self-test log contains errors"),
)
SERIOUS_BITS = 8 | 16 | 128


def exit_status_lines(status: int | None) -> list[str]:
    """Each bit set in smartctl's exit status, as "bit 3 (8): SMART status check ..."."""
    if not status:
        return []
    out: list[str] = []
    for i, (bit, meaning) in enumerate(EXIT_BITS):
        if status & bit:
            out.append(f"bit {i} ({bit}): {meaning}")
    return out


def counter_text(counter: WriteCounter) -> str:
    """Where a write counter comes from and what one unit is: "241 Total_LBAs_Written × 512 B"."""
    unit = counter.unit
    if unit.startswith("LBA×"):
        per = f"{unit.removeprefix('LBA×')} B"
    elif unit == "unknown":
        return f"{counter.source} (unit unknown: raw value, not converted)"
    else:
        per = unit
    return f"{counter.source} × {per}"


def share_level(share: float | None) -> str:
    """ "error" from one capacity written, "warning" from half of one, else "ok" (STATE_COLOURS)."""
    if share is None:
        return "muted"
    if share >= HUGE_SHARE:
        return "error"
    if share >= BIG_SHARE:
        return "warning"
    return "ok"


def share_colour(share: float | None) -> str:
    level = share_level(share)
    return "default" if level == "ok" else STATE_COLOURS[level]


def clock(ts: float, tz: tzinfo | None = None) -> str:
    """ "05-01 12:03" (local time unless ``tz``)."""
    return datetime.fromtimestamp(ts, tz).strftime("%m-%d %H:%M")


def span_text(start: float, end: float | None, tz: tzinfo | None = None) -> str:
    """ "05-01 12:03–12:41"; "05-01 23:50–05-02 00:40" across midnight; "05-01 12:03–now"."""
    a = datetime.fromtimestamp(start, tz)
    head = a.strftime("%m-%d %H:%M")
    if end is None:
        return f"{head}–now"
    b = datetime.fromtimestamp(end, tz)
    tail = b.strftime("%H:%M") if b.date() == a.date() else b.strftime("%m-%d %H:%M")
    return f"{head}–{tail}"


def disk_matches(
    member_disk: str, member_serial: str | None, disk: str, serial: str | None
) -> bool:
    if serial and member_serial:
        return member_serial == serial
    return member_disk == disk


def member_for_disk(wear: SyncWear, disk: str, serial: str | None) -> MemberWear | None:
    for m in wear.members:
        if disk_matches(m.member.disk, m.member.serial, disk, serial):
            return m
    return None


def syncs_touching(wear: Iterable[SyncWear], disk: str, serial: str | None) -> list[SyncWear]:
    """The syncs with a member on ``disk``, oldest first, each once."""
    seen: set[int] = set()
    out: list[SyncWear] = []
    for w in wear:
        if w.sync.id in seen or member_for_disk(w, disk, serial) is None:
            continue
        seen.add(w.sync.id)
        out.append(w)
    return sorted(out, key=lambda w: (w.sync.started_at, w.sync.id))


def newest_first(wear: Iterable[SyncWear]) -> list[SyncWear]:
    return sorted(wear, key=lambda w: (w.sync.started_at, w.sync.id), reverse=True)


@dataclass(frozen=True, slots=True)
class SyncMark:
    """One sync on the plot: its symbol, the columns it covers (None: outside the plotted time)."""

    symbol: str
    sync: SyncEvent
    first_col: int | None
    last_col: int | None

    def label(self, tz: tzinfo | None = None) -> str:
        s = self.sync
        text = f"{self.symbol} {s.action} {s.array} {span_text(s.started_at, s.ended_at, tz)}"
        if self.first_col is None:
            text += " (outside the plotted time)"
        return text


@dataclass(frozen=True, slots=True)
class WritePlot:
    """Bytes written since the first snapshot, one value per column, and the syncs' marks."""

    width: int
    t0: float
    t1: float
    values: tuple[int, ...]  # per column: counter at the column's end minus the first value
    unit: str  # "bytes" or "raw" (counter without a known unit)
    marks: tuple[SyncMark, ...]
    points: int  # snapshots used

    @property
    def total(self) -> int:
        return self.values[-1] if self.values else 0

    @property
    def peak(self) -> int:
        return max(self.values, default=0)

    def rows(self, height: int = 4) -> list[str]:
        """``height`` lines of eighth blocks, top first; the tallest column fills them all."""
        peak = self.peak
        out: list[str] = []
        for r in range(height):
            below = (height - 1 - r) * 8
            line = []
            for v in self.values:
                level = round(v / peak * height * 8) if peak > 0 else 0
                line.append(BLOCKS[max(0, min(8, level - below))])
            out.append("".join(line))
        return out

    def marker_line(self) -> str:
        """Under the plot: each sync's symbol where it starts and ``─`` while it runs."""
        cells = [" "] * self.width
        for m in self.marks:
            if m.first_col is None or m.last_col is None:
                continue
            for c in range(m.first_col + 1, m.last_col + 1):
                if cells[c] == " ":
                    cells[c] = SPAN_FILL
        for m in self.marks:
            if m.first_col is not None:
                cells[m.first_col] = m.symbol
        return "".join(cells).rstrip()

    def axis_line(self, tz: tzinfo | None = None) -> str:
        """The first and last snapshot times under the left and right ends of the plot."""
        left, right = clock(self.t0, tz), clock(self.t1, tz)
        gap = self.width - len(left) - len(right)
        if gap >= 1:
            return left + " " * gap + right
        return f"{left} … {right}"


def _value(s: Snapshot, unit: str) -> int | None:
    if unit == "bytes":
        return s.bytes_written
    raw = s.counters.get("raw")
    return raw if isinstance(raw, int) and not isinstance(raw, bool) else None


def write_plot(
    history: Sequence[Snapshot], syncs: Sequence[SyncEvent], width: int
) -> WritePlot | None:
    """The plot of ``history`` (one disk's snapshots) over ``width`` columns, or None when fewer
    than two snapshots at different times carry a write counter.

    Bytes are plotted when snapshots have them; a counter whose unit is unknown is plotted raw.
    Each column holds the last value known at its end (the counter only grows), minus the first.
    """
    width = max(2, width)
    unit = "bytes" if any(s.bytes_written is not None for s in history) else "raw"
    pts = sorted(
        ((s.ts, v) for s in history if (v := _value(s, unit)) is not None), key=lambda p: p[0]
    )
    if len(pts) < 2 or pts[-1][0] <= pts[0][0]:
        return None
    t0, t1 = pts[0][0], pts[-1][0]
    dt = (t1 - t0) / width

    def col(ts: float) -> int:
        return max(0, min(width - 1, int((ts - t0) / dt)))

    base = pts[0][1]
    values: list[int] = []
    i = 0
    current = 0
    for c in range(width):
        while i < len(pts) and col(pts[i][0]) <= c:
            current = max(0, pts[i][1] - base)
            i += 1
        values.append(current)

    marks: list[SyncMark] = []
    for n, ev in enumerate(sorted(syncs, key=lambda e: (e.started_at, e.id))):
        symbol = MARK_SYMBOLS[n % len(MARK_SYMBOLS)]
        end = ev.ended_at if ev.ended_at is not None else t1
        if end < t0 or ev.started_at > t1:
            marks.append(SyncMark(symbol, ev, None, None))
        else:
            marks.append(SyncMark(symbol, ev, col(ev.started_at), col(end)))
    return WritePlot(width, t0, t1, tuple(values), unit, tuple(marks), len(pts))


def disk_serial(disk: str, *serials: str | None) -> str:
    """The key snapshots of ``disk`` are stored under (the monitor's rule: serial or dev:<name>)."""
    for s in serials:
        if s:
            return s
    return f"dev:{disk}"


def load_disk_history(
    store: SnapshotStore, serial: str, arrays: Iterable[str], since: float | None = None
) -> tuple[list[Snapshot], list[SyncWear]]:
    """What :meth:`widgets.wear_pane.WearPane.show_disk` needs, read from the store (blocking:
    call it from a worker). ``arrays``: the arrays the disk belongs to (``Machine.arrays_of_disk``)."""
    history = store.snapshots_for(serial, since)
    wear: list[SyncWear] = []
    for a in arrays:
        wear.extend(array_wear(store, a))
    return history, wear
