"""The raidman Textual App.

``RaidmanApp(backend)`` shows the storage stack of whatever ``app.backend.Backend`` it is given
(Linux, simulated, replay). All backend calls run in thread workers (``exclusive=True``; the
"probe" and "sample" groups never overlap themselves); a backend exception becomes a
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
* Widgets bind to that state (``self.watch(self.app, "view" | "machine" | "selected", cb)``);
  the App posts no messages about it. ``MainScreen`` binds the header, notes, tree, mdstat and
  Details this way.

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
* **Badges on tree nodes** (audit): ``app.storage_tree.set_badges({"sda": "error", ...})``.
* **Command palette**: add a ``textual.command.Provider`` to ``RaidmanApp.COMMANDS``.
* **Going to a device** from anywhere: ``app.go_to("md127")``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from textual import events, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import TabbedContent
from textual.worker import get_current_worker

from app.backend import Backend, EventSource
from app.escape import escape_controls
from app.fleet import HostStatus, unreachable_reason
from app.hosts import HostAuditLog, host_boost_store
from app.model.devices import Disk, Machine, MdArray
from app.model.live import LiveSample
from app.model.smart import SmartReading
from app.model.sync_model import SyncForecast
from app.paths import DB_FILE, host_state_dir
from app.plans.audit_log import AuditLog
from app.plans.eligibility import smart_warnings
from app.plans.executor import ExecutionReport, execute
from app.plans.identity import record_disks
from app.plans.plan import Plan
from app.plans.render import preflight_for
from app.report import report_findings
from app.rules.finding import Finding, badges
from app.session import Effects, SampleGate, Session, SessionView
from app.statefiles import StateFileError
from app.sync.boost import BoostRecord, BoostStore, plan_boost_for, restore_plan
from app.sync.throughput import Rate
from app.sync.tracker import ArrayEvent, SyncTracker
from app.ui.commands import ActionsProvider, GoToDeviceProvider
from app.ui.gc_policy import settle_after_start
from app.ui.hangup import watch_terminal
from app.ui.screens.audit_log import AuditLogScreen
from app.ui.screens.help import HELP_EXTRA, HelpScreen, key_rows
from app.ui.screens.hosts import HostsScreen
from app.ui.screens.main import MainScreen, MdstatView
from app.ui.screens.plan_preview import PlanPreviewScreen
from app.ui.screens.wizards import (
    CreateArrayWizard,
    FilesystemWizard,
    MemberWizard,
    SyncWizard,
)
from app.wear.checks import history_lines
from app.wear.delta import array_wear
from app.wear.plot import disk_serial, load_disk_history
from app.wear.recorder import SmartRead, take_snapshot
from app.wear.snapshots import SnapshotStore
from widgets.findings import FindingsPane
from widgets.header_banner import HeaderBanner
from widgets.storage_tree import NodeRef, StorageTree
from widgets.sync_pane import EventLog, SyncPane
from widgets.wear_pane import WearPane

SMART_VIEW_S = 60.0  # a disk's SMART figures in the Wear tab are re-read at most this often
CLOCK_EVERY_S = 10.0  # the session's clock tick (periodic SMART snapshots, audit cadence)
EVENT_WAIT_S = 1.0  # the event watcher's longest block (so that quitting never waits longer)
HOST_TIMEOUT_S = 60.0  # a host whose probe has not answered for this long is shown unreachable
HOST_AUDIT_S = 60.0  # a host not open is audited (for its worst finding) at most this often


class HostProbed(Message):
    """A host's probe (hosts view) came back: its machine, or why it could not be reached."""

    def __init__(
        self,
        host: str,
        machine: Machine | None,
        unreachable: str | None,
        findings: tuple[Finding, ...] | None = None,
    ) -> None:
        super().__init__()
        self.host = host
        self.machine = machine
        self.unreachable = unreachable
        self.findings = findings


@dataclass
class _HostState:
    """What the App keeps of one host of several while another is open: its live session, its
    SMART readings and its findings (reopening a host shows them at once)."""

    session: Session
    boosts: BoostStore
    smart_seen: dict[str, tuple[float, SmartReading]] = field(default_factory=dict)
    findings: tuple[Finding, ...] | None = None


def _smart_verdict(reading: SmartReading) -> tuple[bool, str, tuple[str, ...]]:
    """What the SMART findings depend on quickly: readable, health, pre-fail counts > 0."""
    return reading.available, (reading.health or "").upper(), smart_warnings(reading)


