"""Issue 11: the command palette offers the main screen's actions (new array, member actions on
the selected array, boost, audit log, help) and names LVs as an admin does, ``vg/lv``."""

from __future__ import annotations

from textual.command import CommandPalette

from app.ui.app import RaidmanApp
from app.ui.commands import ActionsProvider, GoToDeviceProvider
from app.ui.screens.wizards import MemberWizard
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready


def _app() -> RaidmanApp:
    backend = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual())
    return RaidmanApp(backend, probe_interval=0, sample_interval=0)


async def test_actions_and_lv_names() -> None:
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        app.go_to("md127")
        await pilot.pause()
        actions = ActionsProvider(app.screen)
        titles = [t for t, _, _ in actions._actions()]
        for expect in ("New array", "Member actions on md127", "Boost sync on md127",
                       "Audit log", "Help: keys"):  # fmt: skip
            assert expect in titles, titles
        devices = [t for t, _, _ in GoToDeviceProvider(app.screen)._targets()]
        assert "Go to LV vg_raid/lv_data" in devices, devices
        assert not any("dm-0" in t for t in devices)


async def test_palette_runs_member_actions() -> None:
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        app.go_to("md127")
        await pilot.pause()
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"member actions")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, MemberWizard))
        assert app.screen.query_one("#mb-array").value == "md127"  # type: ignore[attr-defined]
