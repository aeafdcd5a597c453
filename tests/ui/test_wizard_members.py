"""Pilot: member wizard (fail → preview → run, non-destructive: no name to type) and the
read-only backend refusing to run anything; sync wizard stripe-cache memory note."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, Input, Select, Static

from app.plans.audit_log import AuditLog
from app.ui.screens.plan_preview import PlanPreviewScreen
from app.ui.screens.wizards import MemberWizard, SyncWizard
from tests.plans.fakes import FakeBackend, array_machine
from tests.ui.test_wizard_create_array import Host
from widgets.plan_view import PlanView


async def test_fail_member_runs_without_typed_name(tmp_path: Path) -> None:
    be = FakeBackend(array_machine())
    audit = AuditLog(tmp_path / "audit.log")
    app = Host(lambda: MemberWizard(be.machine, be, "md127", audit=audit))
    async with app.run_test(size=(140, 60)) as pilot:
        wiz = app.screen
        wiz.query_one("#mb-action", Select).value = "fail"
        wiz.query_one("#mb-device", Select).value = "nvme1n1"
        await pilot.pause()
        await pilot.click("#wz-preview")
        await pilot.pause()
        prev = app.screen
        assert isinstance(prev, PlanPreviewScreen)
        assert not prev.query("#pp-confirm")  # not destructive: no name to type
        assert any("loses redundancy" in str(s.render()) for s in prev.query(".pp-warn"))
        await pilot.click("#pp-run")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert be.argvs == [("mdadm", "/dev/md127", "--fail", "/dev/nvme1n1")]
        assert prev.query_one("#pp-plan", PlanView).statuses == ["ok"]
        assert [e.exit_code for e in audit.read_entries() if e.event == "executed"] == [0]


async def test_read_only_backend_runs_nothing(tmp_path: Path) -> None:
    be = FakeBackend(array_machine(), read_only="not root")
    audit = AuditLog(tmp_path / "audit.log")
    app = Host(lambda: MemberWizard(be.machine, be, "md127", audit=audit))
    async with app.run_test(size=(140, 60)) as pilot:
        wiz = app.screen
        wiz.query_one("#mb-action", Select).value = "fail"
        wiz.query_one("#mb-device", Select).value = "nvme1n1"
        await pilot.pause()
        await pilot.click("#wz-preview")
        await pilot.pause()
        prev = app.screen
        assert isinstance(prev, PlanPreviewScreen)
        assert any("read-only: not root" in str(s.render()) for s in prev.query(".pp-refused"))
        await pilot.click("#pp-run")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert be.calls == []
        assert "nothing was run: read-only: not root" in str(
            prev.query_one("#pp-status", Static).render()
        )
        assert [e.event for e in audit.read_entries()] == ["refused"]
        assert prev.query_one("#pp-plan", PlanView).statuses == ["not-run"]


async def test_remove_active_member_is_explained_inline(tmp_path: Path) -> None:
    be = FakeBackend(array_machine())
    app = Host(lambda: MemberWizard(be.machine, be, "md127"))
    async with app.run_test(size=(140, 60)) as pilot:
        wiz = app.screen
        wiz.query_one("#mb-action", Select).value = "remove"
        wiz.query_one("#mb-device", Select).value = "nvme0n1"
        await pilot.pause()
        await pilot.click("#wz-preview")
        await pilot.pause()
        assert isinstance(app.screen, MemberWizard)
        assert "fail it first" in str(wiz.query_one("#wz-error", Static).render())


async def test_sync_wizard_stripe_cache_shows_memory(tmp_path: Path) -> None:
    be = FakeBackend(array_machine())
    app = Host(lambda: SyncWizard(be.machine, be, "md126", audit=AuditLog(tmp_path / "a.log")))
    async with app.run_test(size=(140, 60)) as pilot:
        wiz = app.screen
        wiz.query_one("#sy-action", Select).value = "stripe-cache"
        wiz.query_one("#sy-entries", Input).value = "8192"
        await pilot.pause()
        await pilot.click("#wz-preview")
        await pilot.pause()
        prev = app.screen
        assert isinstance(prev, PlanPreviewScreen)
        notes = " ".join(str(s.render()) for s in prev.query(".pp-note"))
        assert "= 96 MiB of RAM" in notes
        assert not prev.query_one("#pp-run", Button).disabled
