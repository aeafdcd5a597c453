"""The Findings table is filled at the width its tab will have while the tab is hidden, so
bringing the tab up paints it instead of filling every row again (issue 29: 118 ms for the
1,063 findings of the big demo, the slowest tab switch)."""

from __future__ import annotations

import pytest

from app.ui.app import RaidmanApp
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready
from widgets.findings import FindingsPane


@pytest.mark.parametrize("size", [(200, 60), (80, 24)])
async def test_the_hidden_findings_table_is_filled_at_its_shown_width(
    size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0)
    fills: list[int] = []
    real = FindingsPane._fill

    def counting(self: FindingsPane) -> None:
        fills.append(self.size.width)
        real(self)

    monkeypatch.setattr(FindingsPane, "_fill", counting)
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        pane = app.screen.query_one(FindingsPane)
        assert pane.size.width == 0 and pane.row_count > 0  # hidden, and already filled
        guessed = pane.width_shown
        before = len(fills)
        app.main.action_show_tab("findings")
        await wait_for(pilot, lambda: pane.size.width > 0)
        await pilot.pause()
        assert pane.width_shown == pane.size.width == guessed
        assert len(fills) == before  # shown: painted, not filled again
