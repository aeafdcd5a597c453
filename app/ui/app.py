"""The raidman Textual App.

``RaidmanApp(backend)`` shows the storage stack of whatever ``backends.base.Backend`` it is given
(Linux, simulated, replay). All backend calls run in thread workers (``exclusive=True``; the
"probe" and "sample" groups never overlap themselves); a backend exception becomes a
notification, never a crash.

Data flow
---------
* ``probe()`` at start, every ``probe_interval`` seconds (10) and on ``r``;
  ``sample()`` every ``sample_interval`` seconds (1).
* ``RaidmanApp.machine`` (reactive) is the last probe with the last live sample folded in
  (``app.ui.live.merge_live``); ``RaidmanApp.live`` (reactive) is the last ``LiveSample``;
  ``RaidmanApp.selected`` (reactive) is the ``NodeRef`` under the tree cursor.
* After a probe the App posts ``RaidmanApp.MachineUpdated(machine)``; after a sample,
  ``RaidmanApp.LiveUpdated(sample, machine)``; when the cursor moves,
  ``RaidmanApp.SelectionChanged(ref)``. Each is posted to the App and to the top widget of every
  right-hand pane.

Extension points
----------------
* **A new right-hand pane** ("Sync", "Findings", "Wear", "Events", "Log"): add one line to
  ``app.ui.screens.main.DETAIL_PANES``::

      ("Sync", "sync", lambda: SyncPane(id="sync-pane")),

  The widget then receives the three messages above (define ``on_raidman_app_machine_updated``,
  ``on_raidman_app_live_updated``, ``on_raidman_app_selection_changed``), or it can
  ``self.watch(self.app, "machine", callback)``. It reaches the backend as ``self.app.backend``
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
from typing import Any, ClassVar

from textual import work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import TabbedContent

from app.model.devices import Disk, Machine, MdArray
from app.model.live import LiveSample
from app.plans.audit_log import AuditLog
from app.plans.executor import ExecutionReport, execute
from app.plans.plan import Plan
from app.plans.render import preflight_for
from app.rules.engine import audit
from app.rules.finding import Finding, badges
from app.rules.inputs import gather
from app.statefiles import StateFileError
from app.sync.boost import (
    BoostRecord,
    BoostStore,
    due_restores,
    members_rotational,
    plan_boost,
    restore_plan,
)
from app.sync.throughput import Rate, ThroughputMeter
from app.sync.tracker import SyncEvent, SyncTracker
from app.ui.commands import ActionsProvider, GoToDeviceProvider
from app.ui.hangup import watch_terminal
from app.ui.live import merge_live
from app.ui.screens.audit_log import AuditLogScreen
from app.ui.screens.help import HELP_EXTRA, HelpScreen, key_rows
from app.ui.screens.main import MainScreen, MdstatView
from app.ui.screens.plan_preview import PlanPreviewScreen
from app.ui.screens.wizards import CreateArrayWizard, MemberWizard, SyncWizard
from app.wear.delta import array_wear
from app.wear.monitor import WearMonitor
from app.wear.plot import disk_serial, load_disk_history
from app.wear.snapshots import SnapshotStore
from backends.base import Backend
from widgets.device_detail import DeviceDetail
from widgets.findings import FindingsPane
from widgets.header_banner import HeaderBanner, NotesBar
from widgets.storage_tree import NodeRef, StorageTree
from widgets.sync_pane import EventLog, SyncPane
from widgets.wear_pane import WearPane

AUDIT_EVERY_S = 60.0  # the audit runs tune2fs/xfs_info/...: not at every probe
WEAR_EVERY_S = 10.0  # the wear monitor's tick (SMART snapshots at sync start/end)


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
        Binding("b", "boost", "Boost sync"),
        Binding("L", "audit_log", "Audit log"),
        Binding("question_mark", "help", "Help"),
    ]
    # app-wide letters that belong to the main screen: inside a wizard, preview, dialog or the
    # help they must not fire (no quitting from a half-filled form, no second wizard on top)
    MAIN_SCREEN_ACTIONS: ClassVar[frozenset[str]] = frozenset(
        {"quit", "refresh", "create_array", "member_actions", "sync_actions", "boost", "audit_log"}
    )

    machine: reactive[Machine | None] = reactive(None, always_update=True, init=False)
    live: reactive[LiveSample | None] = reactive(None, always_update=True, init=False)
    selected: reactive[NodeRef | None] = reactive(None, init=False)

    class MachineUpdated(Message):
        """A probe finished; ``machine`` is the new model (with live state folded in)."""

        def __init__(self, machine: Machine) -> None:
            super().__init__()
            self.machine = machine

    class LiveUpdated(Message):
        """A 1 Hz sample arrived; ``machine`` is the last probe with it folded in."""

        def __init__(self, sample: LiveSample, machine: Machine) -> None:
            super().__init__()
            self.sample = sample
            self.machine = machine

    class SelectionChanged(Message):
        """The tree cursor moved to ``ref``."""

        def __init__(self, ref: NodeRef | None) -> None:
            super().__init__()
            self.ref = ref

    def __init__(
        self,
        backend: Backend,
        *,
        probe_interval: float = 10.0,
        sample_interval: float = 1.0,
    ) -> None:
        super().__init__()
        self.backend = backend
        self.probe_interval = probe_interval
        self.sample_interval = sample_interval
        self.probed: Machine | None = None  # the last probe, without live state
        self._probe_busy = False
        self._sample_busy = False
        self.probe_count = 0
        self.sample_count = 0
        # live watching (issue: rebuilds)
        self.tracker = SyncTracker()
        self.meter = ThroughputMeter()
        self.rates: dict[str, Rate] = {}
        self.boosts = BoostStore()
        self._restoring: set[str] = set()
        # audit (issue: alignment and tuning)
        self.findings: tuple[Finding, ...] = ()
        self._audit_busy = False
        self._audited_at: float | None = None
        self.audit_count = 0  # audits finished (tests wait on it)
        # wear (issue: SMART): one store, used from worker threads under a lock
        self._store_lock = threading.Lock()
        self._store: SnapshotStore | None = None
        self._monitor: WearMonitor | None = None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.MAIN_SCREEN_ACTIONS and not isinstance(self.screen, MainScreen):
            return False
        return not (action == "help" and isinstance(self.screen, HelpScreen))

    # ---- life cycle ------------------------------------------------------------------
    def get_default_screen(self) -> MainScreen:
        return MainScreen()

    def on_mount(self) -> None:
        self.sub_title = self.backend.name
        watch_terminal(self)
        self.refresh_probe()
        if self.probe_interval > 0:
            self.set_interval(self.probe_interval, self.refresh_probe)
        if self.sample_interval > 0:
            self.set_interval(self.sample_interval, self.refresh_sample)
            self.set_interval(WEAR_EVERY_S, self._wear_tick)
        for note in self.boosts.notes:
            self.notify(note, title="boost", severity="warning", timeout=10)

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
        return self.storage_tree.go_to(name, remember=True)

    # ---- polling -----------------------------------------------------------------------
    def action_refresh(self) -> None:
        self.refresh_probe()

    def refresh_probe(self) -> None:
        if self._probe_busy:
            return
        self._probe_busy = True
        self._probe_worker()

    def refresh_sample(self) -> None:
        if self._sample_busy or self.probed is None:
            return
        self._sample_busy = True
        self._sample_worker()

    @work(thread=True, exclusive=True, group="probe", exit_on_error=False)
    def _probe_worker(self) -> None:
        try:
            machine = self.backend.probe()
        except Exception as e:
            self._from_thread(self._probe_failed, e)
        else:
            self._from_thread(self._probe_done, machine)

    @work(thread=True, exclusive=True, group="sample", exit_on_error=False)
    def _sample_worker(self) -> None:
        try:
            sample = self.backend.sample()
        except Exception as e:
            self._from_thread(self._sample_failed, e)
        else:
            self._from_thread(self._sample_done, sample)

    def _from_thread(self, callback: Any, *args: Any) -> None:
        """Run ``callback(*args)`` on the UI thread. An exception there would otherwise vanish
        into the worker (exit_on_error=False): it becomes a visible notification instead."""

        def guarded() -> None:
            try:
                callback(*args)
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
        self.notify(f"probe failed: {error}", title="backend error", severity="error", timeout=8)

    def _sample_failed(self, error: Exception) -> None:
        self._sample_busy = False
        self.notify(f"live sample failed: {error}", title="backend error", severity="warning")

    def _probe_done(self, machine: Machine) -> None:
        self._probe_busy = False
        self.probe_count += 1
        self.probed = machine
        if self.live is not None and self.live.taken_at >= machine.taken_at:
            machine = merge_live(machine, self.live)
        self.machine = machine
        self._post(lambda: self.MachineUpdated(machine))
        self._maybe_audit()

    def _sample_done(self, sample: LiveSample) -> None:
        self._sample_busy = False
        self.sample_count += 1
        self.live = sample
        events = self.tracker.update(sample)
        self.rates = self.meter.update(sample)
        self._announce(events, sample.taken_at)
        if self.probed is None:
            return
        machine = merge_live(self.probed, sample)
        self.machine = machine
        self._post(lambda: self.LiveUpdated(sample, machine))
        self._refresh_sync_pane()
        self._restore_finished_boosts(sample)
        if any(
            e.kind in ("array-appeared", "array-vanished", "member-added", "member-removed")
            for e in events
        ):
            self.refresh_probe()  # the stack changed shape: re-read it now
        if self.sample_interval > 0 and any(
            e.kind in ("sync-started", "sync-ended") for e in events
        ):
            # SMART snapshots at the sync's edges now, not at the next 10 s wear tick: every
            # second late is a second of rebuild writes missing from its wear delta
            self._wear_monitor_worker()

    def _post(self, make: Any) -> None:
        self.post_message(make())
        with contextlib.suppress(LookupError):
            self.main.broadcast(make)

    def screen_ready(self, screen: MainScreen) -> None:
        """Called by MainScreen.on_mount: show (and announce) what arrived before it existed."""
        machine = self.machine
        if machine is not None:
            self.watch_machine(machine)
            screen.broadcast(lambda: self.MachineUpdated(machine))

    # ---- reacting ------------------------------------------------------------------------
    def watch_machine(self, machine: Machine | None) -> None:
        try:
            screen = self.main
        except LookupError:  # the main screen is not composed yet: its on_mount catches up
            return
        with contextlib.suppress(NoMatches):
            screen.query_one(HeaderBanner).set_machine(machine)
        if machine is None:
            return
        with contextlib.suppress(NoMatches):
            screen.query_one(NotesBar).set_notes(machine.notes)
        with contextlib.suppress(NoMatches):
            screen.query_one(StorageTree).update_machine(machine)
        with contextlib.suppress(NoMatches):  # panes of inactive tabs may not be mounted yet
            screen.query_one(MdstatView).set_machine(machine)
        self._show_detail()

    def _show_detail(self) -> None:
        try:
            detail = self.main.query_one(DeviceDetail)
        except Exception:  # not mounted yet / being torn down
            return
        detail.show(self.machine, self.selected)

    def on_storage_tree_highlighted(self, event: StorageTree.Highlighted) -> None:
        self.selected = event.ref
        self._show_detail()
        ref = event.ref
        self._post(lambda: self.SelectionChanged(ref))
        self._load_wear(ref)

    def on_header_banner_worst_selected(self, event: HeaderBanner.WorstSelected) -> None:
        self.go_to(event.array)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "sync":
            self._refresh_sync_pane()

    def show_tab(self, tab: str) -> None:
        self.main.query_one(TabbedContent).active = tab

    # ---- sync watching: events, sync pane, boost ------------------------------------------
    def _announce(self, events: list[SyncEvent], t: float) -> None:
        if not events:
            return
        stamp = time.strftime("%H:%M:%S", time.localtime(t)) if t > 1e9 else f"t+{t:,.0f}s"
        with contextlib.suppress(LookupError, Exception):
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

    def _refresh_sync_pane(self) -> None:
        try:
            if self.main.query_one(TabbedContent).active != "sync":
                return  # refreshed when its tab is shown; no redraws nobody sees
            pane = self.main.query_one(SyncPane)
        except Exception:
            return
        machine = self.machine
        slow: dict[str, tuple[str, ...]] = {}
        if machine is not None:
            for a in machine.arrays:
                working = tuple(m.device for m in a.members if m.role not in ("faulty", "spare"))
                slow[a.name] = self.meter.slowest(working)
        pane.refresh_views(
            self.tracker.views(),
            self.tracker.finished,
            machine=machine,
            rates=self.rates,
            slow=slow,
            boosted={r.array for r in self.boosts.records},
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
        plan, record = plan_boost(
            self.backend.read_text,
            target.name,
            target.sync.action,
            level=target.level,
            members=len(target.members),
            store=self.boosts,
            rotational=members_rotational(m, target.name),
        )
        if not plan.steps:
            self.notify(
                "the limits are already at least as high as a boost would set", title="boost"
            )
            return
        try:  # what to restore is on disk before anything can be raised
            self.boosts.begin(record)
        except (StateFileError, ValueError) as e:
            self.notify(f"boost refused: {e}", title="boost", severity="error", timeout=10)
            return

        def done(report: ExecutionReport | None) -> None:
            if report is not None and report.executed:
                self._keep_boost(record, report)
            else:
                self._forget_boost(record.array)

        self.push_screen(PlanPreviewScreen(plan, self.backend), done)

    def _forget_boost(self, array: str) -> None:
        try:
            self.boosts.forget(array)
        except StateFileError as e:
            self.notify(str(e), title="boost", severity="warning", timeout=10)

    def _keep_boost(self, record: BoostRecord, report: ExecutionReport) -> None:
        # Remember what to restore for every step that ran (even if a later one failed).
        ran = {o.step.argv for o in report.executed if o.exit_code == 0}
        kept = {
            k: v
            for k, v in record.previous.items()
            if any(k.split(":", 1)[1] in " ".join(argv) for argv in ran)
        }
        if not kept:
            self._forget_boost(record.array)
            return
        try:
            self.boosts.commit(
                BoostRecord(record.array, record.action, record.started_at, kept, record.applied)
            )
        except StateFileError as e:  # the pending record (written before) still restores all
            self.notify(str(e), title="boost", severity="warning", timeout=10)
        self.notify(
            f"{record.array}: limits raised; they will be put back when the {record.action} ends "
            "(even if raidman is closed and reopened meanwhile)",
            title="boost",
            timeout=10,
        )

    def _restore_finished_boosts(self, sample: LiveSample) -> None:
        if self.backend.read_only_reason:
            return
        for rec in due_restores(self.boosts, sample):
            if rec.array in self._restoring:
                continue
            self._restoring.add(rec.array)
            self._restore_worker(rec)

    @work(thread=True, group="boost-restore", exit_on_error=False)
    def _restore_worker(self, rec: BoostRecord) -> None:
        plan = restore_plan(rec, self.boosts)
        report = execute(plan, self.backend, audit=AuditLog())  # restores are logged too
        self._from_thread(self._restored, rec, plan, report)

    def _restored(self, rec: BoostRecord, plan: Plan, report: ExecutionReport) -> None:
        self._restoring.discard(rec.array)
        if report.ok:
            self._forget_boost(rec.array)
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
    def _maybe_audit(self, force: bool = False) -> None:
        now = time.monotonic()
        if self._audit_busy or self.probed is None:
            return
        if not force and self._audited_at is not None and now - self._audited_at < AUDIT_EVERY_S:
            return
        self._audit_busy = True
        self._audited_at = now
        self._audit_worker(self.probed)

    @work(thread=True, exclusive=True, group="audit", exit_on_error=False)
    def _audit_worker(self, machine: Machine) -> None:
        try:
            found = audit(machine, gather(self.backend, machine))
        except Exception as e:  # the engine is defensive; this is the last line of defence
            self._from_thread(self._audit_failed, e)
        else:
            self._from_thread(self._audit_done, found)

    def _audit_failed(self, error: Exception) -> None:
        self._audit_busy = False
        self.audit_count += 1
        self.notify(f"audit failed: {error}", title="audit", severity="warning")

    def _audit_done(self, found: tuple[Finding, ...]) -> None:
        self._audit_busy = False
        self.audit_count += 1
        self.findings = found
        with contextlib.suppress(Exception):
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
        pre = preflight_for(plan, machine, self.backend) if machine is not None else None

        def done(report: ExecutionReport | None) -> None:
            if report is not None and report.executed:
                self.refresh_probe()
                self._maybe_audit(force=True)

        self.push_screen(PlanPreviewScreen(plan, self.backend, preflight=pre), done)

    # ---- wizards and the audit log ----------------------------------------------------------
    def _after_wizard(self, report: ExecutionReport | None) -> None:
        if report is not None and report.executed:
            self.refresh_probe()
            self._maybe_audit(force=True)

    def _probed_or_say(self, what: str) -> Machine | None:
        if self.machine is None:
            self.notify("the first probe has not finished yet; try again in a moment", title=what)
        return self.machine

    def action_create_array(self) -> None:
        if (m := self._probed_or_say("new array")) is not None:
            self.push_screen(CreateArrayWizard(m, self.backend), self._after_wizard)

    def action_member_actions(self) -> None:
        if (m := self._probed_or_say("member actions")) is None:
            return
        if not any(not a.is_container for a in m.arrays):
            self.notify("no md arrays on this machine: n creates one", title="member actions")
            return
        a = self.selected_array()
        ref = self.selected
        member = ref.name if ref is not None and a is not None else None
        self.push_screen(
            MemberWizard(m, self.backend, array=a.name if a else None, member=member),
            self._after_wizard,
        )

    def action_sync_actions(self) -> None:
        if (m := self._probed_or_say("sync actions")) is None:
            return
        a = self.selected_array()
        self.push_screen(
            SyncWizard(m, self.backend, array=a.name if a else None), self._after_wizard
        )

    def action_audit_log(self) -> None:
        self.push_screen(AuditLogScreen())

    def action_help(self) -> None:
        screen = self.screen
        title = getattr(screen, "TITLE_TEXT", "") or type(screen).__name__.removesuffix("Screen")
        self.push_screen(HelpScreen(title or "raidman", key_rows(screen), HELP_EXTRA))

    # ---- wear -------------------------------------------------------------------------------
    def _open_store(self) -> SnapshotStore:
        if self._store is None:
            self._store = SnapshotStore.open()
            for note in self._store.notes:
                self._warn_from_thread(note, "wear database")
        return self._store

    def _wear_tick(self) -> None:
        self._wear_monitor_worker()

    @work(thread=True, exclusive=True, group="wear-monitor", exit_on_error=False)
    def _wear_monitor_worker(self) -> None:
        with self._store_lock:
            try:
                store = self._open_store()
                if self._monitor is None:
                    self._monitor = WearMonitor(self.backend, store)
                self._monitor.tick()
            except Exception as e:
                self._warn_from_thread(f"wear snapshot failed: {e}", "wear")

    def _load_wear(self, ref: NodeRef | None) -> None:
        m = self.machine
        if m is None or ref is None:
            return
        obj = m.device(ref.name) if ref.name else None
        if isinstance(obj, (Disk, MdArray)):
            self._wear_loader(m, obj)
        else:
            with contextlib.suppress(Exception):
                self.main.query_one(WearPane).show_nothing("select a disk or an array")

    @work(thread=True, exclusive=True, group="wear-view", exit_on_error=False)
    def _wear_loader(self, m: Machine, obj: Disk | MdArray) -> None:
        try:
            with self._store_lock:
                store = self._open_store()
                if isinstance(obj, MdArray):
                    wear = array_wear(store, obj.name)
                    self._from_thread(self._show_wear_array, obj, wear)
                    return
            reading = self.backend.smart(obj.name)
            serial = disk_serial(obj.name, reading.serial, obj.serial)
            with self._store_lock:
                history, syncs = load_disk_history(
                    store, serial, [a.name for a in m.arrays_of_disk(obj.name)]
                )
            self._from_thread(self._show_wear_disk, obj, reading, history, syncs)
        except Exception as e:
            self._warn_from_thread(f"wear view: {e}", "wear")

    def _show_wear_array(self, array: MdArray, wear: Any) -> None:
        with contextlib.suppress(Exception):
            self.main.query_one(WearPane).show_array(array, wear)

    def _show_wear_disk(self, disk: Disk, reading: Any, history: Any, syncs: Any) -> None:
        with contextlib.suppress(Exception):
            self.main.query_one(WearPane).show_disk(disk, reading, history, syncs)
