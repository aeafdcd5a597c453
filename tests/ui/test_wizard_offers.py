"""The wizards offer only what can work (issue 24 item 9): no check or repair on an array md is
syncing (md.c action_store answers EBUSY; the run printed it three times), no stripe cache
outside RAID-4/5/6, and the RAID-10 layout field only while RAID-10 is the level."""

from __future__ import annotations

import pytest
from textual.widgets import Select, Static

from app.plans.builders.sync_actions import build_sync_action, offered_actions
from app.plans.geometry import PlanError
from app.ui.app import RaidmanApp
from app.ui.screens.wizards import CreateArrayWizard, SyncWizard
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_ready


def _machine(scenario: str):  # type: ignore[no-untyped-def]
    return SimulatedBackend.from_scenario(scenario, clock=SimClock.manual()).probe()


def test_busy_array_gets_no_check_and_a_mirror_no_stripe_cache() -> None:
    m = _machine("raid10-evo")  # md127 RAID-10, resyncing
    offered = offered_actions(m.array("md127"))
    assert "check" not in offered and "repair" not in offered
    assert "stripe-cache" not in offered
    assert {"idle", "frozen", "limits"} <= set(offered)
    with pytest.raises(PlanError, match="running a resync: md refuses a check"):
        build_sync_action(m, "md127", "check")
    idle = _machine("imsm")  # md126 RAID-1, idle
    assert {"check", "repair"} <= set(offered_actions(idle.array("md126")))
    assert offered_actions(None) == ("limits",)


async def test_sync_wizard_lists_what_is_offered_and_says_why_not() -> None:
    app = RaidmanApp(
        SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual()),
        probe_interval=0,
        sample_interval=0,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("t")
        await pilot.pause()
        wiz = app.screen
        assert isinstance(wiz, SyncWizard)
        act = wiz.query_one("#sy-action", Select)
        values = [v for _, v in act._options if v is not Select.BLANK]
        assert values == ["limits", "idle", "frozen"]  # a stopping action never first
        note = str(wiz.query_one("#sy-note", Static).render())
        assert "no check or repair while md127 runs a resync" in note
        assert "no stripe cache" in note


async def test_raid10_layout_only_for_raid10() -> None:
    app = RaidmanApp(
        SimulatedBackend.from_scenario("blank", clock=SimClock.manual()),
        probe_interval=0,
        sample_interval=0,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("n")
        await pilot.pause()
        wiz = app.screen
        assert isinstance(wiz, CreateArrayWizard)
        layout = wiz.query_one("#ca-layout", Select)
        assert layout.display  # RAID-10 is the default level
        wiz.query_one("#ca-level", Select).value = "5"
        await pilot.pause()
        assert not layout.display and not wiz.query_one("#ca-layout-label").display
        wiz.query_one("#ca-level", Select).value = "10"
        await pilot.pause()
        assert layout.display
