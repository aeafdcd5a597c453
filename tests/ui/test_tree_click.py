"""A click selects a node without folding it away; enter still opens and closes it (issue 16:
"clicking a node also collapses it")."""

from __future__ import annotations

from app.ui.app import RaidmanApp
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready


async def test_click_selects_without_collapsing_and_enter_toggles() -> None:
    backend = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual())
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        tree = app.storage_tree
        node = tree.node_for("dev:md127")
        assert node is not None and node.is_expanded and node.children
        line = node.line
        assert line >= 0
        # click the label (past the guides and the toggle icon)
        await pilot.click(tree, offset=(2 * tree.guide_depth + 4, line - tree.scroll_offset.y))
        await wait_for(pilot, lambda: app.selected is not None and app.selected.key == "dev:md127")
        await pilot.pause(0.2)
        assert node.is_expanded, "a click folded the array away"
        # the keyboard keeps enter-to-toggle
        await pilot.press("enter")
        await wait_for(pilot, lambda: not node.is_expanded)
        await pilot.pause(0.6)
        await pilot.press("enter")
        await wait_for(pilot, lambda: node.is_expanded)
