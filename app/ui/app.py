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
from typing import Any, ClassVar

from textual import work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import TabbedContent

from app.model.devices import Machine
from app.model.live import LiveSample
from app.ui.commands import GoToDeviceProvider
from app.ui.live import merge_live
from app.ui.screens.main import MainScreen, MdstatView
from backends.base import Backend
from widgets.device_detail import DeviceDetail
from widgets.header_banner import HeaderBanner, NotesBar
from widgets.storage_tree import NodeRef, StorageTree


class RaidmanApp(App[None]):
    """The storage stack of one machine, as a live tree with details."""

    CSS_PATH = "app.tcss"
    TITLE = "raidman"
    COMMANDS: ClassVar[set[Any]] = App.COMMANDS | {GoToDeviceProvider}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("r", "refresh", "Refresh"),
    ]

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

    # ---- life cycle ------------------------------------------------------------------
    def get_default_screen(self) -> MainScreen:
        return MainScreen()

    def on_mount(self) -> None:
        self.sub_title = self.backend.name
        self.refresh_probe()
        if self.probe_interval > 0:
            self.set_interval(self.probe_interval, self.refresh_probe)
        if self.sample_interval > 0:
            self.set_interval(self.sample_interval, self.refresh_sample)

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
        """Put the tree cursor on a device (kernel name, VG name or node key)."""
        return self.storage_tree.go_to(name)

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
        with contextlib.suppress(RuntimeError):  # RuntimeError: the app is shutting down
            self.call_from_thread(callback, *args)

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

    def _sample_done(self, sample: LiveSample) -> None:
        self._sample_busy = False
        self.sample_count += 1
        self.live = sample
        if self.probed is None:
            return
        machine = merge_live(self.probed, sample)
        self.machine = machine
        self._post(lambda: self.LiveUpdated(sample, machine))

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
            screen.query_one(HeaderBanner).set_machine(machine)
        except Exception:  # the main screen is not composed yet: its on_mount catches up
            return
        if machine is None:
            return
        screen.query_one(NotesBar).set_notes(machine.notes)
        screen.query_one(StorageTree).update_machine(machine)
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

    def show_tab(self, tab: str) -> None:
        self.main.query_one(TabbedContent).active = tab
