"""The shown host's fields under the names the screens, tests and benchmarks read
(``app.backend``, ``app.session``, ``app.sample_count``...): each is the shown ``HostView``'s."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.backend import Backend
from app.model.devices import Machine
from app.session import Session
from app.sync.boost import BoostStore
from app.sync.throughput import Rate
from app.sync.tracker import SyncTracker
from app.ui.fleet import HostsWatch
from app.ui.host_view import HostView, WearStores
from app.wear.snapshots import SnapshotStore


class ShownHost:
    """The shown host's fields under the names the screens and tests read (a base class of
    ``RaidmanApp``: ``hostview`` is the one shown)."""

    hostview: HostView
    stores: WearStores
    hosts_watch: HostsWatch

    @property
    def hosts(self) -> dict[str, Backend]:
        return self.hosts_watch.hosts

    @property
    def backend(self) -> Backend:
        return self.hostview.backend

    @property
    def host(self) -> str | None:
        return self.hostview.host

    @property
    def session(self) -> Session:
        return self.hostview.session

    @property
    def boosts(self) -> BoostStore:
        return self.hostview.boosts

    @property
    def sample_count(self) -> int:
        return self.hostview.sample_count

    @property
    def _smart_seen(self) -> dict[str, Any]:
        return self.hostview.smart_seen

    @property
    def _store_lock(self) -> Any:
        return self.stores.lock

    @property
    def _probe_busy(self) -> bool:
        return self.hostview.probe_busy

    @property
    def _fleet_busy(self) -> dict[str, float]:
        return self.hosts_watch.busy

    def _open_store(self, host: str | None = None) -> SnapshotStore:
        """The sync records of ``host`` (default: the one shown; None: this machine)."""
        return self.stores.open(self.host if host is None else host)

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
