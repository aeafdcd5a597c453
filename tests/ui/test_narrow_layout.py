"""Issue 16 point 1: at 80×24 every tab is named in the tab bar and reachable by its key, and
the footer shows the keys that matter (n a t b L q ?) instead of cutting them off; at 200×60
the full labels come back. Read from the rendered screen, as the admin sees it."""

from __future__ import annotations

import pytest
from textual.widgets import TabbedContent

from app.ui.app import RaidmanApp
from app.ui.screens.main import DETAIL_PANES, FOOTER_PRIORITY, SHORT_TITLES
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import screen_lines, wait_ready
from widgets.keys_footer import fit_keys

MAIN_KEYS = ("n", "a", "t", "b", "L", "q", "?")


def _app(scenario: str) -> RaidmanApp:
    backend = SimulatedBackend.from_scenario(scenario, clock=SimClock.manual())
    return RaidmanApp(backend, probe_interval=0, sample_interval=0)


def _footer_keys(footer_line: str) -> list[str]:
    """The key of every "key label" pair on the footer row (labels are single words)."""
    words = footer_line.split()
    return words[0::2]


@pytest.mark.parametrize("scenario", ["raid10-evo", "big", "blank"])
async def test_80x24_names_every_tab_and_shows_the_main_keys(scenario: str) -> None:
    app = _app(scenario)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.pause(0.1)
        lines = screen_lines(app)
        tab_row = next(line for line in lines if "Sync" in line and "Wear" in line)
        for title, pane_id, _ in DETAIL_PANES:
            assert f" {SHORT_TITLES.get(pane_id, title)} " in tab_row, (title, tab_row)
        footer = lines[-1]
        keys = _footer_keys(footer)
        for key in MAIN_KEYS:
            assert key in keys, (key, footer)
        assert footer.rstrip() == footer.rstrip()[:80]  # nothing past the edge
        # every tab is reachable with its key
        tabs = app.main.query_one(TabbedContent)
        for key, (_, pane_id, _) in zip("dsfwem", DETAIL_PANES, strict=True):
            await pilot.press(key)
            await pilot.pause()
            assert tabs.active == pane_id


async def test_200x60_keeps_the_full_names() -> None:
    app = _app("raid10-evo")
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_ready(pilot)
        await pilot.pause(0.1)
        lines = screen_lines(app)
        tab_row = next(line for line in lines if "Sync" in line and "Wear" in line)
        for title, _, _ in DETAIL_PANES:
            assert f" {title} " in tab_row
        footer = lines[-1]
        for label in ("n New array", "b Boost sync", "L Audit log", "d Details", "^p palette"):
            assert label in footer, footer


def test_fit_keys_drops_the_least_important_first() -> None:
    keys = [
        ("jump", "g", "Link"),
        ("show_tab('details')", "d", "Details"),
        ("app.quit", "q", "Quit"),
        ("refresh", "r", "Refresh"),
        ("boost", "b", "Boost"),
    ]
    # everything but the tab key (never when narrow) fits in 32 columns: 7 + 7 + 10 + 8
    assert fit_keys(keys, 32, FOOTER_PRIORITY) == {0, 2, 3, 4}
    assert fit_keys(keys, 31, FOOTER_PRIORITY) == {0, 2, 4}  # refresh ranks below jump
    # 16 columns: "q Quit " + "b Boost " = 15; refresh (40) and jump (55) go first
    assert fit_keys(keys, 16, FOOTER_PRIORITY) == {2, 4}
