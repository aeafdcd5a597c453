"""WearPane: the "Wear" tab. For a disk: its SMART (health, temperature, power-on hours, bytes
written with the counter's source and unit, wear used) or why SMART is unavailable, and a plot of
bytes written over time with the recorded syncs marked. For an array: every recorded sync, newest
first, with what it wrote to each member: the kernel's count of the member itself (× its own
size) and SMART's of its whole disk (× the disk's capacity, wear points).

Bound to the App's ``wear_request`` (``widgets.wear_source.WearRequest``: the device under the
tree cursor, and at each sample while a sync runs): the pane reads what it shows in its own
worker (``wear_source.load_wear``: the store, SMART when no fresh reading is at hand), as
Textual's DirectoryTree loads its directories. ``show_disk`` / ``show_array`` / ``show_nothing``
show what was read.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.events import Resize
from textual.message import Message
from textual.widgets import Static

from app.format import STATE_COLOURS, duration, human_bytes
from app.model import smart_units as units
from app.model.devices import Disk, MdArray
from app.model.smart import SmartReading
from app.wear.delta import MemberWear, SyncWear
from app.wear.plot import (
    SERIOUS_BITS,
    WritePlot,
    counter_text,
    disk_serial,
    exit_status_lines,
    member_for_disk,
    newest_first,
    share_colour,
    span_text,
    syncs_touching,
    write_plot,
)
from app.wear.records import Snapshot
from widgets.shown import shown
from widgets.smart_table import smart_logs_text
from widgets.wear_source import ArrayWear, DiskWear, WearRequest, load_wear

PLOT_HEIGHT = 4
DEFAULT_PLOT_WIDTH = 60
MUTED = STATE_COLOURS["muted"]

TRANSPORT_HINTS: dict[str, str] = {
    "virtio": "virtio disk: the hypervisor does not pass SMART through (read it on the host)",
    "usb": "USB disk: many USB-SATA bridges block SMART (try smartctl -d sat)",
    "loop": "loop device: a file, it has no SMART",
}


def both_bytes(n: int) -> str:
    """Decimal as vendors rate endurance, IEC as the rest of raidman: "1.62 TB (1.5 TiB)"."""
    return f"{human_bytes(n, decimal=True)} ({human_bytes(n)})"


def _field(text: Text, label: str, value: str | Text, style: str = "") -> None:
    text.append(f"{label:<14}", style="bold")
    if isinstance(value, Text):
        text.append_text(value)
    else:
        text.append(value, style=style)
    text.append("\n")


def smart_text(disk: Disk, reading: SmartReading | None) -> Text:
    """The SMART block of a disk: values, or "SMART unavailable: <reason>" with its hints."""
    t = Text()
    if reading is None:
        t.append("SMART not read yet.", style=MUTED)
        return t
    if not reading.available:
        t.append("SMART unavailable: ", style=f"bold {STATE_COLOURS['warning']}")
        t.append(reading.reason or "no reason given", style=STATE_COLOURS["warning"])
        t.append("\n")
        transport = "loop" if disk.kind == "loop" else (disk.transport or "")
        hint = TRANSPORT_HINTS.get(transport)
        if hint and transport not in (reading.reason or "").lower():
            t.append(hint + "\n", style=MUTED)
        _exit_bits(t, reading.exit_status)
        t.rstrip()
        return t

    ident = " · ".join(
        p
        for p in (reading.model or disk.model, reading.serial or disk.serial, reading.protocol)
        if p
    )
    if ident:
        t.append(ident + "\n", style=MUTED)
    health = reading.health or "?"
    hstyle = {"PASSED": STATE_COLOURS["ok"], "FAILED": f"bold {STATE_COLOURS['error']}"}.get(
        health, ""
    )
    _field(t, "health", health, hstyle)
    temp = "?" if reading.temperature_c is None else f"{reading.temperature_c} °C"
    _field(t, "temperature", temp)
    poh = reading.power_on_hours
    _field(t, "power-on", "?" if poh is None else f"{poh:,} h ({duration(poh * 3600.0)})")

    w = units.bytes_written(reading)
    if w is None:
        _field(t, "bytes written", "not reported by this disk", MUTED)
    else:
        v = Text()
        if w.bytes is not None:
            v.append(both_bytes(w.bytes))
        else:
            v.append(f"raw {w.raw:,}", style=STATE_COLOURS["warning"])
        v.append(f" · {counter_text(w)}", style=MUTED)
        if w.bytes is not None:
            v.append(f" · raw {w.raw:,}", style=MUTED)
        if w.kind == "nand":
            v.append(" · NAND writes (no host counter)", style=MUTED)
        _field(t, "bytes written", v)
        if w.note:
            t.append(f"{'':<14}{w.note}\n", style=MUTED)
    wear = units.wear_used_percent(reading)
    if wear is None:
        _field(t, "wear used", "not reported by this disk", MUTED)
    else:
        v = Text(f"{wear.used_percent} % of rated life")
        extra = f"the drive's own estimate: {wear.source}"
        if wear.normalized is not None:
            extra += f" (normalized {wear.normalized})"
        v.append(f" · {extra}", style=MUTED)
        _field(t, "wear used", v)
    tbw = units.tbw_used(reading)
    if tbw is not None:
        v = Text(tbw.text, style=STATE_COLOURS["error"] if tbw.used_percent >= 100 else "")
        v.append(
            f" · host writes over the maker's rating for {tbw.rating.name}",
            style=MUTED,
        )
        _field(t, "rated TBW", v)
        if wear is not None and wear.used_percent != tbw.used_percent:
            used = units.endurance_used_percent(reading)
            t.append(
                f"{'':<14}two sources disagree: raidman's endurance figure (metrics, records) is {used} % "
                + (
                    "(NVMe's percentage_used is the drive's own figure)\n"
                    if wear.source == "nvme:percentage_used"
                    else "(the larger: either limit can end the drive's rated life)\n"
                ),
                style=MUTED,
            )
    if reading.reason:
        t.append(f"smartctl: {reading.reason}\n", style=STATE_COLOURS["warning"])
    _exit_bits(t, reading.exit_status)
    t.append("\n")
    t.append_text(smart_logs_text(reading))  # the whole table and the logs (widgets/smart_table.py)
    t.rstrip()
    return t


def _exit_bits(t: Text, status: int | None) -> None:
    for i, line in enumerate(exit_status_lines(status)):
        bit = 1 << int(line.split(" ", 2)[1])
        style = STATE_COLOURS["error"] if bit & SERIOUS_BITS else STATE_COLOURS["warning"]
        prefix = "smartctl exit status: " if i == 0 else " " * 22
        t.append(prefix + line + "\n", style=style)


def member_line(wear: SyncWear, member: MemberWear) -> Text:
    """ "this rebuild wrote 1.62 TB to sdd = 3.2 × its capacity, 1 wear point", coloured by size."""
    line = "SMART counter: " + wear.line(member)
    if member.bytes_written is None:
        return Text(line, style=MUTED)
    return Text(line, style=share_colour(member.capacity_share))


def sync_heading(wear: SyncWear, symbol: str = "") -> Text:
    s = wear.sync
    t = Text()
    if symbol:
        t.append(symbol + " ", style="bold")
    t.append(f"{s.action}", style="bold")
    t.append(f" {s.array} {span_text(s.started_at, s.ended_at)}")
    if s.ended_at is not None:
        t.append(f" ({duration(s.ended_at - s.started_at)})")
    outcome = s.outcome or "running"
    style = STATE_COLOURS["warning"] if s.running else MUTED
    t.append(f" · {outcome}", style=style)
    return t


def plot_text(plot: WritePlot, height: int = PLOT_HEIGHT) -> Text:
    t = Text(no_wrap=True, overflow="crop")
    for row in plot.rows(height):
        t.append(row + "\n", style="cyan")
    t.append(plot.marker_line() + "\n", style=f"bold {STATE_COLOURS['warning']}")
    t.append(plot.axis_line(), style=MUTED)
    return t


class WearPane(VerticalScroll):
    """The Wear tab: a disk's SMART and write history, or an array's recorded syncs."""

    DEFAULT_CSS = """
    WearPane { padding: 0 1; }
    WearPane > #wear-title { text-style: bold; margin-bottom: 1; }
    WearPane > #wear-plot-title { margin-top: 1; text-style: bold; }
    WearPane > #wear-plot { height: auto; }
    WearPane > #wear-legend { margin-top: 1; }
    WearPane > #wear-empty { color: $text-muted; }
    """

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._plot_input: tuple[list[Snapshot], list[SyncWear]] | None = None
        self._plot_width = 0
        self._disk_key = ("", "")
        self.plot: WritePlot | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="wear-title")
        yield Static(id="wear-smart")
        yield Static(id="wear-plot-title")
        yield Static(id="wear-plot")
        yield Static(id="wear-legend")
        yield Static(id="wear-syncs")
        yield Static("Select a disk or an array to see its wear.", id="wear-empty")

    class Loaded(Message, bubble=False):
        """The pane's worker read what a request asked for."""

        def __init__(self, request: WearRequest, wear: ArrayWear | DiskWear) -> None:
            super().__init__()
            self.request = request
            self.wear = wear

    def on_mount(self) -> None:
        self._show_only("wear-empty")
        if hasattr(type(self.app), "wear_request"):  # bound to the App's (RaidmanApp)
            self.watch(self.app, "wear_request", self._requested)

    def _requested(self, req: WearRequest | None) -> None:
        if req is None or (req.follow and not shown(self)):
            return  # following a sync: only while the tab is shown
        obj = req.device()
        if obj is None:
            self.show_nothing("select a disk or an array")
            return
        self._load(req, obj)

    @work(
        thread=True, exclusive=True, group="wear-view", exit_on_error=False, description="wear-view"
    )
    def _load(self, req: WearRequest, obj: Disk | MdArray) -> None:
        try:
            self.post_message(self.Loaded(req, load_wear(req, obj)))
        except Exception as e:
            msg = f"wear view: {e}"
            with contextlib.suppress(RuntimeError):  # the app is shutting down
                self.app.call_from_thread(self.app.notify, msg, title="wear", severity="warning")

    def on_wear_pane_loaded(self, message: Loaded) -> None:
        w = message.wear
        if isinstance(w, ArrayWear):
            self.show_array(w.array, w.wear)
        else:
            self.show_disk(w.disk, w.reading, w.history, w.syncs)

    # ---- public API --------------------------------------------------------------------------
    def show_nothing(self, reason: str) -> None:
        """Nothing to show (a partition, an LV, no selection): say why."""
        self._plot_input = None
        self.plot = None
        self._static("wear-empty").update(Text(reason))
        self._show_only("wear-empty")

    def show_disk(
        self,
        disk: Disk,
        reading: SmartReading | None,
        history: Sequence[Snapshot] = (),
        syncs: Sequence[SyncWear] = (),
    ) -> None:
        """A disk: ``reading`` (None: not read yet), ``history`` its snapshots
        (``SnapshotStore.snapshots_for(serial)``), ``syncs`` the recorded syncs of its arrays
        (``array_wear(store, array)`` for each; those without this disk are left out)."""
        serial = disk_serial(disk.name, reading.serial if reading else None, disk.serial)
        mine = syncs_touching(syncs, disk.name, serial)
        self._static("wear-title").update(
            Text(f"Wear · {disk.name}  ({human_bytes(disk.size_bytes)})")
        )
        self._static("wear-smart").update(smart_text(disk, reading))
        self._plot_input = (list(history), mine)
        self._show_only("wear-title", "wear-smart", "wear-plot-title", "wear-plot", "wear-legend")
        self._render_plot(disk.name, serial)

    def show_array(self, array: MdArray, wear: Sequence[SyncWear]) -> None:
        """An array: each recorded sync (``array_wear(store, array.name)``), newest first."""
        self._plot_input = None
        self.plot = None
        n = len(wear)
        self._static("wear-title").update(
            Text(f"Wear · {array.name}  ({array.level}, {len(array.members)} members)")
        )
        t = Text()
        if not wear:
            t.append(
                f"No sync of {array.name} recorded yet. raidman records syncs (and SMART snapshots "
                "at their start and end) while the TUI or `raidman monitor` runs.",
                style=MUTED,
            )
        else:
            t.append(f"{n} recorded sync{'s' if n != 1 else ''}, newest first\n\n", style=MUTED)
            for i, w in enumerate(newest_first(wear)):
                if i:
                    t.append("\n")
                t.append_text(sync_heading(w))
                t.append("\n")
                f = w.forecast_line()
                if f is not None:  # what the model said as it began, beside what happened
                    t.append("  " + f + "\n")
                if not w.members:
                    t.append("  members not recorded\n", style=MUTED)
                seen: set[str] = set()
                for m in w.members:
                    # the kernel's exact count of the member itself (once per member device),
                    # then SMART's of its whole disk beside it
                    k = w.kernel_line(m) if m.member.device not in seen else None
                    seen.add(m.member.device)
                    if k is not None:
                        t.append("  " + k + "\n", style=share_colour(w.kernel_share(m)))
                    t.append("  ")
                    t.append_text(member_line(w, m))
                    t.append("\n")
        t.rstrip()
        self._static("wear-syncs").update(t)
        self._show_only("wear-title", "wear-syncs")

    # ---- internals ---------------------------------------------------------------------------
    def _static(self, id_: str) -> Static:
        return self.query_one(f"#{id_}", Static)

    def _show_only(self, *ids: str) -> None:
        for w in self.query(Static):
            w.display = w.id in ids

    def _width(self) -> int:
        w = self.scrollable_content_region.width
        if not self.show_vertical_scrollbar:  # keep the plot whole when a scrollbar appears
            w -= self.styles.scrollbar_size_vertical
        return w if w >= 10 else DEFAULT_PLOT_WIDTH

    def _render_plot(self, disk: str, serial: str) -> None:
        assert self._plot_input is not None
        history, mine = self._plot_input
        width = self._width()
        self._plot_width = width
        plot = write_plot(history, [w.sync for w in mine], width)
        self.plot = plot
        title = self._static("wear-plot-title")
        body = self._static("wear-plot")
        if plot is None:
            have = sum(1 for s in history if s.bytes_written is not None or s.counters.get("raw"))
            title.update(Text("Bytes written over time"))
            if history and have == 0:  # read, and never a counter: it never will have one
                why = (
                    f"No plot: {serial} reports no write counter in its SMART data "
                    f"({len(history)} reading(s)), so raidman cannot count what it wrote."
                )
            else:
                why = (
                    f"Not enough history for a plot yet: {have} snapshot(s) of {serial} with a "
                    "write counter. raidman takes one at start, every 15 minutes and when a "
                    "sync starts and ends."
                )
            body.update(Text(why, style=MUTED))
        else:
            what = "bytes written" if plot.unit == "bytes" else "write counter (raw, unit unknown)"
            total = both_bytes(plot.total) if plot.unit == "bytes" else f"{plot.total:,}"
            title.update(
                Text.assemble(
                    (f"{what.capitalize()} over time", "bold"),
                    (f"  +{total} in {duration(plot.t1 - plot.t0)}", ""),
                    (f" · {plot.points} snapshots", MUTED),
                )
            )
            body.update(plot_text(plot))
        legend = Text()
        symbols = {m.sync.id: m.symbol for m in plot.marks} if plot else {}
        for w in mine:
            legend.append_text(sync_heading(w, symbols.get(w.sync.id, "•")))
            if plot is not None:
                mark = next(m for m in plot.marks if m.sync.id == w.sync.id)
                if mark.first_col is None:
                    legend.append(" (outside the plotted time)", style=MUTED)
            legend.append("\n")
            m = member_for_disk(w, disk, serial)
            if m is not None:
                k = w.kernel_line(m)  # the member on this disk, by its own kernel counter
                if k is not None:
                    legend.append("  " + k + "\n", style=share_colour(w.kernel_share(m)))
                legend.append("  ")
                legend.append_text(member_line(w, m))
                legend.append("\n")
        if not mine:
            legend.append("No sync recorded on this disk's arrays.", style=MUTED)
        legend.rstrip()
        self._static("wear-legend").update(legend)
        self._disk_key = (disk, serial)

    def on_resize(self, event: Resize) -> None:
        if self._plot_input is not None and self._width() != self._plot_width:
            disk, serial = self._disk_key
            self._render_plot(disk, serial)
