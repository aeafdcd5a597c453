"""Issue 25: no backend call on the UI thread. Each path from a key to a plan's preview (the
four wizards, boost, a finding's fix) runs its reads (mdadm.conf and ``mdadm --detail --scan``,
the global speed limits, SMART and ``wipefs`` through pre-flight, the limits a boost raises) in
a worker, and so does the Live tab's kernel log (``journalctl -k``): ``ThreadRecordingBackend`` records the thread of every call, and none may be the UI
thread's. Each test also asserts the reads it guards did happen, so that it fails when one
comes back onto the UI thread (checked by putting them back: see the commit)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select, SelectionList, Static

from app.plans.plan import Plan, Step
from app.ui.app import RaidmanApp
from app.ui.screens.plan_preview import PlanPreviewScreen
from app.ui.screens.wizards import CreateArrayWizard, FilesystemWizard, MemberWizard, SyncWizard
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready
from tests.ui.thread_recorder import Call, ThreadRecordingBackend
from widgets.findings import FindingsPane

NVME = ("/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1")


@pytest.fixture(autouse=True)
def _state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))


def _recorded(scenario: str, md100: tuple[str, int] | None = None) -> ThreadRecordingBackend:
    sim = SimulatedBackend.from_scenario(scenario, clock=SimClock.manual())
    if md100 is not None:  # an array made by mdadm from the first n NVMe disks
        level, n = md100
        argv = ["mdadm", "--create", "/dev/md/100", f"--level={level}", f"--raid-devices={n}"]
        assert sim.run([*argv, "--run", *NVME[:n]]).ok
    return ThreadRecordingBackend(sim)


def _app(backend: ThreadRecordingBackend) -> RaidmanApp:
    return RaidmanApp(backend, probe_interval=0, sample_interval=0)  # type: ignore[arg-type]


async def _preview(pilot: Pilot[None]) -> PlanPreviewScreen:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, PlanPreviewScreen), timeout=10)
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert isinstance(app.screen, PlanPreviewScreen)
    return app.screen


def _none_on_ui_thread(backend: ThreadRecordingBackend, guarded: list[Call], *what: str) -> None:
    """None of the calls ran on the UI thread, and the reads named in ``what`` (method and a
    word of its argument) are among ``guarded`` (the calls of the path under test)."""
    assert backend.on_ui_thread() == [], backend.on_ui_thread()
    for w in what:
        method, _, arg = w.partition(" ")
        assert any(c.method == method and arg in c.first_arg for c in guarded), (w, guarded)


async def test_create_array_wizard_reads_conf_scan_smart_and_wipefs_in_workers() -> None:
    be = _recorded("blank")
    app = _app(be)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        mark = be.mark()
        await pilot.press("n")
        wiz = app.screen
        assert isinstance(wiz, CreateArrayWizard)
        await wait_for(pilot, lambda: wiz.smart is not None)  # the pickers' SMART
        picker = wiz.query_one("#ca-devices", SelectionList)
        for name in ("nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"):
            picker.select(name)
        await pilot.pause()
        await pilot.press("ctrl+r")
        prev = await _preview(pilot)
        assert prev.plan.kind == "create-array"
        assert any("mdadm --detail --scan" in n for n in prev.plan.notes)  # the conf diff
        _none_on_ui_thread(
            be,
            be.since(mark),
            "smart nvme0n1",
            "read_text mdadm.conf",
            "run mdadm --detail --scan",
            "run wipefs",
        )


async def test_member_wizard_preflight_runs_in_a_worker() -> None:
    be = _recorded("blank", ("1", 2))
    app = _app(be)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        assert app.go_to("md100")
        await pilot.pause()
        mark = be.mark()
        await pilot.press("a")
        wiz = app.screen
        assert isinstance(wiz, MemberWizard)
        wiz.query_one("#mb-action", Select).value = "spare"
        await wait_for(pilot, lambda: wiz.smart is not None)
        wiz.query_one("#mb-new", SelectionList).select("nvme2n1")
        await pilot.pause()
        await pilot.press("ctrl+r")
        await _preview(pilot)
        _none_on_ui_thread(be, be.since(mark), "smart nvme2n1", "run wipefs")


async def test_filesystem_wizard_preflight_runs_in_a_worker() -> None:
    be = _recorded("blank", ("5", 4))
    app = _app(be)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        assert app.go_to("md100")
        await pilot.pause()
        mark = be.mark()
        await pilot.press("v")
        assert isinstance(app.screen, FilesystemWizard)
        await pilot.press("ctrl+r")
        await _preview(pilot)
        _none_on_ui_thread(be, be.since(mark), "run wipefs --no-act --json /dev/md100")


async def test_sync_wizard_reads_the_global_limits_in_a_worker() -> None:
    be = _recorded("blank", ("5", 4))
    app = _app(be)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        mark = be.mark()
        await pilot.press("t")
        wiz = app.screen
        assert isinstance(wiz, SyncWizard)
        await app.workers.wait_for_complete()
        await pilot.pause()
        label = str(wiz.query_one("#sy-max-now").render())
        assert "global now: 200000" in label, label
        wiz.query_one("#sy-max", Input).value = "300000"  # the form opens on the limits
        await pilot.pause()
        await pilot.press("ctrl+r")
        await _preview(pilot)
        _none_on_ui_thread(
            be, be.since(mark), "read_text speed_limit_min", "read_text speed_limit_max"
        )


async def test_boost_reads_the_limits_in_a_worker() -> None:
    be = _recorded("raid6-wd")
    app = _app(be)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_ready(pilot)
        n = app.sample_count
        app.refresh_sample()
        await wait_for(pilot, lambda: app.sample_count > n)
        mark = be.mark()
        await pilot.press("b")
        prev = await _preview(pilot)
        assert prev.plan.steps
        _none_on_ui_thread(
            be, be.since(mark), "read_text speed_limit_max", "read_text stripe_cache"
        )


async def test_finding_fix_preflight_runs_in_a_worker() -> None:
    be = _recorded("raid5-cable")
    app = _app(be)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_ready(pilot)
        (found,) = [f for f in app.findings if f.code == "md-stripe-cache"]
        pane = app.main.query_one(FindingsPane)
        mark = be.mark()
        pane.post_message(FindingsPane.Selected(pane, found))  # Enter on the finding
        prev = await _preview(pilot)
        assert found.fix is not None and prev.plan.title == found.fix.title
        await pilot.press("escape")
        await pilot.pause()
        # a fix that writes to a member (a re-add, never destructive): its pre-flight reads the
        # SMART of the member's disk
        assert app.machine is not None
        md127 = app.machine.array("md127")
        assert md127 is not None
        member = md127.members[0].device
        step = Step.decode(("mdadm", "/dev/md127", "--re-add", f"/dev/{member}"), "why")
        plan = Plan("re-add", (step,))
        pane.post_message(FindingsPane.Selected(pane, replace(found, fix=plan)))
        await _preview(pilot)
        assert member == "sda1"
        _none_on_ui_thread(be, be.since(mark), "smart sda")


async def test_live_tab_reads_the_kernel_log_in_a_worker() -> None:
    be = _recorded("raid6-wd")
    app = _app(be)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_ready(pilot)
        assert app.go_to("sdb")
        mark = be.mark()
        await pilot.press("l")
        body = app.main.query_one("#klog-body", Static)
        await wait_for(pilot, lambda: "kernel lines name" in str(body.render()), timeout=10)
        assert "I/O error" in str(body.render())  # raid6-wd opens with sdb's medium error
        _none_on_ui_thread(be, be.since(mark), "run journalctl")
