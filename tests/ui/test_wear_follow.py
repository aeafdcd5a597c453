"""The Wear tab follows a running sync (issue 15): the array's record shows what the kernel's
write counters say the rebuild has written so far, moving at every sample without re-selecting
the array. Simulated scenario raid5-cable (seed 000: a RAID-5 member rebuilt after a loose
SATA cable), manual clock."""

from __future__ import annotations

import re

from rich.text import Text
from textual.widgets import Static

from app.ui.app import RaidmanApp
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready
from widgets.wear_pane import WearPane


def _syncs_text(app: RaidmanApp) -> str:
    w = app.main.query_one(WearPane).query_one("#wear-syncs", Static)
    c = w.content
    return c.plain if isinstance(c, Text) else str(c)


def _so_far(text: str) -> list[str]:
    return re.findall(r"kernel counter: this rebuild has written (\S+ \S+) to \S+ so far", text)


async def test_wear_tab_follows_a_running_rebuild() -> None:
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid5-cable", clock=clock)
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0.05)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_ready(pilot)
        (array,) = [a for a in backend.probe().arrays if a.sync is not None]
        app.go_to(array.name)
        app.show_tab("wear")
        seen: list[str] = []
        for _ in range(3):
            clock.advance(60)
            n = app.sample_count
            await wait_for(pilot, lambda n=n: app.sample_count > n + 1)
            await wait_for(pilot, lambda: bool(_so_far(_syncs_text(app))), timeout=5)
            text = _syncs_text(app)
            assert "running" in text
            seen.append(" ".join(_so_far(text)))
        # the figure moved at each step, with no re-selection
        assert seen[0] != seen[1] != seen[2], seen
