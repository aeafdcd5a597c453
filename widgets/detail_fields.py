"""How the detail pane shows one model field: a label without the unit its value shows, the value
human-readable and coloured by state, and every field of a dataclass as a two-column table."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from app.format import human_bytes, middle_ellipsis, percent, risk_line, sectors, speed
from app.model.devices import Disk, Machine, MdArray, SyncStatus
from app.model.risk import limits_seen, rebuild_risk

# fields holding a byte count that is a small "geometry" figure (shown as exact bytes first)
_GEOMETRY = {
    "logical_sector",
    "physical_sector",
    "min_io",
    "optimal_io",
    "alignment_offset",
    "discard_granularity",
    "block_size",
    "stripe_size",
    "extent_size",
    "pe_start",
}
# The views take ``width``, the width of the pane they are rendered for (0: unknown, render
# everything); narrower than this, sizes go without the exact byte count (an array's members
# table keeps the columns that fit: widgets.device_detail.members_table)
COMPACT_WIDTH = 44


def is_compact(width: int) -> bool:
    return 0 < width < COMPACT_WIDTH


_STATE_OK = {"clean", "active", "in_sync", "PASSED", "write-pending", "active-idle"}


def fmt_value(name: str, value: Any, *, compact: bool = False) -> Text:
    """One model field as coloured text, chosen by the field's name and type (``compact``:
    sizes without the exact byte count)."""
    if value is None:
        return Text("—", "bright_black")
    if isinstance(value, bool):
        return Text("yes" if value else "no", "bold" if value else "")
    if isinstance(value, int) and not isinstance(value, bool):
        if name in _GEOMETRY:
            t = Text(f"{value:,} B")
            if value >= 1024 and not compact:
                t.append(f" ({human_bytes(value)})", "cyan")
            return t
        if name.endswith("_bytes") or name in ("size", "discard_max_bytes"):
            if value < 1024:
                return Text(f"{value} B", "cyan")
            t = Text(human_bytes(value), "cyan")
            if not compact:
                t.append(f" ({value:,} B)", "bright_black")
            return t
        if name.endswith("_sectors") or name in ("start_sector", "reshape_position"):
            return Text(sectors(value))
        if name.endswith("_kib_s"):
            return Text(f"{speed(value)} ({value:,} KiB/s)")
        if name == "size_kib":
            return Text(f"{human_bytes(value * 1024)} ({value:,} KiB)")
        if name == "degraded":
            return Text(str(value), "bold red" if value else "green")
        return Text(f"{value:,}" if abs(value) >= 10000 else str(value))
    if isinstance(value, float):
        return Text(f"{value:.1f}")
    if isinstance(value, tuple):
        if not value:
            return Text("—", "bright_black")
        return Text(", ".join(str(v) for v in value))
    if isinstance(value, SyncStatus):
        return Text(f"{value.action} {percent(value.fraction)}", "yellow" if value.active else "")
    if isinstance(value, dict):
        return Text(", ".join(f"{k}={v}" for k, v in value.items()) or "—")
    text = str(value)
    if name in ("array_state", "state"):
        return Text(text, "green" if text in _STATE_OK else "bold yellow")
    return Text(text)


# Field names as an admin says them; units are in the value ("32.0 KiB (32,768 B)").
FIELD_LABELS: dict[str, str] = {
    "size_bytes": "size",
    "size_kib": "size",
    "data_offset_sectors": "data offset",
    "chunk_bytes": "chunk",
    "free_bytes": "free",
    "used_bytes": "used",
    "avail_bytes": "available",
    "sunit_bytes": "sunit",
    "swidth_bytes": "swidth",
    "min_speed_kib_s": "min speed",
    "max_speed_kib_s": "max speed",
    "speed_kib_s": "speed",
    "mismatch_cnt": "mismatch_cnt",
    "pe_start": "data offset (pe_start)",
    "min_io": "minimum I/O",
    "optimal_io": "optimal I/O",
    "logical_sector": "logical sector",
    "physical_sector": "physical sector",
    "discard_max_bytes": "discard max",
    "stripe_cache_size": "stripe_cache_size",
    "data_percent": "data %",
}


def label_of(name: str) -> str:
    """The field's name without the unit its value already shows ("data offset", not
    "data offset sectors 262,144 sectors")."""
    if name in FIELD_LABELS:
        return FIELD_LABELS[name]
    for unit in ("_sectors", "_kib", "_bytes"):
        if name.endswith(unit):
            name = name.removesuffix(unit)
    return name.replace("_", " ")


def field_table(
    obj: Any, *, skip: tuple[str, ...] = (), title: str | None = None, width: int = 0
) -> Table:
    """Every dataclass field of ``obj`` as a two-column table."""
    table = Table.grid(padding=(0, 1))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    if title:
        table.title = title
        table.title_style = "bold underline"
        table.title_justify = "left"
    fields = [
        f for f in dataclasses.fields(obj) if f.name not in skip and not f.name.startswith("_")
    ]
    # the value column of a narrow pane: a UUID is cut in its middle to one row (it folded over
    # three at 80 columns); the array's Details say it whole below the fields
    value_w = width - 2 - 1 - max((len(label_of(f.name)) for f in fields), default=0) - 2
    for f in fields:
        value = getattr(obj, f.name)
        if value is None and f.name in ONLY_WHEN_SET:
            continue
        if isinstance(obj, Disk) and f.name in ("model", "serial", "transport") and not value:
            table.add_row(label_of(f.name), Text(getattr(obj, f"{f.name}_text"), "bright_black"))
            continue
        if is_compact(width) and f.name.endswith("uuid") and isinstance(value, str):
            table.add_row(label_of(f.name), Text(middle_ellipsis(value, max(9, value_w))))
            continue
        table.add_row(label_of(f.name), fmt_value(f.name, value, compact=is_compact(width)))
    return table


# fields that mean something only in a passing state (the old member count during a reshape)
ONLY_WHEN_SET = ("previous_raid_disks",)


def heading(text: str, style: str = "bold reverse") -> Text:
    return Text(f" {text} ", style)


class LabelGrid:
    """Rows of (label, value) laid out as ``Table.grid(padding=(0, gap))`` with a bold, no-wrap
    label column lays them out, segment for segment, without the table's measuring and cell
    rendering while every row fits on one line (what a sync block re-rendered each second needs:
    issue 29); a width that makes a value wrap is left to the ``Table`` itself. The values are
    ``Text``, never markup."""

    __slots__ = ("_w", "gap", "rows")

    def __init__(self, rows: Sequence[tuple[str, Text]], *, gap: int = 2) -> None:
        self.rows = tuple(rows)
        self.gap = gap
        self._w: tuple[int, int] | None = None  # the columns' widths, once measured

    def table(self) -> Table:
        table = Table.grid(padding=(0, self.gap))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for label, value in self.rows:
            table.add_row(Text(label), value)
        return table

    def _widths(self) -> tuple[int, int]:
        if self._w is None:  # (fits and row_parts both ask: the sync block's, each second)
            self._w = (
                max((cell_len(label) for label, _ in self.rows), default=0),
                max((value.cell_len for _, value in self.rows), default=0),
            )
        return self._w

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.table())

    def fits(self, max_width: int) -> bool:
        """Every row on one line at ``max_width``: laid out here, not by the ``Table``."""
        label_w, value_w = self._widths()
        return not (
            label_w + self.gap + value_w > max_width
            or any("\n" in v.plain or "\t" in v.plain for _, v in self.rows)
            or any("\n" in label or "\t" in label for label, _ in self.rows)
        )

    def row_parts(self) -> list[GridRow]:
        """The rows one by one, each rendering its line as this grid does (where it ``fits``):
        a row whose text did not move keeps its strips (``LineDiffStatic``)."""
        label_w, value_w = self._widths()
        return [GridRow(label, value, label_w, value_w, self.gap) for label, value in self.rows]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        if not self.rows:
            return
        if not self.fits(options.max_width):
            yield from console.render(self.table(), options)
            return
        for row in self.row_parts():
            yield from row.segments(console)


class GridRow:
    """One row of a ``LabelGrid`` that fits: the label cell bold, padded to the label column
    and the gap; the value cell padded to the value column in its own style (Rich's left
    justify pads the Text itself). ``key`` is everything its line shows."""

    __slots__ = ("gap", "label", "label_w", "value", "value_w")

    def __init__(self, label: str, value: Text, label_w: int, value_w: int, gap: int) -> None:
        self.label, self.value = label, value
        self.label_w, self.value_w, self.gap = label_w, value_w, gap

    @property
    def key(self) -> tuple[object, ...]:
        return ("grid-row", self.label, self.label_w, self.value_w, self.gap, text_key(self.value))

    @property
    def width(self) -> int:
        """The cells its line takes."""
        return self.label_w + self.gap + self.value_w

    def line(self, console: Console) -> list[Segment]:
        """Its line's segments, without the newline."""
        row = Text()
        row.append(self.label + " " * (self.label_w - cell_len(self.label) + self.gap), "bold")
        v = self.value.copy()
        v.pad_right(self.value_w - v.cell_len)
        row.append_text(v)  # its style becomes a span: Text.render applies spans only
        return list(row.render(console))

    def segments(self, console: Console) -> Iterator[Segment]:
        yield from self.line(console)
        yield Segment.line()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        yield from self.segments(console)


def text_key(t: Text) -> tuple[object, ...]:
    """Everything a ``Text`` renders from, comparable and hashable (``Text.__eq__`` compares
    only the characters and spans)."""
    return (
        "text",
        t.plain,
        tuple(t.spans),
        str(t.style),
        t.justify,
        t.overflow,
        t.no_wrap,
        t.end,
        t.tab_size,
    )


def risk_block(m: Machine, a: MdArray) -> Text | None:
    """The array's rebuild risk, every term (app.format.risk_line; the report adds each member's
    SMART evidence): None for an array without redundancy."""
    r = rebuild_risk(m, a, limits=limits_seen(m))
    if r is None:
        return None
    colour = "yellow" if (r.ure_expected or 0) >= 0.1 and not r.corrects_one else ""
    return Text(risk_line(r), colour)
