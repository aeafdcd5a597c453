"""The Wear tab's requests: what the App publishes as ``wear_request`` (the device under the
cursor; at each sample while a sync runs, and once after it ended), with the SMART reading the
host's reads already hold when fresh enough. The pane reads the rest in its own worker
(``widgets.wear_pane``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import App

from app.model.devices import Machine
from app.session import Session
from app.ui.host_view import HostView
from widgets.storage_tree import NodeRef
from widgets.wear_source import WearRequest

SMART_VIEW_S = 60.0  # a disk's SMART figures in the Wear tab are re-read at most this often


class WearFollow(App[None]):
    """Publishes ``wear_request`` (a base class of ``RaidmanApp``)."""

    hostview: HostView
    machine: Machine | None
    selected: NodeRef | None
    wear_request: WearRequest | None

    if TYPE_CHECKING:  # provided by RaidmanApp

        @property
        def session(self) -> Session: ...

    # ---- wear --------------------------------------------------------------------------------
    def _follow_wear(self) -> None:
        """The Wear tab follows a running sync: reloaded at every sample while one runs (the
        kernel's write counters move each second) and once after it ended (the pane loads it
        only while shown)."""
        running = bool(self.session.view.syncs)
        if not (running or self.hostview.wear_followed):
            return
        self.hostview.wear_followed = running
        self._ask_wear(self.selected, follow=True)

    def _ask_wear(self, ref: NodeRef | None, *, follow: bool) -> None:
        m, view = self.machine, self.hostview
        if m is None or ref is None:
            return
        seen = view.smart_seen.get(ref.name) if follow and ref.name else None
        fresh = seen is not None and view.backend.now() - seen[0] < SMART_VIEW_S
        self.wear_request = WearRequest(
            machine=m,
            name=ref.name,
            backend=view.backend,
            store=view.store,
            lock=view.store_lock,
            smart_seen=view.smart_seen,
            reading=seen[1] if seen is not None and fresh else None,
            follow=follow,
        )
