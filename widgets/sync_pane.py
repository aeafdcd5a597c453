"""The live sync view: one card per syncing array (progress, speed, ETA, speed history, members'
throughput), the check history and the finished syncs below, and the event log beside it.

Fed by the app once a second with the tracker's views; never reads the system itself (the check
history comes from the wear database, read in the pane's own worker).
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Mapping

from rich.cells import cell_len
from rich.markup import escape
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import DataTable, RichLog, Static

from app.format import duration, human_bytes, percent, speed
from app.model import Machine
from app.model.devices import SECTOR
from app.session import SessionView
from app.sync.boost import BoostRecord
from app.sync.dm_raid import raid_lv, raid_sync
from app.sync.limits import SyncLimits, sync_limits
from app.sync.throughput import Rate
from app.sync.tracker import ArrayEvent, FinishedSync, SyncView
from app.wear.checks import history_lines
from app.wear.snapshots import SnapshotStore
from widgets.check_history import CheckHistory
from widgets.shown import shown

ACTION_TITLES = {
    "resync": "resync (initial or after an unclean stop)",
    "recover": "recovery (rebuilding onto a member)",
    "check": "check (read and compare, no writes)",
    "repair": "repair (check and rewrite mismatches)",
    "reshape": "reshape (changing geometry)",
    "pending": "pending (waits to start)",
    "delayed": "delayed (waits for another array on the same disks)",
    "frozen": "frozen",
}


def title_parts(action: str) -> tuple[str, str]:
    """ "resync" → ("resync", "initial or after an unclean stop"): the word for the card's title
    and the explanation shown beside it, or on its own line when the card is narrow."""
    words = ACTION_TITLES.get(action, action)
    word, sep, note = words.partition(" (")
    return (word, note.removesuffix(")")) if sep else (words, "")


def bar_markup(fraction: float | None, width: int) -> str:
    """A text progress bar (a ProgressBar widget animates, costing CPU at every update)."""
    f = min(1.0, max(0.0, fraction or 0.0))
    filled = round(f * width)
    return f"[yellow]{'█' * filled}[/][bright_black]{'░' * (width - filled)}[/]"


BLOCKS = " ▁▂▃▄▅▆▇█"


def spark_markup(speeds: tuple[float, ...], width: int) -> str:
    """The last ``width`` speed samples as a one-line sparkline, scaled to their maximum."""
    data = list(speeds[-width:])
    if not data:
        return "[bright_black]speed history: waiting for samples[/]"
    top = max(data) or 1.0
    cells = "".join(BLOCKS[min(8, round(8 * x / top))] for x in data)
    return f"[cyan]{cells}[/] [bright_black]max {speed(top)}[/]"


# The two speeds on a card are averaged over different windows, so they disagree for a while
# after any change (a boost: ~20 s): md's sync_speed is the progress since the oldest of its
# marks (md.c sync_speed_show: (curr_mark_cnt - resync_mark_cnt) / (jiffies - resync_mark);
# md_do_sync keeps SYNC_MARKS = 10 marks SYNC_MARK_STEP = 3 s apart: up to 30 s), the members'
# rates are their kernel I/O counters between raidman's last two samples.
PROGRESS_WINDOW = "md's mean over ≤30 s"
MEMBERS_WINDOW = "their rates: since the last sample"
# a raid LV ("VG/LV"): dm-raid has no sync_speed; its speed is its busiest image's I/O between
# the last two samples (app.sync.dm_raid.image_io_kib_s)
LV_PROGRESS_WINDOW = "its images' I/O since the last sample"


def progress_items(v: SyncView) -> tuple[str, ...]:
    """Most important first, so a narrow terminal still shows percent, ETA and speed on the
    first line. The ETA is md's own (``SyncStatus.eta_s``), the banner's and Details'. A sync
    md holds back says what it waits for and when it starts (never "no progress")."""
    if v.waiting:
        said = v.wait.text() if v.wait is not None else ACTION_TITLES.get(v.action, v.action)
        waits = (f"[yellow]{escape(said)}[/]", f"waiting for {duration(v.elapsed_s)}")
        # a pending resync's position (resync_start: where it stopped) is still md's figure
        return waits if v.fraction is None else (percent(v.fraction), *waits)
    done = human_bytes(v.done_sectors * SECTOR) if v.done_sectors is not None else "?"
    total = human_bytes(v.total_sectors * SECTOR) if v.total_sectors is not None else "?"
    items = [
        percent(v.fraction),
        f"ETA {duration(v.eta_s)}",
        f"{speed(v.speed_kib_s)} progress "
        f"({LV_PROGRESS_WINDOW if '/' in v.array else PROGRESS_WINDOW})",
        f"{done} / {total}",
    ]
    if v.stalled:  # first after the percent: the one fact that matters then
        items.insert(1, f"[bold red]no progress for {duration(v.still_s)}[/]")
    if v.began_s is not None and v.began_s > v.elapsed_s + 60:
        items.append(f"began ~{duration(v.began_s)} ago (position / speed)")
    items.append(f"watched for {duration(v.elapsed_s)}")
    return tuple(items)


def limits_lines(lim: SyncLimits) -> tuple[str, str]:
    """The limits (on the progress rate, with the sync's speed beside them) and the boost/ceiling
    state, as markup; the second is empty when there is nothing to say."""
    state = escape(lim.state_text())
    if state:
        state = f"[cyan]{state}[/]" if lim.boosted else f"[yellow]{state}[/]"
    return escape(lim.limits_text()), state


def members_items(
    array: str, machine: Machine | None, rates: Mapping[str, Rate], slow: tuple[str, ...]
) -> tuple[str, ...]:
    """Each working member's throughput (the first led by "members:"), as markup; a member far
    below the others is marked slow."""
    a = machine.array(array) if machine else None
    if a is None or not a.members:
        return ()
    cells = []
    for m in a.members:
        if not m.working:
            continue  # no I/O expected: not a throughput question
        r = rates.get(m.device)
        if r is None:
            cells.append(f"{m.device} ?")
            continue
        txt = f"{m.device} r {human_bytes(int(r.read_bytes_s))}/s w {human_bytes(int(r.write_bytes_s))}/s"
        cells.append(f"[red]{txt} (slow)[/]" if m.device in slow else txt)
    if cells:
        cells[0] = "members: " + cells[0]
        if any(m.device in rates for m in a.members if m.working):  # rates to explain
            cells.append(f"[bright_black]({MEMBERS_WINDOW})[/]")
    return tuple(cells)


class Line(Widget):
    """One line of markup whose updates repaint only itself (a Static's update re-lays-out the
    whole screen, which at 16 syncing arrays × 1 Hz was most of the CPU the watch cost)."""

    DEFAULT_CSS = "Line { height: 1; width: 1fr; }"

    text: reactive[str] = reactive("", layout=False)

    def render(self) -> Text:
        t = Text.from_markup(self.text, overflow="ellipsis")
        t.no_wrap = True
        return t


class WrapLine(Line):
    """A Line that wraps instead of cutting (the limits and the boost state must be read in
    full at any width); its height follows its text, so an update re-lays-out the card — rare,
    as the card sets it only when the text changed."""

    DEFAULT_CSS = "WrapLine { height: auto; width: 1fr; }"

    text: reactive[str] = reactive("", layout=True)

    def render(self) -> Text:
        return Text.from_markup(self.text)


class TitleLine(Line):
    """The card's title: "md0: resync (initial or after an unclean stop)" on one line when it
    fits, else "md0: resync" and the explanation wrapped on the lines below (never cut)."""

    DEFAULT_CSS = "TitleLine { height: auto; width: 1fr; }"

    text: reactive[str] = reactive("", layout=True)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.head = ""
        self.note = ""

    def set_title(self, head: str, note: str) -> None:
        self.head, self.note = head, note
        self.text = f"{head} ({note})" if note else head  # the whole title, as read in one line

    def _fitted(self, width: int) -> Text:
        if not self.note or cell_len(self.text) <= width:
            t = Text(self.text, style="bold", overflow="ellipsis")
            t.no_wrap = True
            return t
        t = Text(self.head, style="bold")
        t.append("\n")
        t.append(self.note, style="dim")
        return t

    def render(self) -> Text:
        return self._fitted(self.content_size.width)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._fitted(width).wrap(self.app.console, max(1, width)))


class FlowLine(Line):
    """Items (markup) joined by ``sep`` and packed into as many lines as the width needs, an
    item never split (one longer than the line is cut with an ellipsis). Updated at every
    sample: the card re-lays-out only when the number of lines changes."""

    DEFAULT_CSS = "FlowLine { height: 1; width: 1fr; }"

    def __init__(self, sep: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.sep = sep
        self.items: tuple[str, ...] = ()
        self._rows = 1

    def set_items(self, items: tuple[str, ...]) -> None:
        self.items = items
        self.text = self.sep.join(items)

    def _lines(self, width: int) -> list[Text]:
        lines: list[Text] = []
        for item in self.items:
            t = Text.from_markup(item)
            if lines and lines[-1].cell_len + cell_len(self.sep) + t.cell_len <= width:
                lines[-1].append(self.sep)
                lines[-1].append_text(t)
            else:
                lines.append(t)
        return lines or [Text()]

    def watch_text(self) -> None:
        width = self.content_size.width
        rows = len(self._lines(width)) if width else 1
        if rows != self._rows:  # a layout pass only when the line count changes
            self._rows = rows
            self.styles.height = rows

    def on_resize(self) -> None:
        self.watch_text()

    def render(self) -> Text:
        out = Text("\n").join(self._lines(self.content_size.width))
        out.no_wrap = True
        out.overflow = "ellipsis"
        return out


def card_id(array: str) -> str:
    """The card's widget id: "sync-md127"; a raid LV's "VG/LV" (lvm names also take "+" and
    ".") with each character a Textual id cannot hold written as its code: "sync-vgr_2f_r1"."""
    return "sync-" + re.sub(r"[^A-Za-z0-9_-]", lambda m: f"_{ord(m.group()):x}_", array)


class SyncCard(Vertical):
    """One array's running sync."""

    DEFAULT_CSS = """
    SyncCard { height: auto; border: round $warning; padding: 0 1; margin-bottom: 1; }
    SyncCard > .title { text-style: bold; }
    """

    def __init__(self, array: str) -> None:
        super().__init__(id=card_id(array))
        self.array = array
        self._texts: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield TitleLine(classes="title", id="title")
        yield Line(id="bar")
        yield FlowLine(" · ", id="progress")
        yield WrapLine(id="limits")
        yield WrapLine(id="limit-state")
        yield Line(id="speeds")
        yield FlowLine(" | ", id="members")

    def _set(self, widget_id: str, content: str) -> None:
        """Update a line only when its text changed: each update costs a layout pass."""
        if self._texts.get(widget_id) == content:
            return
        # remembered only once shown: a card still composing raises NoMatches here, and the
        # next sample must try again (else its title stayed empty for good)
        self.query_one(f"#{widget_id}", Line).text = content
        self._texts[widget_id] = content

    def _set_items(self, widget_id: str, items: tuple[str, ...]) -> None:
        line = self.query_one(f"#{widget_id}", FlowLine)
        if line.items != items:
            line.set_items(items)

    def show(self, v: SyncView, members: tuple[str, ...], limits: SyncLimits) -> None:
        with contextlib.suppress(NoMatches):  # mounted but not composed yet: next sample shows it
            self._show(v, members, limits)

    def _show(self, v: SyncView, members: tuple[str, ...], limits: SyncLimits) -> None:
        target = f" onto {', '.join(v.targets)}" if v.targets else ""
        word, note = title_parts(v.action)
        title = self.query_one("#title", TitleLine)
        if (title.head, title.note) != (f"{v.array}: {word}{target}", note):
            title.set_title(f"{v.array}: {word}{target}", note)
        self._set("bar", bar_markup(v.fraction, max(10, self.size.width - 4)))
        self._set_items("progress", progress_items(v))
        if v.waiting:  # nothing runs: no speed, no limit state to report
            self._set("speeds", "[bright_black]no speed: it has not started[/]")
        text, state = limits_lines(limits)
        self._set("limits", text)
        self._set("limit-state", state)
        self.query_one("#limit-state", WrapLine).display = bool(state)
        if not v.waiting:
            self._set("speeds", spark_markup(v.speeds, max(10, self.size.width - 24)))
        self._set_items("members", members)


def idle_text(machine: Machine | None) -> Text:
    """What the pane says with no sync to show: that, and each LVM RAID LV's sync as its last
    probe read it, until the 1 Hz sample has shown it (then it has a card of its own, its speed
    from the images' I/O between two samples: app.sync.dm_raid)."""
    lvs = [(lv, s) for lv in (machine.lvs if machine else ()) if (s := raid_sync(lv)) is not None]
    if not lvs:
        return Text("No array is syncing.")
    text = Text("No md array is syncing.")
    for lv, s in lvs:
        text.append(f"\nLVM RAID {lv.vg}/{lv.name}: {s.action} {percent(s.fraction)}")
        text.append(" as of the last probe; speed and ETA: raidman report", style="dim")
    return text


class SyncPane(VerticalScroll):
    """Running syncs (cards) and finished ones (table)."""

    DEFAULT_CSS = """
    SyncPane { padding: 0 1; }
    SyncPane > #idle { color: $text-muted; margin-bottom: 1; }
    SyncPane > #cards { height: auto; }
    SyncPane > #finished { height: auto; max-height: 12; }
    """

    def compose(self) -> ComposeResult:
        yield Static("No array is syncing.", id="idle")
        yield Vertical(id="cards")
        yield CheckHistory(id="check-history")
        yield Static("[b]Finished syncs[/b] (seen by raidman)", id="finished-title")
        table: DataTable[str] = DataTable(id="finished", cursor_type="row", zebra_stripes=True)
        yield table

    def on_mount(self) -> None:
        table = self.query_one("#finished", DataTable)
        table.add_columns("array", "action", "outcome", "duration", "avg speed", "mismatch_cnt")
        self._stale = False
        self._checks_key: tuple[int, int, int] | None = None
        if hasattr(type(self.app), "view"):  # bound to the live session's view (RaidmanApp)
            self.watch(self.app, "view", self._view_changed, init=False)

    def _view_changed(self, view: SessionView) -> None:
        """Each probe and sample: redrawn while its tab is shown, else when it is shown next
        (no redraws nobody sees)."""
        if not shown(self):
            self._stale = True
            return
        self._stale = False
        self.show_view(view)

    def on_show(self) -> None:
        if self._stale and hasattr(type(self.app), "view"):
            self._view_changed(self.app.view)  # type: ignore[attr-defined]

    def show_view(self, view: SessionView) -> None:
        if view.probed is None or view.machine is None:
            return
        self._ask_checks(view)
        self.refresh_views(
            list(view.syncs),
            list(view.finished),
            machine=view.machine,
            rates=view.rates,
            slow=dict(view.slow),
            boosts=view.boost_records,
        )

    def _ask_checks(self, view: SessionView) -> None:
        """The check history under the cards (``app.wear.checks.history_lines``), read again in
        the pane's worker when a sync ended or a minute passed (as of the last sample's time)."""
        host = getattr(self.app, "hostview", None)  # the shown host's records (RaidmanApp)
        if host is None or view.live is None or view.machine is None:
            return
        now = view.live.taken_at
        key = (id(host), len(view.finished), int(now // 60))
        if key == self._checks_key:
            return
        self._checks_key = key
        self._load_checks(host.store, host.store_lock, view.machine, now)

    @work(
        thread=True,
        exclusive=True,
        group="check-history",
        exit_on_error=False,
        description="check-history",
    )
    def _load_checks(
        self,
        store: Callable[[], SnapshotStore],
        lock: threading.Lock,
        machine: Machine,
        now: float,
    ) -> None:
        try:
            with lock:  # the store's writers' lock, never held while waiting for the UI
                lines = history_lines(store(), machine, now)
        except Exception:  # the database is a bonus: no history shown, the cards still are
            return
        with contextlib.suppress(RuntimeError):  # the app is shutting down
            self.app.call_from_thread(self._show_checks, lines)

    def _show_checks(self, lines: Mapping[str, str]) -> None:
        with contextlib.suppress(NoMatches):
            self.query_one(CheckHistory).set_lines(lines)

    def refresh_views(
        self,
        views: list[SyncView],
        finished: list[FinishedSync],
        *,
        machine: Machine | None,
        rates: Mapping[str, Rate],
        slow: dict[str, tuple[str, ...]],
        boosts: Mapping[str, BoostRecord],
    ) -> None:
        cards = self.query_one("#cards", Vertical)
        present = {c.array: c for c in cards.query(SyncCard)}
        wanted = {v.array for v in views}
        for name, card in present.items():
            if name not in wanted:
                card.remove()
        for v in views:
            line = members_items(v.array, machine, rates, slow.get(v.array, ()))
            limits = sync_limits(
                v,
                machine.array(v.array) if machine else None,
                boosts.get(v.array),
                raid_lv(machine, v.array),
            )
            existing = present.get(v.array)
            if existing is None:
                card = SyncCard(v.array)
                cards.mount(card)
                card.call_after_refresh(card.show, v, line, limits)
            else:
                existing.show(v, line, limits)
        idle = self.query_one("#idle", Static)
        idle.display = not views
        if not views:
            idle.update(idle_text(machine))
        table = self.query_one("#finished", DataTable)
        if table.row_count != len(finished):
            table.clear()
            for f in reversed(finished):
                outcome = f.outcome_text
                table.add_row(
                    f.array,
                    f.action,
                    outcome,
                    duration(f.duration_s) + ("" if f.seen_from_start else "+"),
                    speed(f.average_kib_s),
                    "" if f.mismatch_cnt is None else str(f.mismatch_cnt),
                )


class EventLog(RichLog):
    """Timestamped events (degraded, faulty member, spare takeover, sync start/end)."""

    DEFAULT_CSS = "EventLog { height: 1fr; }"

    def __init__(self, **kwargs: object) -> None:
        super().__init__(markup=True, wrap=True, highlight=False, **kwargs)  # type: ignore[arg-type]
        self.entries: list[str] = []  # plain text of every event written, oldest first
        self._seen = 0  # how many of the App's event_log are written

    EMPTY = "[dim]No events yet: array degraded, member faulty, spare taking over, sync started or ended appear here as they happen.[/]"

    def on_mount(self) -> None:
        if not self.entries:
            self.write(self.EMPTY)
        if hasattr(type(self.app), "event_log"):  # bound to the shown host's (RaidmanApp)
            self.watch(self.app, "event_log", self._logged)

    def _logged(self, log: tuple[tuple[str, ArrayEvent], ...]) -> None:
        """The host's events since it was opened: those not written yet are added."""
        new = log[self._seen :]
        self._seen = len(log)
        for stamp, e in new:
            self.add_events([e], stamp)

    def add_events(self, events: list[ArrayEvent], clock_text: str) -> None:
        if events and not self.entries:
            self.clear()  # the "no events yet" line goes
        for e in events:
            colour = "red" if e.severity == "warning" else "cyan"
            self.entries.append(f"{clock_text} {e.message}")
            self.write(f"[dim]{clock_text}[/] [{colour}]{e.message}[/]")
