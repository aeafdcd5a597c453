"""The App's thread workers: every backend call of the watch (probe, sample, md events, SMART
reads, the audit, boost restores) runs here, never on the UI thread. Each takes the
``HostView`` it started for and posts its result as a ``HostResult`` carrying it (the App drops
one whose host is no longer shown, in one place: ``RaidmanApp.on_host_result``)."""

from __future__ import annotations

import contextlib
import importlib
import threading
import time
from typing import TYPE_CHECKING

from textual import work
from textual.app import App
from textual.worker import get_current_worker

from app.backend import EventSource
from app.model.smart import SmartReading
from app.model.smart_tables import last_self_test
from app.plans.audit_log import AuditLog
from app.plans.executor import execute
from app.plans.guards.eligibility import smart_warnings
from app.plans.superblocks import read_superblocks
from app.report import report_findings
from app.sync.boost import BoostRecord, restore_plan
from app.ui.host_view import (
    AuditDone,
    BoostRestored,
    HostView,
    ProbeDone,
    ProbeFailed,
    SampleDone,
    SampleFailed,
    SmartChanged,
    WorkerWarning,
    post_result,
)
from app.wear.smart_reads import SmartRead, take_snapshot

if TYPE_CHECKING:
    from app.ui.fleet import HostsWatch

EVENT_WAIT_S = 1.0  # the event watcher's longest block (so that quitting never waits longer)


def smart_verdict(reading: SmartReading) -> tuple[object, ...]:
    """What the SMART findings depend on quickly: readable, health, pre-fail counts > 0, and
    the newest finished self-test (a self-test plan's result re-audits: the tree's mark)."""
    last = last_self_test(reading)
    test = None if last is None else (last.passed, last.lifetime_hours, last.kind)
    health = (reading.health or "").upper()
    return reading.available, health, smart_warnings(reading), test


def _read_only(view: HostView) -> str | None:
    try:
        return view.backend.read_only_reason
    except Exception as e:  # a backend that cannot say: it is not to be written to
        return f"unknown ({e})"


# imported after the first frame (``_warm_imports``): main_actions imports them on use
KEYS_OPEN = ("app.ui.screens.wizards", "app.ui.screens.plan_preview")


class Sampler:
    """The thread that samples: it lives as long as the App and takes a sample of the view it
    is handed (``take``), posting it as a ``HostResult`` like every worker. A Textual worker per
    sample cost the UI thread, each second, a ``Worker``, its task and three ``StateChanged``
    messages (issue 44); a backend call stays off the UI thread either way."""

    def __init__(self, app: App[None]) -> None:
        self._app = app
        self._cond = threading.Condition()
        self._wanted: HostView | None = None
        self._closed = False
        self._thread: threading.Thread | None = None

    def take(self, view: HostView) -> None:
        with self._cond:
            if self._closed:
                return
            self._wanted = view
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="sampler", daemon=True)
                self._thread.start()
            self._cond.notify()

    def close(self) -> None:
        """The App ends: the thread returns once its sample in flight, if any, is taken."""
        with self._cond:
            self._closed = True
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._wanted is None and not self._closed:
                    self._cond.wait()
                view, self._wanted = self._wanted, None
                if self._closed or view is None:
                    return
            result: SampleDone | SampleFailed
            try:
                result = SampleDone(view.backend.sample())
            except Exception as e:
                result = SampleFailed(e)
            post_result(self._app, view, result)


