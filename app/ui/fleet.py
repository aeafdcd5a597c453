"""Several hosts: the hosts view's probes and audits, each host's line (``RaidmanApp.fleet``),
and opening one host's full view (``HostsWatch.open``: its ``HostView``, kept while the admin
looks at other hosts)."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Protocol

from textual.message import Message

from app.backend import Backend
from app.escape import escape_controls
from app.fleet import HostStatus, unreachable_reason
from app.hosts import host_boost_store
from app.model.devices import Machine
from app.report import report_findings
from app.rules.finding import Finding
from app.session import Session
from app.ui.host_view import HostView, WearStores


class FleetApp(Protocol):
    """What the hosts view needs of the App (``RaidmanApp``)."""

    fleet: tuple[HostStatus, ...]
    hostview: HostView
    stores: WearStores
    probe_interval: float

    @property
    def host(self) -> str | None: ...

    def refresh_probe(self) -> None: ...

    def post_message(self, message: Message) -> bool: ...

    def run_worker(
        self,
        work: Callable[[], None],
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Any: ...


HOST_TIMEOUT_S = 60.0  # a host whose probe has not answered for this long is shown unreachable
HOST_AUDIT_S = 60.0  # a host not open is audited (for its worst finding) at most this often
# a host only listed (not open) is probed every LISTED_EVERY-th probe interval (30 s), a syncing
# one every interval (its ETA moves): the open host is the one watched closely (issue 29)
LISTED_EVERY = 3


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


class HostsWatch:
    """The hosts of a hosts view (empty with one machine) and what the App knows of each."""

    def __init__(self, app: FleetApp, hosts: Mapping[str, Backend], timeout: float) -> None:
        self.app = app
        self.hosts = dict(hosts)
        self.timeout = timeout
        self.views: dict[str, HostView] = {}
        # host -> when its probe started (monotonic): the hosts view's or, for the open host,
        # the main view's (each posts HostProbed when it lands); never two at once for a host
        self.busy: dict[str, float] = {}
        self.audited: dict[str, float] = {}  # host -> when its last audit started
        self.started: dict[str, float] = {}  # host -> when its last hosts-view probe started

    def view_of(self, host: str, stores: WearStores, sample_interval: float) -> HostView:
        """``host``'s view: the one kept from an earlier visit, or a new one."""
        view = self.views.get(host)
        if view is not None:
            return view.reopened()
        boosts = host_boost_store(host)
        session = Session(store=stores.open(host) if sample_interval > 0 else None, boosts=boosts)
        view = HostView(host, self.hosts[host], session, boosts, stores)
        self.views[host] = view
        return view

    def host_of(self, backend: Backend) -> str | None:
        return next((h for h, b in self.hosts.items() if b is backend), None)

    def set_status(self, host: str, **changes: Any) -> None:
        app = self.app
        app.fleet = tuple(replace(s, **changes) if s.host == host else s for s in app.fleet)

    def deadlines(self) -> None:
        """A host whose probe has not come back within ``timeout`` is unreachable (its probe
        may still answer later: its line then says so)."""
        now = time.monotonic()
        for host, started in self.busy.items():
            if now - started > self.timeout:
                why = f"no answer within {self.timeout:g} s"
                if next((s.unreachable for s in self.app.fleet if s.host == host), None) != why:
                    self.set_status(host, unreachable=why)

    def due(self, host: str, now: float) -> bool:
        """Whether a listed host's line is old enough to probe it again: every LISTED_EVERY-th
        probe interval, every interval while it syncs (half an interval's slack for the timer)."""
        interval = self.app.probe_interval
        syncing = any(s.syncing for s in self.app.fleet if s.host == host)
        every = interval * (1 if syncing else LISTED_EVERY)
        return now - self.started.get(host, -every) >= every - interval / 2

    def refresh(self) -> None:
        """Probe every host not open whose line is due (``due``), each in a worker of its own,
        never two at once for one host (the results come back as ``HostProbed`` messages)."""
        self.deadlines()
        now = time.monotonic()
        for host, backend in self.hosts.items():
            if host in self.busy or host == self.app.host:
                continue  # the open host's own probes keep its line current
            if not self.due(host, now):
                continue
            self.busy[host] = self.started[host] = now
            audit_too = now - self.audited.get(host, -HOST_AUDIT_S) >= HOST_AUDIT_S
            if audit_too:
                self.audited[host] = now
            self.app.run_worker(
                functools.partial(self._probe, host, backend, audit_too),
                name=f"hosts:{host}",
                group=f"hosts:{host}",
                thread=True,
                exit_on_error=False,
            )

    def _probe(self, host: str, backend: Backend, audit_too: bool) -> None:
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
                stores = self.app.stores
                findings = report_findings(backend, machine, smart, stores.open(host), stores.lock)
        self.app.post_message(HostProbed(host, machine, why, findings))

    def open_probed(
        self, backend: Backend, machine: Machine | None, error: Exception | None = None
    ) -> None:
        """The open host's probe (the main view's) also brings its line in the hosts view."""
        host = self.host_of(backend)
        if host is not None:
            why = (
                unreachable_reason(backend)
                if error is None
                else (escape_controls(str(error)) or "probe failed")
            )
            self.app.post_message(HostProbed(host, machine, why))

    def probed(self, message: HostProbed) -> None:
        app = self.app
        self.busy.pop(message.host, None)
        view = app.hostview
        if message.host == app.host and view.probe_wanted:
            view.probe_wanted = False
            app.refresh_probe()
        if message.unreachable is not None or message.machine is None:
            # the last machine seen stays (older, but what there is); the line says unreachable
            self.set_status(message.host, unreachable=message.unreachable or "no answer")
        else:
            self.set_status(message.host, machine=message.machine, unreachable=None)
        if message.findings is not None and message.host != app.host:
            self.set_status(message.host, findings=message.findings)

    def audited_host(self, backend: Backend, found: tuple[Finding, ...] | None) -> None:
        """An open host's audit landed (maybe after it was closed): its line names the worst."""
        host = self.host_of(backend)
        if host is not None and found is not None:
            if (view := self.views.get(host)) is not None:
                view.findings = found
            self.set_status(host, findings=found)


def initial_statuses(hosts: Mapping[str, Backend]) -> tuple[HostStatus, ...]:
    return tuple(HostStatus(h) for h in hosts)
