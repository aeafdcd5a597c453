"""The I/O tab: what every disk and array does now, from the session's 1 Hz samples (the one
sampler: ``SessionView.rates``, app.sync.throughput's meter over /proc/diskstats): read and write
per second, IOPS, utilisation, average latency, and a sparkline of the last minute, busiest
first. With an array selected its members come first, under it; with a disk, the disk."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from app.format import STATE_COLOURS, short_size
from app.model import Machine
from app.sync.throughput import Rate
from widgets.shown import shown

HISTORY = 60  # samples (seconds) a sparkline spans
BARS = "▁▂▃▄▅▆▇█"
MUTED = STATE_COLOURS["muted"]


def sparkline(values: Iterable[float], width: int = 20) -> str:
    vals = list(values)[-width:]
    top = max(vals, default=0.0)
    if top <= 0:
        return BARS[0] * len(vals)
    return "".join(BARS[min(len(BARS) - 1, int(v / top * (len(BARS) - 1) + 0.5))] for v in vals)


def _num(v: float | None, fmt: str) -> str:
    return "-" if v is None else fmt.format(v)


NAME_W = 10
# name, read/s, write/s, IOPS, util, await: 10 + 8 + 1 + 8 + 1 + 6 + 1 + 5 + 1 + 6 = 47 columns
FIXED_W = 47


def rate_row(
    name: str, r: Rate | None, hist: Iterable[float], *, indent: str = "", spark: int = 0
) -> Text:
    t = Text(no_wrap=True, overflow="ellipsis")
    label = f"{indent}{name}"
    t.append(f"{label[:NAME_W]:<{NAME_W}}", style="bold" if not indent else "")
    if r is None:
        t.append("no counter", style=MUTED)
        return t
    iops = None if r.read_iops is None or r.write_iops is None else r.read_iops + r.write_iops
    busy = r.util is not None and r.util >= 90
    t.append(
        f"{short_size(int(r.read_bytes_s)) + '/s':>8} {short_size(int(r.write_bytes_s)) + '/s':>8}"
    )
    t.append(f" {_num(iops, '{:.0f}'):>6}")
    t.append(f" {_num(r.util, '{:.0f}%'):>5}", style=STATE_COLOURS["warning"] if busy else "")
    t.append(f" {_num(r.await_ms, '{:.1f}'):>6}")
    if spark > 0:
        t.append(f" {sparkline(hist, spark)}", style="cyan")
    return t


def header(spark: int) -> str:
    head = f"{'device':<{NAME_W}}{'read':>8} {'write':>8} {'IOPS':>6} {'util':>5} {'await':>6}"
    return head + (f" {'last ' + str(spark) + ' s':<{spark}}" if spark > 0 else "")


def io_text(
    machine: Machine | None,
    rates: Mapping[str, Rate],
    history: Mapping[str, deque[float]],
    selected: str | None,
    width: int = 80,
) -> Text:
    t = Text(no_wrap=True, overflow="ellipsis")
    if machine is None:
        t.append("waiting for the first probe…", style=MUTED)
        return t
    if not rates:
        t.append("waiting for two samples…", style=MUTED)
        return t
    spark = min(HISTORY, max(0, width - FIXED_W - 1))
    spark = spark if spark >= 8 else 0
    t.append(header(spark) + "\n", style=MUTED)
    arrays = [a for a in machine.arrays if not a.is_container]
    a = machine.array(selected) if selected else None
    if a is not None:
        t.append_text(rate_row(a.name, rates.get(a.name), history.get(a.name, ()), spark=spark))
        t.append("\n")
        for m in a.members_by_slot:
            h = history.get(m.device, ())
            t.append_text(rate_row(m.device, rates.get(m.device), h, indent=" ", spark=spark))
            t.append("\n")
        t.append("\n")
    names = [d.name for d in machine.disks if d.kind == "disk" and d.is_storage]
    names += [x.name for x in arrays]
    busiest = sorted(names, key=lambda n: (-(rates[n].total_bytes_s if n in rates else -1), n))
    t.append("busiest first (await in ms)\n", style=MUTED)
    for n in busiest:
        t.append_text(rate_row(n, rates.get(n), history.get(n, ()), spark=spark))
        t.append("\n")
    t.rstrip()
    return t


class IoPane(VerticalScroll):
    DEFAULT_CSS = """
    IoPane { padding: 0 1; }
    IoPane > Static { text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        # the last HISTORY samples' rates, as the session handed them out (never mutated after:
        # app.sync.throughput); each device's sparkline values are drawn from them only while
        # the tab is shown: hidden, a sample costs one append, not one per device (1,200 on big)
        self._window: deque[Mapping[str, Rate]] = deque(maxlen=HISTORY)
        self._fed = 0  # samples appended to the window, ever
        self._history: dict[str, deque[float]] = {}
        self._history_at = 0  # ``_fed`` when ``_history`` was last brought up to date
        self._seen = -1
        self._rates: Mapping[str, Rate] = {}

    def compose(self) -> ComposeResult:
        yield Static(Text("waiting for two samples…", style=MUTED), id="io-body")

    def on_mount(self) -> None:
        if hasattr(self.app, "view"):
            self.watch(self.app, "view", self._view)
        if hasattr(self.app, "selected"):
            self.watch(self.app, "selected", self._selected, init=False)

    def _selected(self, _ref: object) -> None:
        if shown(self):  # hidden, it is drawn when shown (on_show)
            self._render_now()

    def on_show(self) -> None:
        self._render_now()

    def on_resize(self) -> None:
        self._render_now()  # the sparklines take what is left of the width

    def _view(self, view: object) -> None:
        count = getattr(view, "sample_count", None)
        if view is None or count is None or count == self._seen:
            return
        self._seen = count
        rates = getattr(view, "rates", {}) or {}
        if not rates:
            return  # a sample at the same instant (or the first): the last rates still hold
        self._rates = rates
        self._window.append(rates)
        self._fed += 1
        if shown(self):
            self._render_now()  # only while its tab is shown

    def _catch_up(self) -> dict[str, deque[float]]:
        """Each device's rates over the last samples (at most HISTORY): the samples that came
        since the last look appended; after more than HISTORY of them, built from the window."""
        behind = self._fed - self._history_at
        if behind > len(self._window):
            self._history = {}
            behind = len(self._window)
        history = self._history
        for rates in list(self._window)[len(self._window) - behind :] if behind else ():
            for name, r in rates.items():
                h = history.get(name)
                if h is None:
                    h = history[name] = deque(maxlen=HISTORY)
                h.append(r.total_bytes_s)
        self._history_at = self._fed
        return history

    def _render_now(self) -> None:
        ref = getattr(self.app, "selected", None)
        name = getattr(ref, "name", None) if ref is not None else None
        machine = getattr(self.app, "machine", None)
        self.query_one("#io-body", Static).update(
            io_text(machine, self._rates, self._catch_up(), name)
        )
