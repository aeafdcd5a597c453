"""The shown host's fields as the screens and widgets read them (``app.backend``,
``app.session``, ``app.sample_count``...): each is the shown ``HostView``'s. Anything else of it
is read where it lives: ``app.hostview`` (SMART seen, probe busy), ``app.stores`` (the sync
records and their lock), ``app.hosts_watch`` (hosts being probed), ``app.session.tracker``."""

from __future__ import annotations

from app.backend import Backend
from app.model.devices import Machine
from app.session import Session
from app.sync.boost import BoostStore
from app.ui.fleet import HostsWatch
from app.ui.host_view import HostView, WearStores


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
    def probed(self) -> Machine | None:
        """The last probe, without live state."""
        return self.session.view.probed
