"""Boost: raise a syncing array's limits through a previewed plan, keep what to put back, and
put it back when the sync ends (``app.sync.boost``; the restore runs in ``app.ui.workers``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.app import App

from app.model.devices import Machine, MdArray
from app.plans.audit_log import AuditLog
from app.plans.executor import ExecutionReport
from app.statefiles import StateFileError
from app.sync.boost import BoostRecord, plan_boost_for
from app.ui.host_view import BoostPlanned, BoostRestored, HostView, WorkerWarning, post_result
from app.ui.screens.main import MainScreen
from app.ui.screens.plan_preview import PlanPreviewScreen


class BoostActions(App[None]):
    """``b``: boost the selected (or only) syncing array (a base class of ``RaidmanApp``)."""

    hostview: HostView

    if TYPE_CHECKING:  # provided by RaidmanApp

        def audit_log(self) -> AuditLog: ...

        def selected_array(self) -> MdArray | None: ...

        def refresh_sample(self, *, event: bool = False) -> None: ...

    def action_boost(self) -> None:
        """Raise the sync limits for the selected (or only) syncing array, via a previewed plan."""
        view = self.hostview
        m = view.session.view.machine
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
        self._boost_worker(view, m, target)

    @work(
        thread=True,
        exclusive=True,
        group="boost-plan",
        exit_on_error=False,
        description="boost-plan",
    )
    def _boost_worker(self, view: HostView, machine: Machine, target: MdArray) -> None:
        """The limits in force are read through the backend (sysfs, /proc/sys): not here."""
        try:
            plan, record = plan_boost_for(machine, view.backend.read_text, target, view.boosts)
        except Exception as e:
            post_result(self, view, WorkerWarning(f"boost: {e}", "boost"))
        else:
            post_result(self, view, BoostPlanned(plan, record))

    def _boost_planned(self, view: HostView, planned: BoostPlanned) -> None:
        plan, record = planned.plan, planned.record
        if not isinstance(self.screen, MainScreen):  # the admin went elsewhere meanwhile
            return
        if not plan.steps:
            self.notify(
                "the limits are already at least as high as a boost would set", title="boost"
            )
            return
        try:  # what to restore is on disk before anything can be raised
            view.session.boost_starting(record)
        except (StateFileError, ValueError) as e:
            self.notify(f"boost refused: {e}", title="boost", severity="error", timeout=10)
            return

        def done(report: ExecutionReport | None) -> None:
            self._kept_boost(view, record, report)

        self.push_screen(PlanPreviewScreen(plan, view.backend, audit=self.audit_log()), done)

    def _kept_boost(
        self, view: HostView, record: BoostRecord, report: ExecutionReport | None
    ) -> None:
        try:
            kept = view.session.boost_ran(record, report)
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

    def _restored(self, view: HostView, restored: BoostRestored) -> None:
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
