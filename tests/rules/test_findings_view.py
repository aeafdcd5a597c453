"""Pilot: the Findings tab shows the highlighted finding in full — numbers, and its fix or why
there is none — on the simulated USB-bridge disk of seed 003."""

from __future__ import annotations

from app.ui.app import RaidmanApp
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import plain, wait_for, wait_ready
from widgets.findings import FindingsPane


async def test_findings_tab_explains_the_highlighted_finding() -> None:
    app = RaidmanApp(
        SimulatedBackend.from_scenario("usb-bridge", clock=SimClock.manual()),
        probe_interval=0,
        sample_interval=0,
    )
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_ready(pilot)
        app.show_tab("findings")
        pane = app.main.query_one(FindingsPane)
        await wait_for(pilot, lambda: pane.row_count > 0)
        detail = app.main.query_one("#finding-detail Static")
        await wait_for(pilot, lambda: "sector" in plain(detail))
        first = plain(detail)
        assert pane.current is not None and pane.current.severity == "error"
        assert "65535" in first and "no one-key fix" in first
        pane.focus()
        for _ in range(pane.row_count - 1):
            await pilot.press("down")
        await pilot.pause()
        assert pane.current is not None and pane.current.code == "suspicious-io-topology"
        last = plain(detail)
        assert "33553920" in last and last != first
