"""A hidden tab pays nothing for a probe (issue 29): the mdstat tab (1,000 lines on big) is
written when it is shown, with the last probe's text, not at every probe for nobody."""

from __future__ import annotations

from textual.widgets import Log

from app.ui.app import RaidmanApp
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready


def _shown(app: RaidmanApp) -> str:
    """The tab's text, its words only: long lines are folded at the tab's width."""
    return " ".join(
        "\n".join(str(x) for x in app.main.query_one("#mdstat-body", Log).lines).split()
    )


async def test_the_hidden_mdstat_tab_shows_the_last_probe_when_opened() -> None:
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_ready(pilot)
        first = _shown(app)
        clock.advance(60.0)  # the resync moves on: mdstat's progress line changes
        app.refresh_probe()
        await wait_for(pilot, lambda: app.probe_count == 2)
        assert app.machine is not None and app.machine.mdstat
        latest = " ".join(app.machine.mdstat.split())
        assert latest != first
        assert _shown(app) == first  # hidden: not written again
        app.main.action_show_tab("mdstat")
        await wait_for(pilot, lambda: _shown(app) == latest)