class HostWorkers(App[None]):
    """The workers of ``RaidmanApp`` (a base class of it: Textual's ``@work`` wants the node
    the workers belong to)."""

    hostview: HostView
    hosts_watch: HostsWatch

    if TYPE_CHECKING:  # provided by RaidmanApp

        def audit_log(self) -> AuditLog: ...

        def refresh_sample(self, *, event: bool = False) -> None: ...

    @work(
        thread=True, exclusive=True, group="md-events", exit_on_error=False, description="md-events"
    )
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
                with contextlib.suppress(RuntimeError):  # the app is shutting down
                    self.call_from_thread(self.refresh_sample, event=True)
            else:  # timed out, or no md yet (returned at once): not a busy loop
                worker.cancelled_event.wait(max(0.0, EVENT_WAIT_S - (time.monotonic() - t0)))

    @work(thread=True, group="imports", exit_on_error=False, description="imports")
    def _warm_imports(self) -> None:
        """What the keys open (the wizards, the plan preview), imported once the first frame is
        on screen and beside the watch: not before that frame (first paint), nor on the key."""
        for name in KEYS_OPEN:
            importlib.import_module(name)

    @work(thread=True, exclusive=True, group="probe", exit_on_error=False, description="probe")
    def _probe_worker(self, view: HostView) -> None:
        try:
            machine = view.backend.probe()
        except Exception as e:
            self.hosts_watch.open_probed(view.backend, None, e)
            post_result(self, view, ProbeFailed(e, _read_only(view)))
        else:
            self.hosts_watch.open_probed(view.backend, machine)
            post_result(self, view, ProbeDone(machine, _read_only(view)))

    def _sample_worker(self, view: HostView) -> None:
        """A sample of ``view``'s backend, taken by the sampler thread (one at a time: the
        ``SampleGate`` asks for the next only once this one has landed)."""
        sampler: Sampler | None = getattr(self, "_sampler", None)
        if sampler is None:
            sampler = self._sampler = Sampler(self)
        sampler.take(view)

    def on_unmount(self) -> None:
        sampler: Sampler | None = getattr(self, "_sampler", None)
        if sampler is not None:
            sampler.close()

    @work(thread=True, exclusive=True, group="audit", exit_on_error=False, description="audit")
    def _audit_worker(self, view: HostView) -> None:
        machine = view.session.view.probed
        if machine is None:
            return
        try:
            # SMART as the session's reads last saw it (the audit never runs smartctl itself);
            # the same audit as `raidman report` (its sync records' speeds too)
            smart = {name: reading for name, (_, reading) in list(view.smart_seen.items())}
            found = report_findings(view.backend, machine, smart, view.store(), view.store_lock)
            sbs = read_superblocks(machine, view.backend)  # member superblocks for the Details
        except Exception as e:  # the engine is defensive; this is the last line of defence
            post_result(self, view, AuditDone(None, e))
        else:
            post_result(self, view, AuditDone(found, superblocks=sbs))

    @work(thread=True, group="smart", exit_on_error=False, description="smart")
    def _smart_worker(self, view: HostView, reads: tuple[SmartRead, ...]) -> None:
        """The session's SMART reads, beside the sampler (never in its way); they stay with the
        host they started on, whichever is opened meanwhile."""
        changed = False
        backend, seen_at, kernel_count = view.backend, view.smart_seen, view.session.kernel_count
        store = view.store()

        def seen(disk: str, reading: SmartReading) -> None:
            nonlocal changed
            old = seen_at.get(disk)
            changed |= old is None or smart_verdict(old[1]) != smart_verdict(reading)
            seen_at[disk] = (backend.now(), reading)

        worker = get_current_worker()
        for r in reads:
            if worker.is_cancelled:
                # the App is quitting: the start-up sweep of 1,000 disks held `q` until it was
                # done (issue 44); what is not read now is read at the next start
                return
            try:
                take_snapshot(
                    backend, store, r, view.store_lock, on_reading=seen, kernel=kernel_count
                )
            except Exception as e:
                post_result(
                    self, view, WorkerWarning(f"SMART snapshot of {r.disk} failed: {e}", "wear")
                )
        if changed:  # a first reading, or a disk's health/counters changed: findings and badges
            post_result(self, view, SmartChanged())

    @work(thread=True, group="boost-restore", exit_on_error=False, description="boost-restore")
    def _restore_worker(self, view: HostView, rec: BoostRecord, audit: AuditLog) -> None:
        plan = restore_plan(rec, view.boosts)
        report = execute(plan, view.backend, audit=audit)  # restores are logged too
        post_result(self, view, BoostRestored(rec, plan, report))

    def _restored(self, view: HostView, restored: BoostRestored) -> None:
        """A boost's restore ran (its sync ended): the session forgets the boost, a toast says
        what was put back or why not (the host need not be the one shown)."""
        rec, plan, report = restored.record, restored.plan, restored.report
        view.session.restored(rec, report.ok)
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