class RaidmanApp(App[None]):
    """The storage stack of one machine, as a live tree with details."""

    CSS_PATH = "app.tcss"
    TITLE = "raidman"
    COMMANDS: ClassVar[set[Any]] = App.COMMANDS | {ActionsProvider, GoToDeviceProvider}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("r", "refresh", "Refresh"),
        Binding("n", "create_array", "New array"),
        Binding("a", "member_actions", "Members"),
        Binding("t", "sync_actions", "Sync/tune"),
        Binding("v", "filesystem", "FS/LVM"),
        Binding("b", "boost", "Boost sync"),
        Binding("L", "audit_log", "Audit log"),
        Binding("H", "hosts", "Hosts"),
        Binding("question_mark", "help", "Help"),
    ]
    # app-wide letters that belong to the main screen: inside a wizard, preview, dialog or the
    # help they must not fire (no quitting from a half-filled form, no second wizard on top)
    MAIN_SCREEN_ACTIONS: ClassVar[frozenset[str]] = frozenset(
        {
            "quit",
            "refresh",
            "create_array",
            "member_actions",
            "sync_actions",
            "filesystem",
            "boost",
            "audit_log",
            "hosts",
        }
    )

    view: reactive[SessionView] = reactive(SessionView, always_update=True, init=False)
    machine: reactive[Machine | None] = reactive(None, always_update=True, init=False)
    live: reactive[LiveSample | None] = reactive(None, always_update=True, init=False)
    selected: reactive[NodeRef | None] = reactive(None, init=False)
    fleet: reactive[tuple[HostStatus, ...]] = reactive((), always_update=True, init=False)

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
        self.backend = backend
        self.host = host
        self.hosts: dict[str, Backend] = dict(hosts) if len(hosts) > 1 else {}
        self.host_timeout = host_timeout
        self._host_states: dict[str, _HostState] = {}
        # host -> when its probe started (monotonic): the hosts view's or, for the open host,
        # the main view's (each posts HostProbed when it lands); never two at once for a host
        self._fleet_busy: dict[str, float] = {}
        self._probe_wanted = False
        self._fleet_audited: dict[str, float] = {}  # host -> when its last audit started
        if self.hosts:
            self.backend = next(iter(self.hosts.values()))
            self.host = None  # none open: the hosts view
            self.fleet = tuple(HostStatus(h) for h in self.hosts)
        self.probe_interval = probe_interval
        self.sample_interval = sample_interval
        self._probe_busy = False
        self._sampling = SampleGate()
        self.probe_count = 0
        self.sample_count = 0
        self.boosts = BoostStore() if host is None or hosts else host_boost_store(host)
        self.findings: tuple[Finding, ...] = ()
        self.audit_count = 0  # audits finished (tests wait on it)
        # wear: one store, used from worker threads under a lock; recorded only when sampling
        self._store_lock = threading.Lock()
        # host (None: this machine) -> its sync records (another host's are kept in
        # host_state_dir(host), never mixed with this machine's)
        self._stores: dict[str | None, SnapshotStore] = {}
        self._stores_lock = threading.Lock()
        self._wear_followed = False
        self._smart_seen: dict[str, tuple[float, SmartReading]] = {}
        self.session = Session(
            store=self._open_store() if sample_interval > 0 and not self.hosts else None,
            boosts=self.boosts,
        )

    @property
    def tracker(self) -> SyncTracker:
        return self.session.tracker

    @property
    def probed(self) -> Machine | None:
        """The last probe, without live state."""
        return self.session.view.probed

    @property
    def rates(self) -> Mapping[str, Rate]:
        return self.session.view.rates  # read-only, never changed once handed out

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "quit" and isinstance(self.screen, HostsScreen):
            return True
        if action in self.MAIN_SCREEN_ACTIONS and not isinstance(self.screen, MainScreen):
            return False
        if action == "hosts" and not self.hosts:
            return False
        return not (action == "help" and isinstance(self.screen, HelpScreen))

    # ---- life cycle ------------------------------------------------------------------
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
            self.set_interval(1.0, self._fleet_deadlines)
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
        for note in (n for st in self._stores.values() for n in st.notes):
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

    # ---- polling -----------------------------------------------------------------------
    def action_refresh(self) -> None:
        self.refresh_probe()

    def refresh_probe(self) -> None:
        if self._probe_busy or self.idle:
            return
        if self.host is not None and self.host in self._fleet_busy:
            self._probe_wanted = True  # one probe of a host at a time: this one when it lands
            return
        self._probe_busy = True
        if self.host is not None and self.hosts:
            self._fleet_busy[self.host] = time.monotonic()
        self._probe_worker()

    def refresh_sample(self, *, event: bool = False) -> None:
        if self.probed is None or self.idle:
            return
        if self._sampling.want(event=event):
            self._sample_worker()

    def _sample_landed(self) -> None:
        if self._sampling.done():  # an md event came while it was in flight: sample again
            self._sample_worker()

    @work(thread=True, exclusive=True, group="md-events", exit_on_error=False)
    def _event_worker(self, source: EventSource) -> None:
        """Wake on md events (sync start/end, array and member changes): sample at once, by
        the timer's path. Returns when the backend has no events (the timer is all there is)."""
        worker = get_current_worker()
        while not worker.is_cancelled:
            t0 = time.monotonic()
            try:
                woke = source.wait_event(EVENT_WAIT_S)
            except Exception:
                woke = False
            if woke is None:
                return
            if woke:
                self._from_thread(self.refresh_sample, event=True)
            else:  # timed out, or no md yet (returned at once): not a busy loop
                worker.cancelled_event.wait(max(0.0, EVENT_WAIT_S - (time.monotonic() - t0)))

    @work(thread=True, exclusive=True, group="probe", exit_on_error=False)
    def _probe_worker(self) -> None:
        backend = self.backend
        try:
            machine = backend.probe()
        except Exception as e:
            self._host_probed(backend, None, e)
            self._from_thread(self._current(backend, self._probe_failed), e)
        else:
            self._host_probed(backend, machine)
            self._from_thread(self._current(backend, self._probe_done), machine)

    @work(thread=True, exclusive=True, group="sample", exit_on_error=False)
    def _sample_worker(self) -> None:
        backend = self.backend
        try:
            sample = backend.sample()
        except Exception as e:
            self._from_thread(self._current(backend, self._sample_failed), e)
        else:
            self._from_thread(self._current(backend, self._sample_done), sample)

    def _current(self, backend: Backend, callback: Any) -> Any:
        """``callback``, run only if ``backend`` is still the one shown (with several hosts a
        result may land after its host was closed or another opened: it is dropped)."""

        def guarded(*args: Any) -> None:
            if backend is self.backend and not self.idle:
                callback(*args)

        guarded.__name__ = getattr(callback, "__name__", "update")
        return guarded

    # ---- several hosts: the hosts view ---------------------------------------------------
    def _fleet_deadlines(self) -> None:
        """A host whose probe has not come back within ``host_timeout`` is unreachable (its
        probe may still answer later: its line then says so)."""
        now = time.monotonic()
        for host, started in self._fleet_busy.items():
            if now - started > self.host_timeout:
                why = f"no answer within {self.host_timeout:g} s"
                if next((s.unreachable for s in self.fleet if s.host == host), None) != why:
                    self._set_status(host, unreachable=why)

    def refresh_fleet(self) -> None:
        """Probe every host not open, each in a worker of its own, never two at once for one
        host (the results come back as ``HostProbed`` messages)."""
        self._fleet_deadlines()
        now = time.monotonic()
        for host, backend in self.hosts.items():
            if host in self._fleet_busy or host == self.host:
                continue  # the open host's own probes keep its line current
            self._fleet_busy[host] = now
            audit_too = now - self._fleet_audited.get(host, -HOST_AUDIT_S) >= HOST_AUDIT_S
            if audit_too:
                self._fleet_audited[host] = now
            self.run_worker(
                lambda h=host, b=backend, a=audit_too: self._fleet_probe(h, b, a),
                name=f"hosts:{host}",
                group=f"hosts:{host}",
                thread=True,
                exit_on_error=False,
            )

    def _fleet_probe(self, host: str, backend: Backend, audit_too: bool) -> None:
        """In a worker: probe ``host`` and, now and then, audit it (its SMART and the audit's
        inputs come with the probe's one ssh round trip)."""
        findings: tuple[Finding, ...] | None = None
        try:
            machine: Machine | None = backend.probe()
            why = unreachable_reason(backend)
        except Exception as e:
            machine, why = None, str(e) or type(e).__name__
        if audit_too and machine is not None and why is None:
            with contextlib.suppress(Exception):  # the line then names no finding
                # the same audit as `raidman report --host HOST` (its SMART, its sync records)
                smart = (
                    {d.name: backend.smart(d.name) for d in machine.disks}
                    if backend.smart_enabled
                    else {}
                )
                findings = report_findings(
                    backend, machine, smart, self._open_store(host), self._store_lock
                )
        self.post_message(HostProbed(host, machine, why, findings))

    def _host_probed(
        self, backend: Backend, machine: Machine | None, error: Exception | None = None
    ) -> None:
        """The open host's probe (the main view's) also brings its line in the hosts view."""
        host = self._host_of(backend)
        if host is not None:
            why = (
                unreachable_reason(backend)
                if error is None
                else (escape_controls(str(error)) or "probe failed")
            )
            self.post_message(HostProbed(host, machine, why))

    def on_host_probed(self, message: HostProbed) -> None:
        self._fleet_busy.pop(message.host, None)
        if message.host == self.host and self._probe_wanted:
            self._probe_wanted = False
            self.refresh_probe()
        if message.unreachable is not None or message.machine is None:
            # the last machine seen stays (older, but what there is); the line says unreachable
            self._set_status(message.host, unreachable=message.unreachable or "no answer")
        else:
            self._set_status(message.host, machine=message.machine, unreachable=None)
        if message.findings is not None and message.host != self.host:
            self._set_status(message.host, findings=message.findings)

    def _host_of(self, backend: Backend) -> str | None:
        return next((h for h, b in self.hosts.items() if b is backend), None)

    def _set_status(self, host: str, **changes: Any) -> None:
        self.fleet = tuple(replace(s, **changes) if s.host == host else s for s in self.fleet)

    def open_host(self, host: str) -> None:
        """Show one host's full view: the main screen driven by its backend and its session
        (kept while the admin looks at other hosts)."""
        if host not in self.hosts or not isinstance(self.screen, HostsScreen):
            return
        state = self._host_states.get(host)
        if state is None:
            boosts = host_boost_store(host)
            state = _HostState(
                Session(
                    store=self._open_store(host) if self.sample_interval > 0 else None,
                    boosts=boosts,
                ),
                boosts=boosts,
            )
            self._host_states[host] = state
        self.host = host
        self.backend = self.hosts[host]
        self.session = state.session
        self.boosts = state.boosts
        self._smart_seen = state.smart_seen
        self.findings = state.findings or ()
        self._probe_busy = False
        self._probe_wanted = False
        self._sampling = SampleGate()
        self.sample_count = 0
        self._wear_followed = False
        self.selected = None
        self.sub_title = host
        self._publish()
        self.push_screen(MainScreen())
        self.refresh_probe()

    def on_key(self, event: events.Key) -> None:
        """H on one machine: the hosts binding is hidden (no hosts view), but the key says why
        nothing happens instead of doing nothing silently."""
        if event.key == "H" and not self.hosts and isinstance(self.screen, MainScreen):
            self.notify(
                "one machine is shown: H lists several hosts when raidman is started with "
                "--host a,b or a hosts file",
                title="hosts",
            )

    def action_hosts(self) -> None:
        """Back from a host's view to the hosts view."""
        if not self.hosts or not isinstance(self.screen, MainScreen):
            return
        self.pop_screen()
        self.host = None
        self.sub_title = f"{len(self.hosts)} hosts"
        self.refresh_fleet()

    def audit_log(self) -> AuditLog:
        """Where a plan run from this view is recorded: locally, and for a host over ssh
        with the host named (and each step also in the host's own syslog)."""
        return AuditLog() if self.host is None else HostAuditLog(self.host, self.backend)

    def _from_thread(self, callback: Any, *args: Any, **kwargs: Any) -> None:
        """Run ``callback(*args)`` on the UI thread. An exception there would otherwise vanish
        into the worker (exit_on_error=False): it becomes a visible notification instead."""

        def guarded() -> None:
            try:
                callback(*args, **kwargs)
            except Exception as e:
                self.log.error(f"{getattr(callback, '__name__', callback)} failed: {e!r}")
                self.notify(
                    f"internal error in {getattr(callback, '__name__', 'update')}: {e}",
                    title="raidman",
                    severity="error",
                    timeout=10,
                )

        with contextlib.suppress(RuntimeError):  # RuntimeError: the app is shutting down
            self.call_from_thread(guarded)

    def _warn_from_thread(self, message: str, title: str) -> None:
        self._from_thread(lambda: self.notify(message, title=title, severity="warning"))

    def _probe_failed(self, error: Exception) -> None:
        self._probe_busy = False
        self.notify(
            f"probe failed: {escape_controls(str(error))}",
            title="backend error",
            severity="error",
            timeout=8,
            markup=False,
        )

    def _sample_failed(self, error: Exception) -> None:
        self._sample_landed()
        self.notify(f"live sample failed: {error}", title="backend error", severity="warning")

    def _probe_done(self, machine: Machine) -> None:
        self._probe_busy = False
        self.probe_count += 1
        if self.probe_count == 1 and self.tune_gc:
            self.call_after_refresh(settle_after_start)  # see app.ui.gc_policy
        with self._store_lock:  # the session writes the wear database
            effects = self.session.probed(machine, self.backend.now())
        self._publish()
        self._run(effects)

    def _sample_done(self, sample: LiveSample) -> None:
        self._sample_landed()  # a coalesced next sample lands after this one is fed
        self.sample_count += 1
        with self._store_lock:
            effects = self.session.sampled(sample)
        self._announce(list(effects.events), sample.taken_at)
        self._publish()
        if self.probed is not None and self.machine is not None:
            self._refresh_sync_pane()
            self._follow_wear()
            self._refresh_mdstat()
        self._run(effects)

    def _publish(self) -> None:
        view = self.session.view
        with contextlib.suppress(LookupError, NoMatches):  # no main screen yet
            self.main.query_one(HeaderBanner).set_stalled(
                {v.array: v.still_s for v in view.syncs if v.stalled}
            )
        self.view = view
        self.live = view.live
        self.machine = view.machine

    def _clock_tick(self) -> None:
        if self.idle:
            return
        with self._store_lock:
            effects = self.session.tick(self.backend.now())
        self._run(effects)

    def expect_forecasts(self, forecasts: tuple[SyncForecast, ...]) -> None:
        """A plan's run worker is about to run the step that starts these syncs (asked on the
        UI thread, through ``call_from_thread``): the session's records keep them."""
        with self._store_lock:
            self.session.expect_forecasts(forecasts, self.backend.now())

    def withdraw_forecasts(self, arrays: tuple[str, ...]) -> None:
        """The step that was to start those syncs failed: their forecasts are dropped."""
        with self._store_lock:
            self.session.withdraw_forecasts(arrays)

    def _run(self, effects: Effects) -> None:
        """Start what the session asked for, each in its own worker."""
        if effects.reprobe:
            self.refresh_probe()  # the stack changed shape: re-read it now
        if effects.audit and self.probed is not None:
            self._audit_worker(self.probed)
        if effects.smart_reads:
            self._smart_worker(effects.smart_reads)
        if not self.backend.read_only_reason:
            for rec in effects.restores:
                self._restore_worker(rec)

    # ---- reacting ------------------------------------------------------------------------
    def on_storage_tree_highlighted(self, event: StorageTree.Highlighted) -> None:
        self.selected = event.ref  # MainScreen shows it in Details (bound to ``selected``)
        self._load_wear(event.ref)

    def on_header_banner_worst_selected(self, event: HeaderBanner.WorstSelected) -> None:
        self.go_to(event.array)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "sync":
            self._refresh_sync_pane()

    def show_tab(self, tab: str) -> None:
        self.main.query_one(TabbedContent).active = tab

    # ---- sync watching: events, sync pane, boost ------------------------------------------
    def _announce(self, events: list[ArrayEvent], t: float) -> None:
        if not events:
            return
        stamp = time.strftime("%H:%M:%S", time.localtime(t)) if t > 1e9 else f"t+{t:,.0f}s"
        with contextlib.suppress(LookupError, NoMatches):  # no main screen / pane yet
            self.main.query_one(EventLog).add_events(events, stamp)
        if (
            self.tracker.events
            and len(self.tracker.events) == len(events)
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

    def _refresh_mdstat(self) -> None:
        with contextlib.suppress(LookupError, NoMatches):  # no main screen / pane yet
            if self.main.query_one(TabbedContent).active == "mdstat":
                self._mdstat_worker()

    @work(thread=True, exclusive=True, group="mdstat", exit_on_error=False)
    def _mdstat_worker(self) -> None:
        """/proc/mdstat read again while its tab is shown (the probe reads it every 10 s; the
        banner follows the 1 Hz sample: the tab lagged it by 2 %)."""
        text = self.backend.read_text("/proc/mdstat")
        self.call_from_thread(self._show_mdstat, text)

    def _show_mdstat(self, text: str | None) -> None:
        with contextlib.suppress(LookupError, NoMatches):
            self.main.query_one(MdstatView).set_text(text)

    def _refresh_sync_pane(self) -> None:
        try:
            if self.main.query_one(TabbedContent).active != "sync":
                return  # refreshed when its tab is shown; no redraws nobody sees
            pane = self.main.query_one(SyncPane)
        except (LookupError, NoMatches):  # no main screen / pane (yet)
            return
        view = self.session.view
        now = self.backend.now()
        key = (len(view.finished), int(now // 60), view.machine is None)
        if getattr(self, "_checks_key", None) != key and view.machine is not None:
            with contextlib.suppress(Exception), self._store_lock:  # the database is a bonus
                self._checks = history_lines(self._open_store(), view.machine, now)
            self._checks_key = key
        pane.refresh_views(
            list(view.syncs),
            list(view.finished),
            machine=view.machine,
            rates=view.rates,
            slow=dict(view.slow),
            boosts=view.boost_records,
            checks=getattr(self, "_checks", None),
        )

    def selected_array(self) -> MdArray | None:
        """The array under the cursor, or the one a selected member link / partition belongs to."""
        m, ref = self.machine, self.selected
        if m is None or ref is None:
            return None
        for name in (ref.via, ref.name):
            if name and m.array(name) is not None:
                return m.array(name)
        arrays = m.arrays_of_disk(ref.name) if ref.name else ()
        if not arrays and ref.name:  # a member partition selected as itself, not as a link
            arrays = tuple(a for a in m.arrays if a.member(ref.name) is not None)
        return arrays[0] if len(arrays) == 1 else None

    def action_boost(self) -> None:
        """Raise the sync limits for the selected (or only) syncing array, via a previewed plan."""
        m = self.machine
        if m is None:
            return
        syncing = [a for a in m.syncing_arrays if a.sync is not None]
        sel = self.selected_array()
        target = (
            sel
            if sel is not None and sel in syncing
            else (syncing[0] if len(syncing) == 1 else None)
        )
        if target is None or target.sync is None:
            msg = "no array is syncing" if not syncing else "select the syncing array to boost"
            self.notify(msg, title="boost")
            return
        plan, record = plan_boost_for(m, self.backend.read_text, target, self.boosts)
        if not plan.steps:
            self.notify(
                "the limits are already at least as high as a boost would set", title="boost"
            )
            return
        try:  # what to restore is on disk before anything can be raised
            self.session.boost_starting(record)
        except (StateFileError, ValueError) as e:
            self.notify(f"boost refused: {e}", title="boost", severity="error", timeout=10)
            return

        def done(report: ExecutionReport | None) -> None:
            self._kept_boost(record, report)

        self.push_screen(PlanPreviewScreen(plan, self.backend, audit=self.audit_log()), done)

    def _kept_boost(self, record: BoostRecord, report: ExecutionReport | None) -> None:
        try:
            kept = self.session.boost_ran(record, report)
        except StateFileError as e:  # the pending record (written before) still restores all
            self.notify(str(e), title="boost", severity="warning", timeout=10)
            return
        if kept is None:
            return
        record = kept
        self.refresh_sample()  # the Sync card shows the raised limits (and "boosted") at once
        self.notify(
            f"{record.array}: limits raised; they will be put back when the {record.action} ends "
            "(even if raidman is closed and reopened meanwhile)",
            title="boost",
            timeout=10,
        )

    @work(thread=True, group="boost-restore", exit_on_error=False)
    def _restore_worker(self, rec: BoostRecord) -> None:
        plan = restore_plan(rec, self.boosts)
        report = execute(plan, self.backend, audit=self.audit_log())  # restores are logged too
        self._from_thread(self._restored, rec, plan, report)

    def _restored(self, rec: BoostRecord, plan: Plan, report: ExecutionReport) -> None:
        self.session.restored(rec, report.ok)
        if report.ok:
            lines = "; ".join(s.shell() for s in plan.steps) or "nothing to change"
            self.notify(f"{rec.array}: {rec.action} ended, limits restored: {lines}", title="boost")
        else:
            self.notify(
                f"{rec.array}: could not restore the limits: {report.summary()}",
                title="boost",
                severity="error",
                timeout=15,
            )

    # ---- audit ------------------------------------------------------------------------------
    def _audit_again(self) -> None:
        """After a plan ran, or new SMART readings: audit now rather than at the next cadence."""
        if self.probed is not None and self.session.audit_now(self.backend.now()):
            self._audit_worker(self.probed)

    @work(thread=True, exclusive=True, group="audit", exit_on_error=False)
    def _audit_worker(self, machine: Machine) -> None:
        backend, session, seen = self.backend, self.session, self._smart_seen
        try:
            store = self._open_store()  # the shown host's, as the worker started
            # SMART as the session's reads last saw it (the audit never runs smartctl itself);
            # the same audit as `raidman report` (its sync records' speeds too)
            smart = {name: reading for name, (_, reading) in list(seen.items())}
            found = report_findings(backend, machine, smart, store, self._store_lock)
        except Exception as e:  # the engine is defensive; this is the last line of defence
            self._from_thread(self._audit_landed, backend, session, None, e)
        else:
            self._from_thread(self._audit_landed, backend, session, found, None)

    def _audit_landed(
        self,
        backend: Backend,
        session: Session,
        found: tuple[Finding, ...] | None,
        error: Exception | None,
    ) -> None:
        host = self._host_of(backend)
        if host is not None and found is not None:  # the hosts view names the worst finding
            if (st := self._host_states.get(host)) is not None:
                st.findings = found
            self._set_status(host, findings=found)
        if backend is not self.backend or self.idle:  # its host was closed meanwhile
            session.audit_finished(backend.now())
        elif error is not None:
            self._audit_failed(error)
        elif found is not None:
            self._audit_done(found)

    def _audit_ended(self) -> None:
        self.audit_count += 1
        if self.session.audit_finished(self.backend.now()) and self.probed is not None:
            self._audit_worker(self.probed)  # asked for while this one ran

    def _audit_failed(self, error: Exception) -> None:
        self._audit_ended()
        self.notify(f"audit failed: {error}", title="audit", severity="warning")

    def _audit_done(self, found: tuple[Finding, ...]) -> None:
        self._audit_ended()
        self.findings = found
        with contextlib.suppress(LookupError, NoMatches):  # no main screen / pane (yet)
            self.main.query_one(FindingsPane).set_findings(found)
            self.storage_tree.set_badges(badges(found))

    def on_findings_pane_selected(self, event: FindingsPane.Selected) -> None:
        self.go_to(event.device)
        if event.fix is not None:
            self._preview(event.fix)
        elif event.finding.fix_destroys_data:
            self.notify(
                "the fix for this finding would destroy data: see its detail; no one-key fix",
                title=event.finding.title,
                severity="warning",
            )

    def _preview(self, plan: Plan) -> None:
        machine = self.machine
        if machine is not None:  # serial/WWN of its disks: checked again before each step
            plan = record_disks(plan, machine)
        pre = preflight_for(plan, machine, self.backend) if machine is not None else None

        def done(report: ExecutionReport | None) -> None:
            if report is not None and report.executed:
                self.refresh_probe()
                self._audit_again()

        self.push_screen(
            PlanPreviewScreen(plan, self.backend, preflight=pre, audit=self.audit_log()), done
        )

    # ---- wizards and the audit log ----------------------------------------------------------
    def _after_wizard(self, report: ExecutionReport | None) -> None:
        if report is not None and report.executed:
            self.refresh_probe()
            self._audit_again()

    def _probed_or_say(self, what: str) -> Machine | None:
        if self.machine is None:
            self.notify("the first probe has not finished yet; try again in a moment", title=what)
        return self.machine

    def _volume_or_say(self, a: MdArray | None, what: str) -> MdArray | None:
        """A container (IMSM/DDF) is no target of member or sync actions: its first volume
        stands for it, and a note says so."""
        if a is None or not a.is_container or self.machine is None:
            return a
        volumes = [v for v in self.machine.arrays if v.container == a.name and not v.is_container]
        names = ", ".join(v.name for v in volumes) or "none"
        self.notify(
            f"{a.name} is a container ({a.metadata or 'external'}): {what} act on its volumes"
            f" ({names})",
            title=what,
        )
        return volumes[0] if volumes else None

    def action_create_array(self) -> None:
        if (m := self._probed_or_say("new array")) is not None:
            self.push_screen(
                CreateArrayWizard(m, self.backend, audit=self.audit_log()), self._after_wizard
            )

    def action_member_actions(self) -> None:
        if (m := self._probed_or_say("member actions")) is None:
            return
        if not any(not a.is_container for a in m.arrays):
            self.notify("no md arrays on this machine: n creates one", title="member actions")
            return
        a = self._volume_or_say(self.selected_array(), "member actions")
        ref = self.selected
        member = ref.name if ref is not None and a is not None else None
        self.push_screen(
            MemberWizard(
                m,
                self.backend,
                array=a.name if a else None,
                member=member,
                audit=self.audit_log(),
            ),
            self._after_wizard,
        )

    def action_sync_actions(self) -> None:
        if (m := self._probed_or_say("sync actions")) is None:
            return
        a = self._volume_or_say(self.selected_array(), "sync actions")
        self.push_screen(
            SyncWizard(m, self.backend, array=a.name if a else None, audit=self.audit_log()),
            self._after_wizard,
        )

    def action_filesystem(self) -> None:
        if (m := self._probed_or_say("filesystem / LVM")) is None:
            return
        if not any(not a.is_container for a in m.arrays):
            self.notify("no md arrays on this machine: n creates one", title="filesystem / LVM")
            return
        a = self.selected_array()
        self.push_screen(
            FilesystemWizard(m, self.backend, array=a.name if a else None, audit=self.audit_log()),
            self._after_wizard,
        )

    def action_audit_log(self) -> None:
        self.push_screen(AuditLogScreen())

    def action_help(self) -> None:
        screen = self.screen
        title = getattr(screen, "TITLE_TEXT", "") or type(screen).__name__.removesuffix("Screen")
        self.push_screen(HelpScreen(title or "raidman", key_rows(screen), HELP_EXTRA))

    # ---- wear -------------------------------------------------------------------------------
    def _open_store(self, host: str | None = None) -> SnapshotStore:
        """The sync records of ``host`` (default: the one shown; None: this machine)."""
        host = self.host if host is None else host
        with self._stores_lock:  # workers open them too
            store = self._stores.get(host)
            if store is None:
                store = SnapshotStore.open(None if host is None else host_state_dir(host) / DB_FILE)
                self._stores[host] = store
        return store

    @work(thread=True, group="smart", exit_on_error=False)
    def _smart_worker(self, reads: tuple[SmartRead, ...]) -> None:
        """The session's SMART reads, beside the sampler (never in its way)."""
        changed = False
        # another host may be opened meanwhile: these reads stay with the one they started on
        backend, seen_at, kernel_count = self.backend, self._smart_seen, self.session.kernel_count
        store = self._open_store()

        def seen(disk: str, reading: SmartReading) -> None:
            nonlocal changed
            old = seen_at.get(disk)
            changed |= old is None or _smart_verdict(old[1]) != _smart_verdict(reading)
            seen_at[disk] = (backend.now(), reading)

        for r in reads:
            try:
                take_snapshot(
                    backend,
                    store,
                    r,
                    self._store_lock,
                    on_reading=seen,
                    kernel=kernel_count,
                )
            except Exception as e:
                self._warn_from_thread(f"SMART snapshot of {r.disk} failed: {e}", "wear")
        if changed:  # a first reading, or a disk's health/counters changed: findings and badges
            self._from_thread(self._audit_again)

    def _follow_wear(self) -> None:
        """The Wear tab follows a running sync: reloaded at every sample while one runs (the
        kernel's write counters move each second) and once after it ended."""
        running = bool(self.session.view.syncs)
        if not (running or self._wear_followed):
            return
        self._wear_followed = running
        try:
            if self.main.query_one(TabbedContent).active != "wear":
                return
        except (LookupError, NoMatches):
            return
        self._load_wear(self.selected, follow=True)

    def _load_wear(self, ref: NodeRef | None, follow: bool = False) -> None:
        m = self.machine
        if m is None or ref is None:
            return
        obj = m.device(ref.name) if ref.name else None
        if isinstance(obj, (Disk, MdArray)):
            seen = self._smart_seen.get(obj.name) if follow else None
            fresh = seen is not None and self.backend.now() - seen[0] < SMART_VIEW_S
            self._wear_loader(m, obj, seen[1] if seen is not None and fresh else None)
        else:
            with contextlib.suppress(LookupError, NoMatches):  # no main screen / pane (yet)
                self.main.query_one(WearPane).show_nothing("select a disk or an array")

    @work(thread=True, exclusive=True, group="wear-view", exit_on_error=False)
    def _wear_loader(
        self, m: Machine, obj: Disk | MdArray, reading: SmartReading | None = None
    ) -> None:
        try:
            store = self._open_store()
            if isinstance(obj, MdArray):
                with self._store_lock:  # never held while waiting for the UI thread
                    wear = array_wear(store, obj.name, obj.uuid)
                self._from_thread(self._show_wear_array, obj, wear)
                return
            if reading is None:  # SMART on its own cadence, not at every sample
                reading = self.backend.smart(obj.name)
                self._smart_seen[obj.name] = (self.backend.now(), reading)
            serial = disk_serial(obj.name, reading.serial, obj.serial)
            with self._store_lock:
                history, syncs = load_disk_history(
                    store, serial, [a.name for a in m.arrays_of_disk(obj.name)]
                )
            self._from_thread(self._show_wear_disk, obj, reading, history, syncs)
        except Exception as e:
            self._warn_from_thread(f"wear view: {e}", "wear")

    def _show_wear_array(self, array: MdArray, wear: Any) -> None:
        with contextlib.suppress(LookupError, NoMatches):  # no main screen / pane (yet)
            self.main.query_one(WearPane).show_array(array, wear)

    def _show_wear_disk(self, disk: Disk, reading: Any, history: Any, syncs: Any) -> None:
        with contextlib.suppress(LookupError, NoMatches):  # no main screen / pane (yet)
            self.main.query_one(WearPane).show_disk(disk, reading, history, syncs)
