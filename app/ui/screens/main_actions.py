"""What the main screen's keys open over it: the wizards (``n``, ``a``, ``t``, ``v``) on the array
under the cursor, a boost of a syncing array (``b``: raise its limits through a previewed plan;
the restore when the sync ends is the App's, ``app.ui.workers``), and a finding's one-key fix.
Plans and pre-flight reads run in this screen's thread workers; their results come back through
the App (``RaidmanApp.on_host_result``: a result for a host no longer shown is dropped there)."""

from __future__ import annotations

from typing import Any, Protocol, cast

from textual import work
from textual.binding import Binding, BindingType
from textual.screen import Screen

from app.model.devices import Machine, MdArray
from app.plans.audit_log import AuditLog
from app.plans.executor import ExecutionReport
from app.plans.guards.identity import record_disks
from app.plans.plan import Plan
from app.plans.render import preflight_for
from app.statefiles import StateFileError
from app.sync.boost import BoostRecord, plan_boost_for
from app.ui.host_view import BoostPlanned, FixReady, HostView, WorkerWarning, post_result
from widgets.findings import FindingsPane
from widgets.tree_spec import NodeRef


class Watching(Protocol):
    """What these actions read of the App (``app.ui.app.RaidmanApp``; not imported: it imports
    the main screen)."""

    hostview: HostView
    machine: Machine | None
    selected: NodeRef | None

    def audit_log(self) -> AuditLog: ...

    def go_to(self, name: str) -> bool: ...

    def refresh_probe(self) -> None: ...

    def refresh_sample(self, *, event: bool = False) -> None: ...

    def audit_again(self) -> None: ...


# MainScreen's keys for these, after its tab keys (a base class's BINDINGS would come first).
# q is the App's too (the hosts view quits with it), listed here so that the footer keeps its
# order: the tabs, quit, refresh, what this screen opens, then the App's (audit log, help)
ACTION_BINDINGS: list[BindingType] = [
    Binding("q", "app.quit", "Quit"),
    Binding("r", "app.refresh", "Refresh"),
    Binding("n", "create_array", "New array"),
    Binding("a", "member_actions", "Members"),
    Binding("t", "sync_actions", "Sync/tune"),
    Binding("v", "filesystem", "FS/LVM"),
    Binding("D", "disk_actions", "Disk: qualify, locate, retire, test", show=False),
    Binding("A", "array_actions", "Array: stop, assemble, delete, mount", show=False),
    Binding("b", "boost", "Boost sync"),
]


