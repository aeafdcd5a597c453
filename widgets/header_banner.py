"""The header: who/what we look at, the read-only reason, and a banner for degraded/syncing arrays;
plus the notes bar (what the probe could not do)."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from rich.console import Group
from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import Static

from app.model.devices import Machine, ProbeNote
from app.rollup import Rollup, degraded_item, degraded_part, rollup, sync_item, syncing_part
from widgets.render_cache import LineDiffStatic


def banner_text(
    machine: Machine | None,
    *,
    expanded: bool = False,
    stalled: Mapping[str, float] | None = None,
    width: int | None = None,
    initial: Collection[str] = (),
    waits: Mapping[str, tuple[str, str]] | None = None,
) -> Text | None:
    """Degraded arrays in red, then syncing arrays in yellow; None if calm. One line (a roll-up
    when more than a couple of arrays are in trouble) unless ``expanded``: one line per array.

    ``width``: the cells the line has. When the full words do not fit, shorter ones are tried
    (labels, then the level and punctuation) so a sync's speed and ETA stay on an 80-column
    screen: the words are shortened, never the numbers."""
    r = rollup(machine, initial)
    if r.calm:
        return None
    if expanded:
        return _banner(r, expanded=True, stalled=stalled, labels="long", short=False, waits=waits)
    tiers = (("long", False), ("long", True), ("word", True), ("mark", True))
    t = Text()
    for labels, short in tiers:
        t = _banner(r, expanded=False, stalled=stalled, labels=labels, short=short, waits=waits)
        if width is None or t.cell_len <= width:
            break
    return t


def _banner(
    r: Rollup,
    *,
    expanded: bool,
    stalled: Mapping[str, float] | None,
    labels: str,
    short: bool,
    waits: Mapping[str, tuple[str, str]] | None = None,
) -> Text:
    t = Text()
    gap = "  " if labels == "long" else " "
    words = {"long": (" ✖ DEGRADED: ", " ⟳ SYNCING: "), "word": ("✖ DEGRADED", "⟳ SYNCING")}
    degraded_label, syncing_label = words.get(labels, ("✖", "⟳"))
    if r.degraded:
        t.append(degraded_label, "bold white on red")
        if expanded:
            for a in r.degraded:
                t.append(f"\n   {degraded_item(a)}", "bold red")
            t.append("\n")
        else:
            t.append(
                " " + degraded_part(r, short=short) + (" " if labels == "long" else ""), "bold red"
            )
    if r.syncing:
        if t and not expanded:
            t.append(gap)
        t.append(syncing_label, "bold black on yellow")
        if expanded:
            for a in r.syncing:
                item = sync_item(a, stalled, initial=a.name in r.initial, waits=waits)
                t.append(f"\n   {item}", "bold yellow")
        else:
            t.append(
                " " + syncing_part(r, stalled=stalled, short=short, waits=waits), "bold yellow"
            )
    return t


class HeaderBanner(LineDiffStatic):
    """Line 1: raidman · host · kernel · backend · read-only reason. Line 2 (only when needed):
    the degraded/syncing banner, one line however many arrays; a click lists every array in
    trouble (click again to fold it) and posts ``WorstSelected`` so the App can go there.
    A ``LineDiffStatic``: a sync's figures moving each second repaint the banner's line, not
    the title above it."""

    DEFAULT_CSS = """
    HeaderBanner { height: auto; max-height: 12; background: $panel; padding: 0 1;
                   text-wrap: nowrap; text-overflow: ellipsis; }
    HeaderBanner.-expanded { text-wrap: wrap; }
    """

    class WorstSelected(Message):
        """The banner was clicked: ``array`` is the one to look at first."""

        def __init__(self, array: str) -> None:
            super().__init__()
            self.array = array

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.expanded = False
        self.backend_name = ""
        self.read_only_reason: str | None = None
        self.machine: Machine | None = None
        self.fleet: str | None = None  # several hosts: the others' trouble (app.fleet)
        self.stalled: Mapping[str, float] = {}  # array -> seconds its sync has not moved
        self.initial: frozenset[str] = frozenset()  # arrays raidman created (initial builds)
        # array -> (what its waiting sync waits for, the narrow words): app.sync.waiting
        self.waits: Mapping[str, tuple[str, str]] = {}
        self._title_key: tuple[object, ...] | None = None  # what the title lines were made for
        self._title_made: list[Text] = []
        # (title lines, banner, expanded) as last shown; its text; how many lines it had
        self._shown: tuple[list[Text], Text | None, bool] | None = None
        self._shown_plain = ""
        self._shown_lines = 0

    def set_stalled(self, stalled: Mapping[str, float]) -> None:
        """The syncs with no progress for a while (``SyncView.stalled``), said in the banner."""
        if dict(stalled) != dict(self.stalled):
            self.stalled = dict(stalled)
            self._redraw()

    def set_waits(self, waits: Mapping[str, tuple[str, str]]) -> None:
        """The syncs md holds back and what they wait for (``SyncView.wait``)."""
        if dict(waits) != dict(self.waits):
            self.waits = dict(waits)
            self._redraw()

    def set_initial(self, names: frozenset[str]) -> None:
        """Arrays raidman created this session: a RAID-5's initial build is no DEGRADED."""
        if names != self.initial:
            self.initial = names
            self._redraw()

    def set_backend(self, name: str, read_only_reason: str | None) -> None:
        self.backend_name = name
        self.read_only_reason = read_only_reason
        self._redraw()

    def set_read_only(self, reason: str | None) -> None:
        """The read-only reason as the last probe found it (an ssh host gone: "not reached")."""
        if reason != self.read_only_reason:
            self.read_only_reason = reason
            self._redraw()

    def set_fleet(self, text: str | None) -> None:
        self.fleet = text
        self._redraw()

    def set_machine(self, machine: Machine | None) -> None:
        self.machine = machine
        self._redraw()

    def title_text(self, width: int | None = None) -> Text:
        """Line 1: raidman · host · kernel · backend · read-only reason (· other hosts). Where
        ``width`` is too narrow the kernel goes first, then the backend's " @ host" (the host
        is named just before), then the read-only reason moves to a line of its own: it is
        never cut ("read-only: nosuchhost not reac…")."""
        tiers = ((True, True, False), (False, True, False), (False, False, False))
        t = Text()
        for kernel, at_host, own_line in (*tiers, (False, False, True)):
            t = self._title(kernel=kernel, at_host=at_host, own_line=own_line)
            if width is None or own_line or t.cell_len <= width:
                break
        return t

    def _title(self, *, kernel: bool, at_host: bool, own_line: bool) -> Text:
        t = Text("raidman", "bold")
        m = self.machine
        if m is not None:
            t.append("  ")
            t.append(m.host, "bold cyan")
            if kernel:
                t.append(f"  {m.kernel}", "bright_black")
        if self.backend_name:
            name = self.backend_name
            if not at_host and m is not None and name.endswith(f" @ {m.host}"):
                name = name.removesuffix(f" @ {m.host}")
            t.append(f"  [{name}]", "magenta")
        if self.read_only_reason:
            t.append("\n" if own_line else "  ")
            t.append(f" read-only: {self.read_only_reason} ", "bold black on rgb(175,135,0)")
        if self.fleet:
            t.append(f"  {self.fleet}", "bold red")
        return t

    @property
    def shown_text(self) -> str:
        """The header's text as last drawn (its lines, without styles)."""
        return self._shown_plain

    def _title_lines(self, width: int | None) -> list[Text]:
        """``title_text(width)`` cut into its lines, made again only when what it shows moves
        (the host, the kernel, the backend, the read-only reason, the other hosts, the width):
        a sync's figures move the banner each second, never the title (issue 44)."""
        m = self.machine
        key = (
            width,
            m.host if m is not None else None,
            m.kernel if m is not None else None,
            self.backend_name,
            self.read_only_reason,
            self.fleet,
        )
        if key != self._title_key:
            self._title_key = key
            self._title_made = list(self.title_text(width).split("\n"))
        return self._title_made

    def on_resize(self, event: events.Resize) -> None:
        self._redraw()  # the banner's words depend on the width it has

    def on_click(self, event: events.Click) -> None:
        r = rollup(self.machine, self.initial)
        if r.calm:
            return
        self.expanded = not self.expanded
        self.set_class(self.expanded, "-expanded")
        self._redraw()
        if r.worst is not None:
            self.post_message(self.WorstSelected(r.worst))

    def _redraw(self) -> None:
        width = self.content_region.width or None
        title = self._title_lines(width)
        b = banner_text(
            self.machine,
            expanded=self.expanded,
            stalled=self.stalled,
            width=width,
            initial=self.initial,
            waits=self.waits,
        )
        shown = (title, b, self.expanded)
        last = self._shown
        if last is not None and last[0] is title and last[1] == b and last[2] == self.expanded:
            return  # an unchanged update would still cost a layout pass every second
        self._shown = shown
        lines = [*title, *(b.split("\n") if b is not None else ())]
        for line in lines[len(title) :]:  # in the title's style, as the lines below it
            line.style = title[0].style
        self._shown_plain = "\n".join(line.plain for line in lines)
        # Same number of lines (a percentage moved): repaint only the lines that changed (a
        # line diff: the title line stays as it is), no screen re-layout.
        self.update(
            self._content_of(lines),
            layout=last is None or len(lines) != self._shown_lines,
        )
        self._shown_lines = len(lines)

    def _content_of(self, lines: list[Text]) -> Text | Group:
        """Folded, the header as a ``Group`` of its lines (each cut with an ellipsis, as the
        CSS says): a sync's figures moving re-render the banner's line alone, not the title
        (``LineDiffStatic`` keeps a line whose text did not move). Unfolded, the text as is."""
        if self.expanded:
            return Text("\n").join(lines)
        for line in lines:
            line.end = "\n"
            line.no_wrap = True
            line.overflow = "ellipsis"
        return Group(Group(*lines))  # one part of lines: each line is kept or rendered


def notes_text(notes: tuple[ProbeNote, ...]) -> Text:
    t = Text()
    for i, n in enumerate(notes):
        if i:
            t.append("\n")
        colour = {"error": "red", "warning": "yellow"}.get(n.severity, "bright_black")
        t.append("⚠ " if n.severity != "info" else "ℹ ", colour)
        t.append(f"{n.source}: ", f"bold {colour}")
        t.append(n.message)
    return t


class NotesBar(Static):
    """What the probe could not do (missing tools, permission denied); hidden when there is none."""

    DEFAULT_CSS = """
    NotesBar { height: auto; max-height: 4; padding: 0 1; background: $boost; display: none; }
    NotesBar.-has-notes { display: block; }
    """

    def set_notes(self, notes: tuple[ProbeNote, ...]) -> None:
        if notes == getattr(self, "_notes", None):
            return
        self._notes = notes
        self.set_class(bool(notes), "-has-notes")
        self.update(notes_text(notes))
