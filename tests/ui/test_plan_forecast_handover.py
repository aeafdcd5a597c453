"""The preview's run worker hands each sync's forecast to the app (the live session) right
before the step that starts it, on the UI thread, and withdraws it when that step fails
(issue 22, item 5: the record says "(the plan's)")."""

from __future__ import annotations

import threading
from pathlib import Path

from textual.app import App
from textual.reactive import reactive

from app.model.sync_model import SyncForecast
from app.plans.audit_log import AuditLog
from app.plans.plan import Plan, Step
from app.session import SessionView
from app.ui.screens.plan_preview import PlanPreviewScreen
from tests.plans.fakes import FakeBackend, array_machine

CHECK = Plan(
    "check md127",
    (Step.decode(("tee", "/sys/block/md127/md/sync_action"), "check", stdin="check\n"),),
    target="md127",
    kind="sync-action",
    params={"array": "md127", "action": "check"},
)


class Host(App[None]):
    """The two methods RaidmanApp gives the preview (there they go to the session)."""

    view: reactive[SessionView] = reactive(SessionView, always_update=True, init=False)

    def __init__(self, backend: FakeBackend) -> None:
        super().__init__()
        self.backend = backend
        self.handed: list[tuple[tuple[SyncForecast, ...], int, bool]] = []
        self.withdrawn: list[tuple[str, ...]] = []

    def expect_forecasts(self, forecasts: tuple[SyncForecast, ...]) -> None:
        ran = len([a for a in self.backend.argvs if a[0] == "tee"])
        self.handed.append((forecasts, ran, threading.current_thread() is threading.main_thread()))

    def withdraw_forecasts(self, arrays: tuple[str, ...]) -> None:
        self.withdrawn.append(arrays)


async def _run(tmp_path: Path, be: FakeBackend) -> Host:
    app = Host(be)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.push_screen(PlanPreviewScreen(CHECK, be, audit=AuditLog(tmp_path / "a.log")))
        await pilot.pause()
        await pilot.click("#pp-run")
        await app.workers.wait_for_complete()
        await pilot.pause()
    return app


async def test_the_check_forecast_goes_to_the_app_before_the_step_runs(tmp_path: Path) -> None:
    be = FakeBackend(array_machine())
    app = await _run(tmp_path, be)
    ((fcs, ran_before, on_ui),) = app.handed
    assert [(f.array, f.action) for f in fcs] == [("md127", "check")]
    assert ran_before == 0 and on_ui  # before the tee ran, on the UI thread
    assert app.withdrawn == []


async def test_a_failed_step_withdraws_its_forecast(tmp_path: Path) -> None:
    be = FakeBackend(array_machine())
    be.fail_when("tee", 1, "tee: write error: Device or resource busy")
    app = await _run(tmp_path, be)
    assert len(app.handed) == 1 and app.withdrawn == [("md127",)]