class MainActions(Screen[None]):
    """The main screen's wizards, boost and finding fixes (a base class of ``MainScreen``)."""

    @property
    def raidman(self) -> Watching:
        return cast("Watching", self.app)

    def selected_array(self) -> MdArray | None:
        """The array under the cursor, or the one a selected member link / partition belongs to."""
        app = self.raidman
        m, ref = app.machine, app.selected
        if m is None or ref is None:
            return None
        for name in (ref.via, ref.name):
            if name and m.array(name) is not None:
                return m.array(name)
        arrays = m.arrays_of_disk(ref.name) if ref.name else ()
        if not arrays and ref.name:  # a member partition selected as itself, not as a link
            arrays = tuple(a for a in m.arrays if a.member(ref.name) is not None)
        return arrays[0] if len(arrays) == 1 else None

    def _after_run(self, report: ExecutionReport | None) -> None:
        if report is not None and report.executed:
            self.raidman.refresh_probe()
            self.raidman.audit_again()

    # ---- a finding's fix -------------------------------------------------------------------
    def on_findings_pane_selected(self, event: FindingsPane.Selected) -> None:
        app = self.raidman
        app.go_to(event.device)
        if event.fix is not None:
            self._fix_worker(app.hostview, event.fix, app.machine)
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
            post_result(self.app, view, WorkerWarning(f"pre-flight failed: {e}", "fix"))
        else:
            post_result(self.app, view, FixReady(plan, pre))

    def fix_ready(self, view: HostView, ready: FixReady) -> None:
        from app.ui.screens.plan_preview import PlanPreviewScreen  # on use (first paint)

        if self.app.screen is not self:  # the admin went elsewhere meanwhile
            return
        self.app.push_screen(
            PlanPreviewScreen(
                ready.plan, view.backend, preflight=ready.preflight, audit=self.raidman.audit_log()
            ),
            self._after_run,
        )

    # ---- wizards ---------------------------------------------------------------------------
    def _probed_or_say(self, what: str) -> Machine | None:
        m = self.raidman.machine
        if m is None:
            self.notify("the first probe has not finished yet; try again in a moment", title=what)
        return m

    def _volume_or_say(self, a: MdArray | None, what: str) -> MdArray | None:
        """A container (IMSM/DDF) is no target of member or sync actions: its first volume
        stands for it, and a note says so."""
        m = self.raidman.machine
        if a is None or not a.is_container or m is None:
            return a
        volumes = [v for v in m.arrays if v.container == a.name and not v.is_container]
        names = ", ".join(v.name for v in volumes) or "none"
        self.notify(
            f"{a.name} is a container ({a.metadata or 'external'}): {what} act on its volumes"
            f" ({names})",
            title=what,
        )
        return volumes[0] if volumes else None

    def action_create_array(self) -> None:
        from app.ui.screens.wizards import CreateArrayWizard  # on use (first paint)

        if (m := self._probed_or_say("new array")) is not None:
            view = self.raidman.hostview

            def kept_benchmarks() -> list[dict[str, Any]]:  # the wizard's worker calls it
                with view.store_lock:
                    return view.store().benchmarks()

            self.app.push_screen(
                CreateArrayWizard(
                    m, view.backend, audit=self.raidman.audit_log(), benchmarks=kept_benchmarks
                ),
                self._after_run,
            )

    def selected_disk(self) -> str | None:
        """The disk (or partition) under the cursor, as itself or as a member link."""
        app = self.raidman
        m, ref = app.machine, app.selected
        if m is None or ref is None:
            return None
        for name in (ref.name, ref.via):
            if name and (m.disk(name) is not None or m.partition(name) is not None):
                return name
        return None

    def action_disk_actions(self, action: str = "") -> None:
        """Qualify, locate, retire, self-test, wipe, prepare, benchmark: on the tree's disk."""
        from app.ui.screens.wizards import DiskWizard  # on use (first paint)

        if (m := self._probed_or_say("disk actions")) is None:
            return
        disk = self.selected_disk()
        part = m.partition(disk) if disk else None
        view = self.raidman.hostview
        self.app.push_screen(
            DiskWizard(
                m,
                view.backend,
                part.parent if part is not None and action != "wipe" else disk,
                action=action or None,
                audit=self.raidman.audit_log(),
                host=view.host,
            ),
            self._after_run,
        )

    def action_array_actions(self, action: str = "") -> None:
        """Stop, assemble, delete, mount, scheduled checks: on the tree's array."""
        from app.ui.screens.wizards import ArrayWizard  # on use (first paint)

        if (m := self._probed_or_say("array actions")) is None:
            return
        a = self._volume_or_say(self.selected_array(), "array actions")
        self.app.push_screen(
            ArrayWizard(
                m,
                self.raidman.hostview.backend,
                a.name if a else None,
                action=action or None,
                audit=self.raidman.audit_log(),
            ),
            self._after_run,
        )

    def action_replace_member(self) -> None:
        self.action_member_actions("replace")

    def action_member_actions(self, action: str = "") -> None:
        from app.ui.screens.wizards import MemberWizard  # on use (first paint)

        if (m := self._probed_or_say("member actions")) is None:
            return
        if not any(not a.is_container for a in m.arrays):
            self.notify("no md arrays on this machine: n creates one", title="member actions")
            return
        a = self._volume_or_say(self.selected_array(), "member actions")
        ref = self.raidman.selected
        member = ref.name if ref is not None and a is not None else None
        self.app.push_screen(
            MemberWizard(
                m,
                self.raidman.hostview.backend,
                array=a.name if a else None,
                member=member,
                action=action or None,
                audit=self.raidman.audit_log(),
                host=self.raidman.hostview.host,
            ),
            self._after_run,
        )

    def action_sync_actions(self) -> None:
        from app.ui.screens.wizards import SyncWizard  # on use (first paint)

        if (m := self._probed_or_say("sync actions")) is None:
            return
        a = self._volume_or_say(self.selected_array(), "sync actions")
        self.app.push_screen(
            SyncWizard(
                m,
                self.raidman.hostview.backend,
                array=a.name if a else None,
                audit=self.raidman.audit_log(),
            ),
            self._after_run,
        )

    def action_filesystem(self) -> None:
        from app.ui.screens.wizards import FilesystemWizard  # on use (first paint)

        if (m := self._probed_or_say("filesystem / LVM")) is None:
            return
        if not any(not a.is_container for a in m.arrays):
            self.notify("no md arrays on this machine: n creates one", title="filesystem / LVM")
            return
        a = self.selected_array()
        self.app.push_screen(
            FilesystemWizard(
                m,
                self.raidman.hostview.backend,
                array=a.name if a else None,
                audit=self.raidman.audit_log(),
            ),
            self._after_run,
        )

    # ---- boost -----------------------------------------------------------------------------
    def action_boost(self) -> None:
        """Raise the sync limits for the selected (or only) syncing array, via a previewed plan."""
        view = self.raidman.hostview
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
            post_result(self.app, view, WorkerWarning(f"boost: {e}", "boost"))
        else:
            post_result(self.app, view, BoostPlanned(plan, record))

    def boost_planned(self, view: HostView, planned: BoostPlanned) -> None:
        from app.ui.screens.plan_preview import PlanPreviewScreen  # on use (first paint)

        plan, record = planned.plan, planned.record
        if self.app.screen is not self:  # the admin went elsewhere meanwhile
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

        self.app.push_screen(
            PlanPreviewScreen(plan, view.backend, audit=self.raidman.audit_log()), done
        )

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
        self.raidman.refresh_sample()  # the Sync card shows the raised limits at once
        self.notify(
            f"{record.array}: limits raised; they will be put back when the {record.action} ends "
            "(even if raidman is closed and reopened meanwhile)",
            title="boost",
            timeout=10,
        )
