"""One watched host as the App shows it: ``HostView``, and the typed messages worker results
come back in.

The App keeps one ``HostView`` per host (one only without a hosts view) and shows one at a time:
``RaidmanApp.hostview``. Opening a host is assigning its ``HostView``; every worker takes the
view it started for and posts a ``HostResult`` that carries it, so a result that lands after its
host was closed or another opened is recognised in one place (``RaidmanApp.on_host_result``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from app.backend import Backend
from app.model.devices import Machine
from app.model.live import LiveSample
from app.model.smart import SmartReading
from app.paths import DB_FILE, host_state_dir
from app.plans.executor import ExecutionReport
from app.plans.guards.preflight import Preflight
from app.plans.plan import Plan
from app.plans.superblocks import Superblocks
from app.rules.finding import Finding
from app.session import SampleGate, Session
from app.sync.boost import BoostRecord, BoostStore
from app.wear.snapshots import SnapshotStore


class WearStores:
    """The sync-record databases of every host shown, opened once each (from worker threads
    too), and the one lock their writers take; never held while waiting for the UI thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._stores: dict[str | None, SnapshotStore] = {}
        self._opening = threading.Lock()

    def open(self, host: str | None) -> SnapshotStore:
        """``host``'s records (None: this machine's, in the state directory)."""
        with self._opening:
            store = self._stores.get(host)
            if store is None:
                path = None if host is None else host_state_dir(host) / DB_FILE
                store = self._stores[host] = SnapshotStore.open(path)
        return store

    def notes(self) -> list[str]:
        return [n for st in self._stores.values() for n in st.notes]


@dataclass(eq=False)
class HostView:
    """What the App holds of one watched host: its backend and live session, its SMART readings
    and findings (reopening a host shows them at once), and the state of its polling (reset
    when the host is opened again: ``reopened``)."""

    host: str | None  # None: the machine raidman runs on (or the one backend it was given)
    backend: Backend
    session: Session
    boosts: BoostStore
    stores: WearStores
    # disk -> (backend time it was read, reading): the audit's SMART, the Wear tab's cache
    smart_seen: dict[str, tuple[float, SmartReading]] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()
    superblocks: Superblocks | None = None
    probe_busy: bool = False
    probe_wanted: bool = False  # a probe asked for while the hosts view's ran: when it lands
    probe_asked: bool = False  # the admin pressed r: the probe's result is said in a toast
    sampling: SampleGate = field(default_factory=SampleGate)
    sample_count: int = 0
    wear_followed: bool = False  # the Wear tab followed a running sync at the last sample

    @property
    def store_lock(self) -> threading.Lock:
        return self.stores.lock

    def store(self) -> SnapshotStore:
        """Its sync records (another host's are never mixed with this machine's)."""
        return self.stores.open(self.host)

    def reopened(self) -> HostView:
        """The same host shown again: its session, SMART and findings kept, polling afresh."""
        self.probe_busy = self.probe_wanted = self.probe_asked = self.wear_followed = False
        self.sampling = SampleGate()
        self.sample_count = 0
        return self


@dataclass(frozen=True)
class ProbeDone:
    machine: Machine
    # the backend's read-only reason as of this probe (read in the worker: over ssh it can
    # change, "not root" then "nosuchhost not reached")
    read_only: str | None = None


@dataclass(frozen=True)
class ProbeFailed:
    error: Exception
    read_only: str | None = None


@dataclass(frozen=True)
class SampleDone:
    sample: LiveSample


@dataclass(frozen=True)
class SampleFailed:
    error: Exception


@dataclass(frozen=True)
class AuditDone:
    """The audit of the host's machine: its findings, or why it failed."""

    found: tuple[Finding, ...] | None
    error: Exception | None = None
    superblocks: Superblocks | None = None  # the members' (mdadm --examine), read beside it


@dataclass(frozen=True)
class SmartChanged:
    """A first SMART reading, or a disk's health or counters changed: audit again."""


@dataclass(frozen=True)
class BoostRestored:
    record: BoostRecord
    plan: Plan
    report: ExecutionReport


@dataclass(frozen=True)
class BoostPlanned:
    """The boost of a syncing array, planned from the limits read now (``record``: what a
    restore puts back)."""

    plan: Plan
    record: BoostRecord


@dataclass(frozen=True)
class FixReady:
    """A finding's fix with its pre-flight (read through the backend: wipefs, holders)."""

    plan: Plan
    preflight: Preflight | None


@dataclass(frozen=True)
class WorkerWarning:
    text: str
    title: str


Result = (
    ProbeDone
    | ProbeFailed
    | SampleDone
    | SampleFailed
    | AuditDone
    | SmartChanged
    | BoostRestored
    | BoostPlanned
    | FixReady
    | WorkerWarning
)


class HostResult(Message):
    """A worker's result for one host (posted from the worker's thread)."""

    def __init__(self, view: HostView, result: Result) -> None:
        super().__init__()
        self.view = view
        self.result = result

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"HostResult({self.view.host!r}, {type(self.result).__name__})"


def post_result(target: Any, view: HostView, result: Result) -> None:
    """Post ``result`` for ``view`` to ``target`` (the App) from any thread; a closing app
    drops it."""
    target.post_message(HostResult(view, result))
