"""Pre-flight runs again when Run is pressed: a device that became busy after the preview
(here: mounted, as the kernel's mount table says) stops the plan with the reason, nothing runs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.app import App
from textual.widgets import Button, Static

from app.model.usage import KernelUsage
from app.plans.audit_log import AuditLog
from app.plans.builders.create_array import CreateArrayParams, build_create_array
from app.plans.render import preflight_for
from app.ui.screens.plan_preview import PlanPreviewScreen
from tests.plans.fakes import FakeBackend, blank_machine


class Host(App[None]):
    def __init__(self, make: Any) -> None:
        super().__init__()
        self.make = make

    def on_mount(self) -> None:
        self.push_screen(self.make())


async def test_device_mounted_after_the_preview_is_refused_at_run(tmp_path: Path) -> None:
    m = blank_machine()
    be = FakeBackend(m)
    plan = build_create_array(m, CreateArrayParams(level="1", devices=("nvme0n1", "nvme1n1")))
    pf = preflight_for(plan, m, be)
    assert pf.refusals == () and pf.warnings == ()  # clean when previewed
    usage = m.usage or KernelUsage()
    be.machine = replace(m, usage=replace(usage, mounts=(*usage.mounts, ("nvme1n1", "/mnt/x"))))
    audit = AuditLog(tmp_path / "audit.log")
    app = Host(lambda: PlanPreviewScreen(plan, be, preflight=pf, audit=audit))
    async with app.run_test(size=(140, 60)) as pilot:
        prev = app.screen
        assert isinstance(prev, PlanPreviewScreen)
        await pilot.click("#pp-confirm")
        await pilot.press(*plan.target)
        await pilot.pause()
        be.calls.clear()
        await pilot.click("#pp-run")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not any(a[0] == "mdadm" for a in be.ran)  # nothing ran
        assert audit.read_entries() == []
        status = str(prev.query_one("#pp-status", Static).render())
        assert "pre-flight at Run stopped the plan, nothing was run" in status
        assert "REFUSED nvme1n1: is mounted on /mnt/x [mounted]" in status
        assert prev.query_one("#pp-run", Button).disabled
