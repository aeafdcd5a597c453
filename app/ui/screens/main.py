"""The main screen: header + banner, the stack tree (left), tabbed panes (right), notes, footer."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import ClassVar

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Log, TabbedContent, TabPane, Tabs

from app.backend import Backend
from app.escape import escape_controls
from app.fleet import HostStatus, others_line
from app.model.devices import Machine, MdArray
from app.plans.superblocks import Superblocks
from app.rollup import is_initial_build
from app.rules.finding import Finding, badges
from app.session import SessionView
from app.ui.screens.main_actions import ACTION_BINDINGS, MainActions
from widgets.banded_compositor import BandedCompositor
from widgets.device_detail import DeviceDetail
from widgets.findings import FindingsPane, FindingsView
from widgets.header_banner import HeaderBanner, NotesBar
from widgets.keys_footer import KeysFooter
from widgets.live_pane import LivePane
from widgets.shown import shown
from widgets.storage_tree import StorageTree
from widgets.sync_pane import EventLog, SyncPane
from widgets.text_wrap import fold_lines
from widgets.tree_spec import disk_marks
from widgets.wear_pane import WearPane


class MdstatView(Vertical):
    """The raw /proc/mdstat of the last probe (``Machine.mdstat``). A ``Log``: only the lines on
    screen are rendered (on a machine of 250 arrays mdstat has ~1,000 lines). Lines longer than
    the tab are folded (``widgets.text_wrap``), again when its width changes."""

    DEFAULT_CSS = """
    MdstatView { padding: 0 1; }
    MdstatView > Log { height: 1fr; background: transparent; scrollbar-size-vertical: 1; }
    """

    def compose(self) -> ComposeResult:
        body = Log(id="mdstat-body", auto_scroll=False)
        body.can_focus = False
        body.write("probing…")
        yield body

    def on_mount(self) -> None:
        # Mounted after the first probe (an inactive tab): show what the App already has.
        self.set_machine(getattr(self.app, "machine", None))
        if hasattr(type(self.app), "live"):  # each sample, while shown: read it again
            self.watch(self.app, "live", self._sampled, init=False)

    def _sampled(self, _live: object) -> None:
        if shown(self):
            self._read_mdstat(getattr(self.app, "backend"))  # noqa: B009

    @work(thread=True, exclusive=True, group="mdstat", exit_on_error=False, description="mdstat")
    def _read_mdstat(self, backend: Backend) -> None:
        """/proc/mdstat read again while its tab is shown (the probe reads it every 10 s; the
        banner follows the 1 Hz sample: the tab lagged it by 2 %)."""
        text = backend.read_text("/proc/mdstat")
        if text is not None:  # as the probe's Machine.mdstat is: a capture's ESC shown as \x1b
            text = escape_controls(text, keep_newlines=True, keep_tabs=True)
        with contextlib.suppress(RuntimeError):  # the app is shutting down
            self.app.call_from_thread(self.set_text, text)

    _text: str | int | None = 0  # what is shown (0: nothing yet)

    def set_text(self, text: str | None) -> None:
        """A fresh read of /proc/mdstat (each sample while the tab is shown), so the tab does
        not lag the banner by up to a probe interval."""
        if text is not None and text != self._text:
            self._text = text
            self._show(text.rstrip("\n"))

    def on_show(self) -> None:
        if self._hidden_machine is not None:  # what came while the tab was hidden
            machine, self._hidden_machine = self._hidden_machine, None
            self.set_machine(machine)

    _hidden_machine: Machine | None = None

    def set_machine(self, machine: Machine | None) -> None:
        if machine is not None and self._text != 0 and not self.display_visible:
            # a hidden tab: a probe's mdstat (1,000 lines on big) is written when it is shown,
            # not every 10 s for nobody (each write is a Log re-layout)
            self._hidden_machine = machine
            return
        text = None if machine is None else machine.mdstat
        if machine is not None and text == self._text:
            return  # unchanged since the last probe: no redraw
        self._text = text
        if machine is None:
            shown = "probing…"
        elif machine.mdstat is None:
            shown = "/proc/mdstat not available (no md driver loaded?)"
        else:
            shown = machine.mdstat.rstrip("\n")
        self._show(shown)

    @property
    def display_visible(self) -> bool:
        """Shown: it and every container above it displayed (an inactive tab is not)."""
        return all(w.display for w in self.ancestors_with_self if isinstance(w, Widget))

    _shown: str = ""  # the text shown, before folding
    _folded_at = 0  # the width it was folded for

    def _show(self, shown: str) -> None:
        body = self.query_one("#mdstat-body", Log)
        self._shown = shown
        width = _fold_width(body)
        self._folded_at = width
        y = body.scroll_y
        body.clear()
        # folded at the tab's width: the recovery line keeps its finish= and speed= on screen
        body.write("\n".join(fold_lines(shown, width)))
        body.scroll_to(y=y, animate=False)  # a new probe keeps where the admin scrolled to

    def on_resize(self) -> None:
        width = _fold_width(self.query_one("#mdstat-body", Log))
        if self._shown and width != self._folded_at:
            self._show(self._shown)


def _fold_width(body: Log) -> int:
    """The columns a line of the Log has: its width less the scrollbar's (kept free whether or
    not the scrollbar shows, so a scrollbar appearing does not fold again)."""
    return max(0, body.size.width - 1)


PaneFactory = Callable[[], Widget]

# The right-hand panes, in tab order: (title, id, factory). Add a pane with one line here
# (see app.ui.app's docstring). Each binds to the App's state itself; this screen binds the
# banner, notes, tree, Details and mdstat.
DETAIL_PANES: list[tuple[str, str, PaneFactory]] = [
    ("Details", "details", lambda: DeviceDetail(id="detail")),
    ("Sync", "sync", lambda: SyncPane(id="sync-pane")),
    ("Findings", "findings", lambda: FindingsView(id="findings-view")),
    ("Wear", "wear", lambda: WearPane(id="wear-pane")),
    ("Events", "events", lambda: EventLog(id="event-log")),
    ("mdstat", "mdstat", lambda: MdstatView(id="mdstat")),
    ("Live", "live", lambda: LivePane(id="live-pane")),
]
# Below this width the side panes get at least 40 columns (app.tcss: MainScreen.-narrow).
NARROW_WIDTH = 100
# Below this width the tab bar uses the short names: the seven full names need 53 columns of
# the side panes, which they get from 130 columns on
SHORT_TITLES_BELOW = 130
SHORT_TITLES = {"details": "Dev", "findings": "Find", "events": "Ev", "mdstat": "md"}
# Below this width these tabs take the whole width while active (the tree collapses to nothing:
# a Sync card at 38 columns cut its title and wrapped its limits over three rows). The tree comes
# back on another tab, on `esc` or when the focus reaches it (tab / shift+tab).
FULL_WIDTH_BELOW = 120
FULL_WIDTH_TABS = frozenset({"sync", "events", "mdstat", "live"})

# The footer at 80 columns: short labels, and which keys stay when not all fit (higher stays
# longer; negative: left out, as the tab bar names the tabs). `?` lists every key.
FOOTER_SHORT = {
    "create_array": "New",
    "sync_actions": "Tune",
    "boost": "Boost",
    "audit_log": "Audit",
    "jump": "Link",
    "clear_filter": "Clear",
}
FOOTER_PRIORITY = {
    "quit": 100,
    "help": 100,
    "create_array": 90,
    "member_actions": 90,
    "sync_actions": 90,
    "boost": 90,
    "audit_log": 90,
    "hosts": 95,  # several hosts only: back to the hosts view
    "filter": 60,
    "jump": 55,
    "back": 85,  # only after a jump: where backspace goes back to must be said
    "refresh": 40,
    "clear_filter": 30,
    "show_tree": 95,
    "show_tab": -1,
}


def _named(a: MdArray, name: str) -> bool:
    """``a`` is the array a create plan named ``name`` (kernel name, or its --name)."""
    return a.name == name or (a.array_name or "").rsplit(":", 1)[-1] == name


class MainScreen(MainActions):
    # Screen declares it "ClassVar[...] | None" (an instance variable to mypy): no ClassVar here
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_WIDTH, "-wide")]  # noqa: RUF012
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d", "show_tab('details')", "Details"),
        Binding("s", "show_tab('sync')", "Sync"),
        Binding("f", "show_tab('findings')", "Findings"),
        Binding("w", "show_tab('wear')", "Wear"),
        Binding("e", "show_tab('events')", "Events"),
        Binding("m", "show_tab('mdstat')", "mdstat"),
        Binding("l", "show_tab('live')", "Live I/O and kernel log", show=False),
        Binding("escape", "show_tree", "Tree"),
        *ACTION_BINDINGS,  # n a t v b (and q, r): what this screen opens (main_actions)
    ]
    # the admin asked for the tree (focused it, or chose a tab that shows it) since the last
    # switch to a full-width tab
    tree_wanted: reactive[bool] = reactive(True, init=False)

    def __init__(self) -> None:
        super().__init__()
        # each second's update renders only the rows that moved (banner, a tree line, the sync
        # lines), not every widget under the rectangle around them
        self._compositor = BandedCompositor()

    def compose(self) -> ComposeResult:
        yield HeaderBanner(id="header")
        with Horizontal(id="body"):
            yield StorageTree(id="tree")
            with TabbedContent(id="side"):
                for title, pane_id, factory in DETAIL_PANES:
                    with TabPane(title, id=pane_id):
                        yield factory()
        yield NotesBar(id="notes")
        yield KeysFooter(short=FOOTER_SHORT, priorities=FOOTER_PRIORITY)

    def on_mount(self) -> None:
        app = self.app
        backend = getattr(app, "backend", None)
        if backend is not None:
            host = getattr(app, "host", None)  # a machine over ssh: the banner names it
            name = f"{backend.name} @ {host}" if host else backend.name
            self.query_one(HeaderBanner).set_backend(name, backend.read_only_reason)
        self.query_one(StorageTree).focus()
        if hasattr(app, "machine") and hasattr(app, "selected"):
            # bound to the App's state: shown now (whatever arrived before this screen was
            # composed) and at every change
            self.watch(app, "view", self._show_view)
            self.watch(app, "machine", self._show_machine)
            self.watch(app, "selected", self._show_selected)
            self.watch(app, "findings", self._show_findings)
            if hasattr(app, "superblocks"):  # an audit that landed before this screen too
                self.watch(app, "superblocks", self._show_superblocks)
        if getattr(app, "hosts", None):  # several hosts: the others' trouble in the banner
            self.watch(app, "fleet", self._show_fleet)

    def on_resize(self, event: events.Resize) -> None:
        self._fit_panes()
        # a hidden Findings table takes the width it will have once laid out (shown at once)
        self.call_after_refresh(self.query_one(FindingsPane).fit_hidden)
        narrow = event.size.width < SHORT_TITLES_BELOW
        if narrow == getattr(self, "_narrow", None):
            return
        self._narrow = narrow
        tabs = self.query_one(TabbedContent)
        for title, pane_id, _ in DETAIL_PANES:
            tabs.get_tab(pane_id).label = SHORT_TITLES.get(pane_id, title) if narrow else title

    # ---- the tree collapsed while a full-width tab is active on a narrow terminal ----------
    @property
    def pane_full(self) -> bool:
        return self.has_class("-pane-full")

    def _fit_panes(self) -> None:
        tabs = self.query_one(TabbedContent)
        full = (
            self.size.width < FULL_WIDTH_BELOW
            and tabs.active in FULL_WIDTH_TABS
            and not self.tree_wanted
        )
        if full == self.pane_full:
            return
        tree = self.query_one(StorageTree)
        if full and self.focused is tree:
            tabs.query_one(Tabs).focus()  # keys must not go to a tree nobody sees
        self.set_class(full, "-pane-full")
        self.refresh_bindings()  # `esc Tree` in the footer only while the tree is collapsed

    def watch_tree_wanted(self) -> None:
        self._fit_panes()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.tree_wanted = event.pane.id not in FULL_WIDTH_TABS
        self._fit_panes()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if isinstance(event.widget, StorageTree):  # tab / shift+tab reached the collapsed tree
            self.tree_wanted = True

    def on_header_banner_worst_selected(self, event: HeaderBanner.WorstSelected) -> None:
        # not stopped: the App moves the tree cursor to the array; the tree shows where it went
        self.tree_wanted = True

    def action_show_tree(self) -> None:
        self.tree_wanted = True
        self.query_one(StorageTree).focus()

    def reveal_tree(self) -> None:
        """A jump (palette, Sync card, finding) moved the tree cursor: show where it went."""
        self.tree_wanted = True

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.app._exit:
            return False  # quitting: keys typed ahead open nothing (see RaidmanApp.check_action)
        if action == "show_tree":  # Esc brings the tree back, and the focus to it (tab keys)
            return self.pane_full or not isinstance(self.focused, StorageTree)
        return True

    initial_builds: frozenset[str] = frozenset()  # create plans' array names, while building

    def note_initial_build(self, name: str) -> None:
        """A create plan made array ``name`` (its --name or kernel name): while its initial
        build runs the banner says so instead of DEGRADED (app.rollup.is_initial_build)."""
        self.initial_builds = self.initial_builds | {name}
        self.query_one(HeaderBanner).set_initial(self.initial_builds)

    def _show_machine(self, machine: Machine | None) -> None:
        if machine is not None and self.initial_builds:
            # a name stays while its array builds, or until a probe shows the array at all
            still = frozenset(
                n
                for n in self.initial_builds
                if any(is_initial_build(a, {n}) for a in machine.arrays)
                or not any(_named(a, n) for a in machine.arrays)
            )
            if still != self.initial_builds:
                self.initial_builds = still
                self.query_one(HeaderBanner).set_initial(still)
        self.query_one(HeaderBanner).set_machine(machine)
        if machine is None:
            return
        self.query_one(NotesBar).set_notes(machine.notes)
        self.query_one(StorageTree).update_machine(machine)
        self.query_one(MdstatView).set_machine(machine)
        self._show_selected(getattr(self.app, "selected", None))

    def _show_view(self, view: SessionView) -> None:
        banner = self.query_one(HeaderBanner)
        banner.set_stalled({v.array: v.still_s for v in view.syncs if v.stalled})
        banner.set_waits(
            {v.array: (v.wait.text(), v.wait.short_text()) for v in view.syncs if v.wait}
        )

    def _show_findings(self, findings: tuple[Finding, ...]) -> None:
        tree = self.query_one(StorageTree)
        tree.set_marks(disk_marks(findings))  # "self-test✖" on a disk whose last one failed
        tree.set_badges(badges(findings))

    def _show_superblocks(self, superblocks: Superblocks | None) -> None:
        if superblocks is not None:
            self.query_one(DeviceDetail).set_superblocks(superblocks)
            self.query_one(StorageTree).set_superblocks(superblocks)  # carriers marked

    def _show_fleet(self, statuses: tuple[HostStatus, ...]) -> None:
        self.query_one(HeaderBanner).set_fleet(
            others_line(statuses, getattr(self.app, "host", None))
        )

    def _show_selected(self, ref: object) -> None:
        self.query_one(DeviceDetail).show(getattr(self.app, "machine", None), ref)  # type: ignore[arg-type]

    def action_show_tab(self, tab: str) -> None:
        tabs = self.query_one(TabbedContent)
        focused = self.focused
        if focused is not None and tabs in focused.ancestors and not isinstance(focused, Tabs):
            # focus inside the pane being hidden would pull the TabbedContent back to it:
            # hand the focus to the tab bar first
            tabs.query_one(Tabs).focus()
        tabs.active = tab
