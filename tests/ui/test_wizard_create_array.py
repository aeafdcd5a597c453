"""Pilot: create-array wizard → preview → typed confirmation → run with live step status.

Runs on the recording FakeBackend of tests/plans (the simulated backend's state changes are
covered once it lands); asserts that exactly the previewed argv ran and the audit log matches.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App
from textual.screen import Screen
from textual.widgets import Button, Input, Select, SelectionList, Static

from app.plans.audit_log import AuditLog
from app.ui.screens.plan_preview import PlanPreviewScreen
from app.ui.screens.wizards import CreateArrayWizard
from tests.plans.fakes import FakeBackend, blank_machine
from tests.ui.helpers import preview_of
from widgets.plan_view import PlanView


class Host(App[None]):
    def __init__(self, make: Any) -> None:
        super().__init__()
        self.make = make
        self.result: Any = "unset"

    def on_mount(self) -> None:
        self.push_screen(self.make(), self._done)

    def _done(self, result: Any) -> None:
        self.result = result


async def _fill_key_case(pilot: Any, screen: Screen[Any]) -> None:
    devs = screen.query_one("#ca-devices", SelectionList)
    for d in ("nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"):
        devs.select(d)
    screen.query_one("#ca-level", Select).value = "10"
    screen.query_one("#ca-chunk", Input).value = "32K"
    screen.query_one("#ca-layout", Select).value = "n2"
    screen.query_one("#ca-bitmap", Select).value = "none"
    screen.query_one("#ca-name", Input).value = "127"
    screen.query_one("#ca-fs", Select).value = "ext4"
    screen.query_one("#ca-lvm").value = True  # type: ignore[attr-defined]
    screen.query_one("#ca-vg", Input).value = "vg127"
    # the key case of these tests is the array + LVM + mkfs; the reboot steps (on by default,
    # see test_reboot_steps_on_by_default) are tested there
    screen.query_one("#ca-conf").value = False  # type: ignore[attr-defined]
    screen.query_one("#ca-initramfs").value = False  # type: ignore[attr-defined]
    await pilot.pause()


async def test_create_raid10_preview_confirm_run(tmp_path: Path) -> None:
    be = FakeBackend(blank_machine())
    audit = AuditLog(tmp_path / "audit.log")
    app = Host(lambda: CreateArrayWizard(be.machine, be, audit=audit))
    async with app.run_test(size=(140, 60)) as pilot:
        wiz = app.screen
        assert isinstance(wiz, CreateArrayWizard)
        await _fill_key_case(pilot, wiz)
        await pilot.click("#wz-preview")
        prev = await preview_of(pilot, app)
        assert isinstance(prev, PlanPreviewScreen)
        plan = prev.plan
        assert plan.steps[0].argv[:4] == ("mdadm", "--create", "/dev/md/127", "--level=10")
        assert plan.steps[-1].argv == (
            "mkfs.ext4",
            "-b",
            "4096",
            "-E",
            "stride=8,stripe_width=16",
            "/dev/vg127/data",
        )
        run = prev.query_one("#pp-run", Button)
        assert run.disabled  # destructive: the name is not typed yet
        await pilot.click("#pp-confirm")
        await pilot.press("1", "2", "7")
        await pilot.pause()
        assert not run.disabled
        be.calls.clear()  # drop the pre-flight wipefs probes
        await pilot.click("#pp-run")
        await app.workers.wait_for_complete()
        await pilot.pause()
        # what ran: the plan's steps, after Run's second pre-flight (read-only wipefs probes)
        ran = be.ran
        assert ran == [s.argv for s in plan.steps]
        assert [e.argv for e in audit.read_entries() if e.event == "executed"] == [
            s.argv for s in plan.steps
        ]
        view = prev.query_one("#pp-plan", PlanView)
        assert view.statuses == ["ok"] * len(plan.steps)
        assert "all 5 steps ran successfully" in str(prev.query_one("#pp-status", Static).render())
        await pilot.click("#pp-close")
        await pilot.pause()
        assert app.result is not None and app.result.ok  # the wizard hands the report back


async def test_failing_step_shows_stderr_and_not_run(tmp_path: Path) -> None:
    be = FakeBackend(blank_machine())
    be.fail_when("pvcreate", 5, stderr="Cannot use /dev/md/127: device is too small")
    audit = AuditLog(tmp_path / "audit.log")
    app = Host(lambda: CreateArrayWizard(be.machine, be, audit=audit))
    async with app.run_test(size=(140, 60)) as pilot:
        await _fill_key_case(pilot, app.screen)
        await pilot.click("#wz-preview")
        prev = await preview_of(pilot, app)
        assert isinstance(prev, PlanPreviewScreen)
        prev.query_one("#pp-confirm", Input).value = "127"
        await pilot.pause()
        await pilot.click("#pp-run")
        await app.workers.wait_for_complete()
        await pilot.pause()
        view = prev.query_one("#pp-plan", PlanView)
        assert view.statuses == ["ok", "failed", "not-run", "not-run", "not-run"]
        assert "device is too small" in view.details[1]
        assert "device is too small" in str(view.render_plan())
        assert [e.argv[0] for e in audit.read_entries() if e.event == "executed"] == [
            "mdadm",
            "pvcreate",
        ]


async def test_refused_device_disables_run_with_reason(tmp_path: Path) -> None:
    be = FakeBackend(blank_machine())
    app = Host(lambda: CreateArrayWizard(be.machine, be, audit=AuditLog(tmp_path / "a.log")))
    async with app.run_test(size=(140, 60)) as pilot:
        wiz = app.screen
        devs = wiz.query_one("#ca-devices", SelectionList)
        devs.select("nvme0n1")
        devs.select("sda2")  # mounted on /
        wiz.query_one("#ca-level", Select).value = "1"
        wiz.query_one("#ca-name", Input).value = "120"
        await pilot.pause()
        await pilot.click("#wz-preview")
        prev = await preview_of(pilot, app)
        assert isinstance(prev, PlanPreviewScreen)
        refused = [str(s.render()) for s in prev.query(".pp-refused")]
        assert any("sda2: is mounted on /" in r for r in refused)
        prev.query_one("#pp-confirm", Input).value = "120"
        await pilot.pause()
        assert prev.query_one("#pp-run", Button).disabled
        assert prev.can_run() == "pre-flight refuses a device"


async def test_wizard_shows_plan_errors_inline(tmp_path: Path) -> None:
    be = FakeBackend(blank_machine())
    app = Host(lambda: CreateArrayWizard(be.machine, be))
    async with app.run_test(size=(140, 60)) as pilot:
        await pilot.click("#wz-preview")  # no devices chosen
        await pilot.pause()
        assert isinstance(app.screen, CreateArrayWizard)
        assert "at least one device" in str(app.screen.query_one("#wz-error", Static).render())


async def test_copy_puts_the_shell_script_on_the_clipboard(tmp_path: Path) -> None:
    be = FakeBackend(blank_machine())
    audit = AuditLog(tmp_path / "audit.log")
    app = Host(lambda: CreateArrayWizard(be.machine, be, audit=audit))
    async with app.run_test(size=(140, 60)) as pilot:
        await _fill_key_case(pilot, app.screen)
        await pilot.click("#wz-preview")
        prev = await preview_of(pilot, app)
        assert isinstance(prev, PlanPreviewScreen)
        await pilot.click("#pp-copy")
        await pilot.pause()
        text = prev.plan.shell_script()
        assert "mkfs.ext4 -b 4096 -E stride=8,stripe_width=16 /dev/vg127/data" in text
        assert app.clipboard == text
        be.calls.clear()
    assert be.ran == []  # copying runs nothing


async def test_reboot_steps_on_by_default(tmp_path: Path) -> None:
    """A new array should survive a reboot: mdadm.conf + initramfs steps are planned unless the
    admin unticks them, and the preview shows the mdadm.conf diff as a note."""
    be = FakeBackend(blank_machine())
    app = Host(lambda: CreateArrayWizard(be.machine, be, audit=AuditLog(tmp_path / "a.log")))
    async with app.run_test(size=(140, 60)) as pilot:
        wiz = app.screen
        assert isinstance(wiz, CreateArrayWizard)
        assert wiz.query_one("#ca-conf").value is True  # type: ignore[attr-defined]
        assert wiz.query_one("#ca-initramfs").value is True  # type: ignore[attr-defined]
        devs = wiz.query_one("#ca-devices", SelectionList)
        for d in ("nvme0n1", "nvme1n1"):
            devs.select(d)
        wiz.query_one("#ca-level", Select).value = "1"
        await pilot.pause()
        await pilot.click("#wz-preview")
        prev = await preview_of(pilot, app)
        assert isinstance(prev, PlanPreviewScreen)
        argvs = [s.argv for s in prev.plan.steps]
        assert ("update-initramfs", "-u") in argvs
        assert any("mdadm.conf" in " ".join(a) for a in argvs)
        notes = " ".join(str(s.render()) for s in prev.query(".pp-note"))
        assert "mdadm.conf" in notes


async def test_typed_confirmation_is_visible_focused_and_enter_runs_at_80x24(
    tmp_path: Path,
) -> None:
    """Issue 24 item 2: at 80x24, n -> three members -> ctrl+r (preview) -> ctrl+r (run) used
    to show only a toast with the field below the fold and unfocused. Now the run key focuses
    the field, which is on screen above the buttons, the consequences sit at the top, keys go
    into the field, and Enter runs once the name matches (not before)."""
    be = FakeBackend(blank_machine())
    audit = AuditLog(tmp_path / "audit.log")
    app = Host(lambda: CreateArrayWizard(be.machine, be, audit=audit))
    async with app.run_test(size=(80, 24)) as pilot:
        wiz = app.screen
        devs = wiz.query_one("#ca-devices", SelectionList)
        for d in ("nvme0n1", "nvme1n1", "nvme2n1"):
            devs.select(d)
        wiz.query_one("#ca-level", Select).value = "5"
        wiz.query_one("#ca-name", Input).value = "126"
        await pilot.pause()
        await pilot.press("ctrl+r")
        prev = await preview_of(pilot, app)
        assert isinstance(prev, PlanPreviewScreen)
        top = str(prev.query_one("#pp-consequences", Static).render())
        # a new RAID-5 is built degraded: md recovers the last member, the others only read
        assert top.startswith("md126 recover:") and "to nvme2n1 = 1.0 × its size" in top
        assert "md126 survives no further failure: nvme0n1, nvme1n1" in top
        field = prev.query_one("#pp-confirm", Input)
        assert not field.has_focus  # c / s still work as keys until Run is asked for
        be.calls.clear()
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert field.has_focus
        r = field.region
        assert r.height > 0 and r.y >= 0 and r.y + r.height <= 24 and r.x + r.width <= 80
        assert "type 126 in the field" in str(prev.query_one("#pp-status", Static).render())
        await pilot.press("1", "2", "enter")  # not the name yet: nothing runs
        await app.workers.wait_for_complete()
        assert not be.ran
        await pilot.press("6", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        ran = be.ran
        assert ran and ran[0][:3] == ("mdadm", "--create", "/dev/md/126")
