"""The raidman Textual App.

``RaidmanApp(backend)`` shows the storage stack of whatever ``app.backend.Backend`` it is given
(Linux, simulated, replay). All backend calls run in thread workers (``exclusive=True``; the
"probe" group never overlaps itself; samples are taken one at a time by the sampler thread,
``app.ui.workers.Sampler``); a backend exception becomes a
notification, never a crash.

Data flow
---------
* ``probe()`` at start, every ``probe_interval`` seconds (10) and on ``r``;
  ``sample()`` every ``sample_interval`` seconds (1), and at once on an md event when the
  backend has events (``app.backend.EventSource``: a worker waits on them; an event while a
  sample is in flight is coalesced into one more sample, ``app.session.SampleGate``).
* The App holds timers and workers only: what probes and samples mean — the merged machine, the
  sync tracker, throughput, boost restores, audit cadence, wear recording — is worked out by one
  ``app.session.Session`` (the same that ``raidman monitor`` runs), which returns an immutable
  ``SessionView`` and the effects the App runs in workers.
* ``RaidmanApp.view`` (reactive) is that ``SessionView``; ``RaidmanApp.machine`` (reactive) is
  ``view.machine`` (the last probe with the last live sample folded in); ``RaidmanApp.live`` is
  ``view.live``; ``RaidmanApp.selected`` (reactive) is the ``NodeRef`` under the tree cursor.
* One ``app.ui.host_view.HostView`` per watched host holds its backend, session, SMART readings,
  findings and polling state; ``RaidmanApp.hostview`` is the one shown (opening a host is
  assigning it). Workers (``app.ui.workers``) take the view they started for and post a
  ``HostResult`` carrying it: ``on_host_result`` drops a stale one in one place.
* Widgets bind to that state (``self.watch(self.app, "view" | "machine" | "selected" |
  "findings" | "event_log" | "wear_request", cb)``); the App posts no messages about it and
  pushes into no pane. ``MainScreen`` binds the header, notes, tree (badges), mdstat and
  Details; the Sync, Findings, Wear and Events panes bind themselves; the Wear pane loads its
  data in its own worker.
* Beside this module: ``fleet.py`` (several hosts), ``workers.py`` (with a boost's restore),
  ``shown_host.py`` (the shown host's fields), ``wear.py`` (the Wear tab's request). What the
  main screen's keys open (wizards, boost, a finding's fix) is the screen's:
  ``app.ui.screens.main_actions``.

Extension points
----------------
* **A new right-hand pane** ("Sync", "Findings", "Wear", "Events", "Log"): add one line to
  ``app.ui.screens.main.DETAIL_PANES``::

      ("Sync", "sync", lambda: SyncPane(id="sync-pane")),

  The widget binds in its ``on_mount`` with ``self.watch(self.app, "view", callback)`` (called
  at once with the current value, then at every probe/sample; ``"selected"`` for the tree
  cursor). It reaches the backend as ``self.app.backend``
  and must call it from its own ``@work(thread=True, exclusive=True, group=...)`` worker.
  ``MainScreen.action_show_tab("sync")`` switches to it (bind a key in ``MainScreen.BINDINGS``).
* **Badges on tree nodes** (audit): set from ``findings`` by ``MainScreen``
  (``StorageTree.set_badges({"sda": "error", ...})``).
* **Command palette**: add a ``textual.command.Provider`` to ``RaidmanApp.COMMANDS``.
* **Going to a device** from anywhere: ``app.go_to("md127")``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from typing import Any, ClassVar

from textual import events
from textual.app import App
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.filter import LineFilter
from textual.reactive import reactive
from textual.widgets import TabbedContent

from app.backend import Backend, EventSource
from app.escape import escape_controls
from app.fleet import HostStatus
from app.hosts import HostAuditLog, host_boost_store
from app.model.devices import Machine
from app.model.live import LiveSample
from app.model.sync_model import SyncForecast
from app.plans.audit_log import AuditLog
from app.plans.superblocks import Superblocks
from app.rules.finding import Finding
from app.session import Effects, Session, SessionView
from app.sync.boost import BoostStore
from app.sync.tracker import ArrayEvent
from app.ui.commands import ActionsProvider, GoToDeviceProvider
from app.ui.fleet import HOST_TIMEOUT_S, HostProbed, HostsWatch, initial_statuses
from app.ui.gc_policy import settle_after_start
from app.ui.hangup import watch_terminal
from app.ui.host_view import (
    AuditDone,
    BoostPlanned,
    BoostRestored,
    FixReady,
    HostResult,
    HostView,
    ProbeDone,
    ProbeFailed,
    SampleDone,
    SampleFailed,
    SmartChanged,
    WearStores,
    WorkerWarning,
)
from app.ui.screens.audit_log import AuditLogScreen
from app.ui.screens.help import HELP_EXTRA, HelpScreen, key_rows
from app.ui.screens.hosts import HostsScreen
from app.ui.screens.main import MainScreen
from app.ui.shown_host import ShownHost
from app.ui.terminal_guard import GUARD
from app.ui.wear import WearFollow
from app.ui.workers import HostWorkers
from widgets.header_banner import HeaderBanner
from widgets.storage_tree import NodeRef, StorageTree
from widgets.wear_source import WearRequest

CLOCK_EVERY_S = 10.0  # the session's clock tick (periodic SMART snapshots, audit cadence)


INTERRUPT_AGAIN_S = 5.0


class RaidmanApp(ShownHost, HostWorkers, WearFollow, App[None]):
    """The storage stack of one machine, as a live tree with details."""

    CSS_PATH = "app.tcss"
    TITLE = "raidman"
    COMMANDS: ClassVar[set[Any]] = App.COMMANDS | {ActionsProvider, GoToDeviceProvider}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),  # r and the wizards' keys: MainScreen (main_actions)
        Binding("L", "audit_log", "Audit log"),
        Binding("H", "hosts", "Hosts"),
        Binding("question_mark", "help", "Help"),
        # a terminal's interrupt quits, from any screen (Textual's own said "press q"; an
        # input field's copy kept it): while a plan runs it asks first
        Binding("ctrl+c", "interrupt", "Quit", show=False, priority=True),
    ]
    # app-wide letters that belong to the main screen: inside a wizard, preview, dialog or the
    # help they must not fire (no quitting from a half-filled form, no audit log over a plan)
    MAIN_SCREEN_ACTIONS: ClassVar[frozenset[str]] = frozenset(
        {"quit", "refresh", "audit_log", "hosts"}
    )

    # State, not paint: repaint=False, or each set (every sample) repaints the whole screen
    # (App.refresh -> Screen.refresh: a full compositor update instead of the lines that moved)
    view: reactive[SessionView] = reactive(
        SessionView, always_update=True, init=False, repaint=False
    )
    machine: reactive[Machine | None] = reactive(
        None, always_update=True, init=False, repaint=False
    )
    live: reactive[LiveSample | None] = reactive(
        None, always_update=True, init=False, repaint=False
    )
    selected: reactive[NodeRef | None] = reactive(None, init=False, repaint=False)
    fleet: reactive[tuple[HostStatus, ...]] = reactive(
        (), always_update=True, init=False, repaint=False
    )
    # the shown host's findings (worst first in the pane), its md events (clock text, event),
    # and what the Wear tab is to show (set on a cursor move, and at each sample of a sync)
    findings: reactive[tuple[Finding, ...]] = reactive(
        (), always_update=True, init=False, repaint=False
    )
    event_log: reactive[tuple[tuple[str, ArrayEvent], ...]] = reactive(
        (), init=False, repaint=False
    )
    wear_request: reactive[WearRequest | None] = reactive(
        None, always_update=True, init=False, repaint=False
    )
    superblocks: reactive[Superblocks | None] = reactive(None, init=False, repaint=False)

    def __init__(
        self,
        backend: Backend,
        *,
        host: str | None = None,
        hosts: Sequence[tuple[str, Backend]] = (),
        probe_interval: float = 10.0,
        sample_interval: float = 1.0,
        host_timeout: float = HOST_TIMEOUT_S,
        tune_gc: bool = False,
    ) -> None:
        """``tune_gc``: the process is this app's alone (the CLI): after the first frame, set
        the garbage collector up for a long watch (``app.ui.gc_policy``). ``host``: the machine
        ``backend`` reaches over ssh (plans show it, the audit log records it). ``hosts``:
        several machines (host, backend): the top level is the hosts view, and ``backend`` the
        first of them until a host is opened."""
        super().__init__()
        self.tune_gc = tune_gc
        self.hosts_watch = HostsWatch(self, dict(hosts) if len(hosts) > 1 else {}, host_timeout)
        self.stores = WearStores()  # every host's sync records, and the lock their writers take
        self.probe_interval = probe_interval
        self.sample_interval = sample_interval
        self.probe_count = 0
        self.audit_count = 0  # audits finished (tests wait on it)
        if self.hosts:  # none open: the hosts view (a view of no host, never polled)
            backend, host = next(iter(self.hosts.values())), None
            self.fleet = initial_statuses(self.hosts)
        boosts = BoostStore() if host is None or hosts else host_boost_store(host)
        self.hostview = HostView(
            host,
            backend,
            Session(
                store=self.stores.open(host) if sample_interval > 0 and not self.hosts else None,
                boosts=boosts,
            ),
            boosts,
            self.stores,
        )
        self._hosts_home = self.hostview

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self._exit:
            # quitting: keys typed ahead (``q`` then the next shell command) open nothing; a
            # wizard pushed while the App tore down its screens crashed on its own fields
            return False
        if action == "quit" and isinstance(self.screen, HostsScreen):
            return True
        if action in self.MAIN_SCREEN_ACTIONS and not isinstance(self.screen, MainScreen):
            return False
        if action == "hosts" and not self.hosts:
            return False
        return not (action == "help" and isinstance(self.screen, HelpScreen))

    # ---- life cycle ------------------------------------------------------------------
    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then the terminal guard (app.ui.terminal_guard): no control
        character any widget renders reaches the terminal."""
        return [*super().get_line_filters(), GUARD]

    def get_default_screen(self) -> MainScreen | HostsScreen:
        return HostsScreen() if self.hosts else MainScreen()

    @property
    def idle(self) -> bool:
        """Several hosts and none open: the hosts view's own probes are all that runs."""
        return bool(self.hosts) and self.host is None

    def on_mount(self) -> None:
        self.sub_title = self.host or self.backend.name
        watch_terminal(self)
        if self.hosts:
            self.sub_title = f"{len(self.hosts)} hosts"
            self.refresh_fleet()
            if self.probe_interval > 0:
                self.set_interval(self.probe_interval, self.refresh_fleet)
            self.set_interval(1.0, self.hosts_watch.deadlines)
        self.refresh_probe()
        if self.probe_interval > 0:
            self.set_interval(self.probe_interval, self.refresh_probe)
        if self.sample_interval > 0:
            self.set_interval(self.sample_interval, self.refresh_sample)
            self.set_interval(CLOCK_EVERY_S, self._clock_tick)
            if isinstance(self.backend, EventSource) and not self.hosts:
                self._event_worker(self.backend)
        for note in self.boosts.notes:
            self.notify(note, title="boost", severity="warning", timeout=10)
        for note in self.stores.notes():
            self.notify(note, title="wear database", severity="warning", timeout=10)

    @property
    def main(self) -> MainScreen:
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        raise LookupError("main screen not mounted")

    @property
    def storage_tree(self) -> StorageTree:
        return self.main.query_one(StorageTree)

    def go_to(self, name: str) -> bool:
        """Put the tree cursor on a device (kernel name, VG name or node key); ``backspace`` on
        the tree goes back to where it was."""
        moved = self.storage_tree.go_to(name, remember=True)
        with contextlib.suppress(LookupError, NoMatches):  # no main screen (yet)
            self.main.reveal_tree()  # a collapsed tree (narrow terminal) shows where it went
        return moved

    def show_tab(self, tab: str) -> None:
        self.main.query_one(TabbedContent).active = tab

    # ---- polling -----------------------------------------------------------------------
    def action_refresh(self) -> None:
        """``r``: probe again now; a toast says so, and another what the probe found."""
        self.hostview.probe_asked = True
        if self.hostview.probe_busy:
            self.notify("a probe is running: its result is shown when it lands", timeout=3)
        else:
            self.notify("probing again…", timeout=2)
        self.refresh_probe()

    def refresh_probe(self) -> None:
        view = self.hostview
        if view.probe_busy or self.idle:
            return
        if view.host is not None and view.host in self.hosts_watch.busy:
            view.probe_wanted = True  # one probe of a host at a time: this one when it lands
            return
        view.probe_busy = True
        if view.host is not None and self.hosts:
            self.hosts_watch.busy[view.host] = time.monotonic()
        self._probe_worker(view)

    def refresh_sample(self, *, event: bool = False) -> None:
        if self.probed is None or self.idle:
            return
        if self.hostview.sampling.want(event=event):
            self._sample_worker(self.hostview)

    def on_host_result(self, message: HostResult) -> None:
        """Every worker's result. One whose host is no longer shown (closed, or another
        opened) is dropped here, but for what its own session must still hear."""
        view, result = message.view, message.result
        stale = view is not self.hostview or self.idle
        try:
            if isinstance(result, AuditDone):
                self.hosts_watch.audited_host(view.backend, result.found)
            if isinstance(result, WorkerWarning):
                self.notify(result.text, title=result.title, severity="warning")
            elif isinstance(result, BoostRestored):
                self._restored(view, result)
            elif stale:
                if isinstance(result, AuditDone):
                    view.session.audit_finished(view.backend.now())
            elif isinstance(result, ProbeDone | ProbeFailed):
                self._probe_landed(view, result)
            elif isinstance(result, SampleDone | SampleFailed):
                self._sample_landed(view, result)
            elif isinstance(result, AuditDone):
                self._audit_landed(view, result)
            elif isinstance(result, SmartChanged):
                self.audit_again()
            elif isinstance(result, BoostPlanned | FixReady):
                with contextlib.suppress(LookupError):  # no main screen: nothing to open over
                    if isinstance(result, BoostPlanned):
                        self.main.boost_planned(view, result)
                    else:
                        self.main.fix_ready(view, result)
        except Exception as e:  # never a crash from a result: a visible notification instead
            self.log.error(f"{message!r} failed: {e!r}")
            self.notify(f"internal error: {e}", title="raidman", severity="error", timeout=10)

    def _probe_landed(self, view: HostView, result: ProbeDone | ProbeFailed) -> None:
        view.probe_busy = False
        asked, view.probe_asked = view.probe_asked, False
        with contextlib.suppress(LookupError, NoMatches):  # no main screen (yet)
            self.main.query_one(HeaderBanner).set_read_only(result.read_only)
        if isinstance(result, ProbeFailed):
            self.notify(
                f"probe failed: {escape_controls(str(result.error))}",
                title="backend error",
                severity="error",
                timeout=8,
                markup=False,
            )
            return
        self.probe_count += 1
        if asked:
            m = result.machine
            found = f"{len(m.disks)} disk(s), {len(m.arrays)} array(s)"
            self.notify(f"probed again: {found}", title="refresh", timeout=3)
        if self.probe_count == 1 and self.tune_gc:
            self.call_after_refresh(settle_after_start)  # see app.ui.gc_policy
        if self.probe_count == 1:
            self.call_after_refresh(self._warm_imports)
        with view.store_lock:  # the session writes the wear database
            effects = view.session.probed(result.machine, view.backend.now())
        self._publish()
        self._run(effects)

    def _sample_landed(self, view: HostView, result: SampleDone | SampleFailed) -> None:
        if view.sampling.done():  # an md event came while it was in flight: sample again
            self._sample_worker(view)
        if isinstance(result, SampleFailed):
            msg = f"live sample failed: {result.error}"
            self.notify(msg, title="backend error", severity="warning")
            return
        view.sample_count += 1
        with view.store_lock:
            effects = view.session.sampled(result.sample)
        self._announce(list(effects.events), result.sample.taken_at)
        self._publish()
        if self.probed is not None and self.machine is not None:
            self._follow_wear()
        self._run(effects)

    def _publish(self) -> None:
        view = self.session.view
        self.view = view
        self.live = view.live
        self.machine = view.machine

    def _clock_tick(self) -> None:
        if self.idle:
            return
        with self.stores.lock:
            effects = self.session.tick(self.backend.now())
        self._run(effects)

    def expect_forecasts(self, forecasts: tuple[SyncForecast, ...]) -> None:
        """A plan's run worker is about to run the step that starts these syncs (asked on the
        UI thread, through ``call_from_thread``): the session's records keep them."""
        with self.stores.lock:
            self.session.expect_forecasts(forecasts, self.backend.now())

    def withdraw_forecasts(self, arrays: tuple[str, ...]) -> None:
        """The step that was to start those syncs failed: their forecasts are dropped."""
        with self.stores.lock:
            self.session.withdraw_forecasts(arrays)

    def _run(self, effects: Effects) -> None:
        """Start what the session asked for, each in its own worker."""
        view = self.hostview
        if effects.reprobe:
            self.refresh_probe()  # the stack changed shape: re-read it now
        if effects.audit and self.probed is not None:
            self._audit_worker(view)
        if effects.smart_reads:
            self._smart_worker(view, effects.smart_reads)
        if not self.backend.read_only_reason:
            for rec in effects.restores:
                self._restore_worker(view, rec, self.audit_log())

    # ---- audit -----------------------------------------------------------------------------
    def audit_again(self) -> None:
        """After a plan ran, or new SMART readings: audit now rather than at the next cadence."""
        if self.probed is not None and self.session.audit_now(self.backend.now()):
            self._audit_worker(self.hostview)

    def _audit_landed(self, view: HostView, result: AuditDone) -> None:
        self.audit_count += 1
        if view.session.audit_finished(view.backend.now()) and self.probed is not None:
            self._audit_worker(view)  # asked for while this one ran
        if result.error is not None:
            self.notify(f"audit failed: {result.error}", title="audit", severity="warning")
        elif result.found is not None:
            view.findings, view.superblocks = result.found, result.superblocks
            self.findings = result.found  # the Findings pane and the tree's badges bind to it
            self.superblocks = result.superblocks  # the Details' member superblocks

    # ---- several hosts -----------------------------------------------------------------------
    def refresh_fleet(self) -> None:
        self.hosts_watch.refresh()

    def on_host_probed(self, message: HostProbed) -> None:
        self.hosts_watch.probed(message)

    def open_host(self, host: str) -> None:
        """Show one host's full view: the main screen driven by its backend and its session
        (kept while the admin looks at other hosts)."""
        if host not in self.hosts or not isinstance(self.screen, HostsScreen):
            return
        self.hostview = self.hosts_watch.view_of(host, self.stores, self.sample_interval)
        self.findings, self.superblocks = self.hostview.findings, self.hostview.superblocks
        self.event_log = ()
        self.selected = None
        self.sub_title = host
        self._publish()
        self.push_screen(MainScreen())
        self.refresh_probe()

    def action_hosts(self) -> None:
        """Back from a host's view to the hosts view."""
        if not self.hosts or not isinstance(self.screen, MainScreen):
            return
        self.pop_screen()
        self.hostview = self._hosts_home
        self.sub_title = f"{len(self.hosts)} hosts"
        self.refresh_fleet()

    def on_key(self, event: events.Key) -> None:
        """H on one machine: the hosts binding is hidden (no hosts view), but the key says why
        nothing happens instead of doing nothing silently."""
        if event.key == "H" and not self.hosts and isinstance(self.screen, MainScreen):
            self.notify(
                "one machine is shown: H lists several hosts when raidman is started with "
                "--host a,b or a hosts file",
                title="hosts",
            )

    def audit_log(self) -> AuditLog:
        """Where a plan run from this view is recorded: locally, and for a host over ssh
        with the host named (and each step also in the host's own syslog)."""
        return AuditLog() if self.host is None else HostAuditLog(self.host, self.backend)

    def action_audit_log(self) -> None:
        self.push_screen(AuditLogScreen())

    _interrupted_at: float | None = None  # the last ctrl+c that asked (while a plan ran)

    def action_interrupt(self) -> None:
        """ctrl+c: quit. While a plan runs, ask: a second ctrl+c within ``INTERRUPT_AGAIN_S``
        quits (the step running then goes on, unwatched; the audit log keeps its start)."""
        running = [s for s in self.screen_stack if getattr(s, "running", False) is True]
        now = time.monotonic()
        again = self._interrupted_at is not None and now - self._interrupted_at < INTERRUPT_AGAIN_S
        if not running or again:
            self.exit()
            return
        self._interrupted_at = now
        self.notify(
            f"A plan is running. Press ctrl+c again within {INTERRUPT_AGAIN_S:g} s to quit "
            "anyway: the step running now goes on without raidman watching it.",
            title="quit?",
            severity="warning",
            timeout=INTERRUPT_AGAIN_S,
        )

    def action_help(self) -> None:
        screen = self.screen
        title = getattr(screen, "TITLE_TEXT", "") or type(screen).__name__.removesuffix("Screen")
        self.push_screen(HelpScreen(title or "raidman", key_rows(screen), HELP_EXTRA))

    # ---- reacting ------------------------------------------------------------------------
    def on_storage_tree_highlighted(self, event: StorageTree.Highlighted) -> None:
        self.selected = event.ref  # MainScreen shows it in Details (bound to ``selected``)
        self._ask_wear(event.ref, follow=False)

    def on_header_banner_worst_selected(self, event: HeaderBanner.WorstSelected) -> None:
        self.go_to(event.array)

    def _announce(self, events: list[ArrayEvent], t: float) -> None:
        if not events:
            return
        stamp = time.strftime("%H:%M:%S", time.localtime(t)) if t > 1e9 else f"t+{t:,.0f}s"
        self.event_log = (*self.event_log, *((stamp, e) for e in events))  # the Events pane
        if (
            self.session.tracker.events
            and len(self.session.tracker.events) == len(events)
            and self.sample_count == 1
        ):
            # the first sample's "degraded" is the state at start: the banner shows it already
            return
        for e in events:
            if e.severity == "warning":
                self.notify(
                    e.message, title=e.kind.replace("-", " "), severity="warning", timeout=8
                )
            else:
                self.notify(e.message, title=e.kind.replace("-", " "), timeout=8)
