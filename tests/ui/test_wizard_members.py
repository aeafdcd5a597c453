"""Pilot: member wizard (fail → preview → typed name → run; a spare's fail needs none) and the
read-only backend refusing to run anything; sync wizard stripe-cache memory note."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, Input, Select, SelectionList, Static

from app.plans.audit_log import AuditLog
from app.ui.screens.plan_preview import PlanPreviewScreen
from app.ui.screens.wizards import MemberWizard, SyncWizard
from tests.plans.fakes import FakeBackend, array_machine
from tests.ui.helpers import preview_of
from tests.ui.test_wizard_create_array import Host
from widgets.plan_view import PlanView


async def test_fail_member_needs_the_typed_name_visible_and_focused(tmp_path: Path) -> None:
    """Issue 22/24: failing a member of a healthy RAID-10 n2 leaves its partner (same copy set,
    slots 0/1) the only copy: the preview says so at the top, the run key alone runs nothing,
    it focuses the name field, which is on screen at 80x24, and Enter runs once it matches."""
    be = FakeBackend(array_machine())
    audit = AuditLog(tmp_path / "audit.log")
    app = Host(lambda: MemberWizard(be.machine, be, "md127", audit=audit))
    async with app.run_test(size=(80, 24)) as pilot:
        wiz = app.screen
        wiz.query_one("#mb-action", Select).value = "fail"
        wiz.query_one("#mb-device", Select).value = "nvme1n1"
        await pilot.pause()
        wiz.query_one("#wz-preview", Button).press()
        prev = await preview_of(pilot, app)
        assert isinstance(prev, PlanPreviewScreen)
        top = str(prev.query_one("#pp-consequences", Static).render())
        assert "md127 survives no further failure: nvme0n1" in top
        assert "type md127 to confirm" in top
        await pilot.press("ctrl+r")
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert be.ran == []  # the run key cannot bypass the typed name
        field = prev.query_one("#pp-confirm", Input)
        assert field.has_focus
        region = field.region
        assert region.height > 0 and region.y + region.height <= 24 and region.y >= 0
        await pilot.press("m", "d", "1", "2", "6")  # the wrong name: Enter runs nothing
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        assert be.ran == []
        field.value = ""
        await pilot.press("m", "d", "1", "2", "7", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert ("mdadm", "/dev/md127", "--fail", "/dev/nvme1n1") in be.argvs
        assert prev.query_one("#pp-plan", PlanView).statuses == ["ok"]
        assert [e.exit_code for e in audit.read_entries() if e.event == "executed"] == [0]


async def test_fail_of_a_spare_needs_no_typed_name(tmp_path: Path) -> None:
    """A spare holds no data: failing it changes no redundancy, so y/N-level Run suffices."""
    be = FakeBackend(array_machine())
    audit = AuditLog(tmp_path / "audit.log")
    app = Host(lambda: MemberWizard(be.machine, be, "md126", audit=audit))
    async with app.run_test(size=(140, 60)) as pilot:
        wiz = app.screen
        wiz.query_one("#mb-action", Select).value = "fail"
        wiz.query_one("#mb-device", Select).value = "sdf"
        await pilot.pause()
        await pilot.click("#wz-preview")
        prev = await preview_of(pilot, app)
        assert isinstance(prev, PlanPreviewScreen)
        assert not prev.query_one("#pp-confirm-row").display
        await pilot.click("#pp-run")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert ("mdadm", "/dev/md126", "--fail", "/dev/sdf") in be.argvs


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
        prev = await preview_of(pilot, app)
        assert isinstance(prev, PlanPreviewScreen)
        assert any("read-only: not root" in str(s.render()) for s in prev.query(".pp-refused"))
        prev.query_one("#pp-confirm", Input).value = "md127"
        await pilot.pause()
        await pilot.click("#pp-run")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert be.ran == []
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
        prev = await preview_of(pilot, app)
        assert isinstance(prev, PlanPreviewScreen)
        notes = " ".join(str(s.render()) for s in prev.query(".pp-note"))
        assert "= 96 MiB of RAM" in notes
        assert not prev.query_one("#pp-run", Button).disabled


async def test_re_add_picks_the_dropped_out_device_outside_the_array(tmp_path: Path) -> None:
    """mdadm --re-add refuses a device still in the array, so the member that dropped out (here
    nvme1n1, removed from the degraded md127) is picked from the device picker; the member Select
    (for a member still in the array: fail, remove, re-add) is shown beside it."""
    be = FakeBackend(array_machine(bitmap="internal", degraded_member="nvme1n1"))
    app = Host(lambda: MemberWizard(be.machine, be, "md127", audit=AuditLog(tmp_path / "a.log")))
    async with app.run_test(size=(140, 60)) as pilot:
        wiz = app.screen
        wiz.query_one("#mb-action", Select).value = "re-add"
        await pilot.pause()
        assert wiz.query_one("#mb-f-member").display
        assert wiz.query_one("#mb-f-new").display
        picker = wiz.query_one("#mb-new", SelectionList)
        [i] = [
            i
            for i in range(picker.option_count)
            if picker.get_option_at_index(i).value == "nvme1n1"
        ]
        assert not picker.get_option_at_index(i).disabled
        picker.focus()
        picker.highlighted = i
        await pilot.press("space")
        assert picker.selected == ["nvme1n1"]
        await pilot.click("#wz-preview")
        prev = await preview_of(pilot, app)
        assert isinstance(prev, PlanPreviewScreen), wiz.query_one("#wz-error", Static).render()
        assert [s.argv for s in prev.plan.steps] == [
            ("mdadm", "/dev/md127", "--re-add", "/dev/nvme1n1")
        ]


async def test_re_add_of_a_device_still_in_the_array_is_not_offered(tmp_path: Path) -> None:
    """A member still in the array is greyed out in the picker (member of md127): re-add cannot
    be planned for it."""
    be = FakeBackend(array_machine(bitmap="internal"))
    app = Host(lambda: MemberWizard(be.machine, be, "md127"))
    async with app.run_test(size=(140, 60)) as pilot:
        wiz = app.screen
        wiz.query_one("#mb-action", Select).value = "re-add"
        await pilot.pause()
        picker = wiz.query_one("#mb-new", SelectionList)
        [opt] = [
            picker.get_option_at_index(i)
            for i in range(picker.option_count)
            if picker.get_option_at_index(i).value == "nvme0n1"
        ]
        assert opt.disabled and "member of md127" in str(opt.prompt)
        await pilot.click("#wz-preview")
        await pilot.pause()
        assert isinstance(app.screen, MemberWizard)
        assert "re-add: choose the member, or pick the device that dropped out" in str(
            wiz.query_one("#wz-error", Static).render()
        )
