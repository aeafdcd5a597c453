"""What the main screen opens over itself: the wizards (``n``, ``a``, ``t``, ``v``) on the
array under the cursor, and a finding's one-key fix (its pre-flight read in a worker)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App

from app.model.devices import Machine, MdArray
from app.plans.audit_log import AuditLog
from app.plans.executor import ExecutionReport
from app.plans.guards.identity import record_disks
from app.plans.plan import Plan
from app.plans.render import preflight_for
from app.ui.host_view import FixReady, HostView, WorkerWarning, post_result
from app.ui.screens.main import MainScreen
from app.ui.screens.plan_preview import PlanPreviewScreen
from app.ui.screens.wizards import (
    ArrayWizard,
    CreateArrayWizard,
    DiskWizard,
    FilesystemWizard,
    MemberWizard,
    SyncWizard,
)
from widgets.findings import FindingsPane
from widgets.storage_tree import NodeRef


class Launchers(App[None]):
    """Wizards and finding fixes (a base class of ``RaidmanApp``)."""

    hostview: HostView
    machine: Machine | None
    selected: NodeRef | None

    if TYPE_CHECKING:  # provided by RaidmanApp

        def audit_log(self) -> AuditLog: ...

        def go_to(self, name: str) -> bool: ...

        def refresh_probe(self) -> None: ...

        def _audit_again(self) -> None: ...

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

    # ---- a finding's fix -------------------------------------------------------------------
    def on_findings_pane_selected(self, event: FindingsPane.Selected) -> None:
        self.go_to(event.device)
        if event.fix is not None:
            self._fix_worker(self.hostview, event.fix, self.machine)
        elif event.finding.fix_destroys_data:
            self.notify(
                "the fix for this finding would destroy data: see its detail; no one-key fix",
                title=event.finding.title,
                severity="warning",
            )

    @work(
        thread=True,
        exclusive=True,
        group="fix-preflight",
        exit_on_error=False,
        description="fix-preflight",
    )
    def _fix_worker(self, view: HostView, plan: Plan, machine: Machine | None) -> None:
        """Pre-flight reads the devices through the backend (wipefs, holders): not on the UI
        thread."""
        try:
            if machine is not None:  # serial/WWN of its disks: checked again before each step
                plan = record_disks(plan, machine)
            sbs = view.superblocks  # the audit's read; None: read now, in this worker
            pre = preflight_for(plan, machine, view.backend, sbs) if machine is not None else None
        except Exception as e:
            post_result(self, view, WorkerWarning(f"pre-flight failed: {e}", "fix"))
        else:
            post_result(self, view, FixReady(plan, pre))

    def _fix_ready(self, view: HostView, ready: FixReady) -> None:
        if not isinstance(self.screen, MainScreen):  # the admin went elsewhere meanwhile
            return
        self.push_screen(
            PlanPreviewScreen(
                ready.plan, view.backend, preflight=ready.preflight, audit=self.audit_log()
            ),
            self._after_run,
        )

    # ---- wizards ---------------------------------------------------------------------------
    def _after_run(self, report: ExecutionReport | None) -> None:
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
            view = self.hostview

            def kept_benchmarks() -> list[dict[str, Any]]:  # the wizard's worker calls it
                with view.store_lock:
                    return view.store().benchmarks()

            self.push_screen(
                CreateArrayWizard(
                    m, view.backend, audit=self.audit_log(), benchmarks=kept_benchmarks
                ),
                self._after_run,
            )

    def selected_disk(self) -> str | None:
        """The disk (or partition) under the cursor, as itself or as a member link."""
        m, ref = self.machine, self.selected
        if m is None or ref is None:
            return None
        for name in (ref.name, ref.via):
            if name and (m.disk(name) is not None or m.partition(name) is not None):
                return name
        return None

    def action_disk_actions(self, action: str = "") -> None:
        """Qualify, locate, retire, self-test, wipe, prepare, benchmark: on the tree's disk."""
        if (m := self._probed_or_say("disk actions")) is None:
            return
        disk = self.selected_disk()
        part = m.partition(disk) if disk else None
        self.push_screen(
            DiskWizard(
                m,
                self.hostview.backend,
                part.parent if part is not None and action != "wipe" else disk,
                action=action or None,
                audit=self.audit_log(),
                host=self.hostview.host,
            ),
            self._after_run,
        )

    def action_array_actions(self, action: str = "") -> None:
        """Stop, assemble, delete, mount, scheduled checks: on the tree's array."""
        if (m := self._probed_or_say("array actions")) is None:
            return
        a = self._volume_or_say(self.selected_array(), "array actions")
        self.push_screen(
            ArrayWizard(
                m,
                self.hostview.backend,
                a.name if a else None,
                action=action or None,
                audit=self.audit_log(),
            ),
            self._after_run,
        )

    def action_replace_member(self) -> None:
        self.action_member_actions("replace")

    def action_member_actions(self, action: str = "") -> None:
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
                self.hostview.backend,
                array=a.name if a else None,
                member=member,
                action=action or None,
                audit=self.audit_log(),
                host=self.hostview.host,
            ),
            self._after_run,
        )

    def action_sync_actions(self) -> None:
        if (m := self._probed_or_say("sync actions")) is None:
            return
        a = self._volume_or_say(self.selected_array(), "sync actions")
        self.push_screen(
            SyncWizard(
                m, self.hostview.backend, array=a.name if a else None, audit=self.audit_log()
            ),
            self._after_run,
        )

    def action_filesystem(self) -> None:
        if (m := self._probed_or_say("filesystem / LVM")) is None:
            return
        if not any(not a.is_container for a in m.arrays):
            self.notify("no md arrays on this machine: n creates one", title="filesystem / LVM")
            return
        a = self.selected_array()
        self.push_screen(
            FilesystemWizard(
                m, self.hostview.backend, array=a.name if a else None, audit=self.audit_log()
            ),
            self._after_run,
        )
