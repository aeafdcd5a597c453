"""Issue 16 point 1: at 80×24 every tab is named in the tab bar and reachable by its key, and
the footer shows the keys that matter (n a t b L q ?) instead of cutting them off; at 200×60
the full labels come back. Read from the rendered screen, as the admin sees it."""

from __future__ import annotations

import re

import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import TabbedContent

from app.rollup import rollup
from app.ui.app import RaidmanApp
from app.ui.screens.main import DETAIL_PANES, FOOTER_PRIORITY, SHORT_TITLES
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import screen_lines, wait_for, wait_ready
from widgets.header_banner import HeaderBanner
from widgets.keys_footer import fit_keys
from widgets.label_fit import squeeze_label
from widgets.storage_tree import StorageTree
from widgets.sync_pane import FlowLine, SyncCard, TitleLine
from widgets.text_wrap import fold_lines

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
        for key, (_, pane_id, _) in zip("dsfweml", DETAIL_PANES, strict=True):
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


# ---- the Sync, Events and mdstat tabs take the whole width below 120 columns -------------------
def _sync_card(app: RaidmanApp) -> SyncCard:
    return next(iter(app.main.query(SyncCard)))


async def _show_sync(pilot: Pilot[None], app: RaidmanApp) -> None:
    await pilot.press("s")
    n = app.sample_count
    app.refresh_sample()
    await wait_for(pilot, lambda: app.sample_count > n and bool(app.main.query(SyncCard)))
    app.refresh_sample()  # the card is composed now: fill it
    await wait_for(pilot, lambda: app.sample_count > n + 1)
    await pilot.pause(0.1)


async def test_80x24_sync_tab_takes_the_whole_width_and_the_tree_comes_back() -> None:
    app = _app("big")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        tree = app.main.query_one(StorageTree)
        assert tree.size.width >= 32 and tree.has_focus  # the Details tab: tree beside it
        await _show_sync(pilot, app)
        card = _sync_card(app)
        assert card.region.width >= 76, card.region  # (nearly) the screen's 80 columns
        assert tree.size.width == 0 and not tree.has_focus  # keys go to what is on screen
        lines = screen_lines(app)
        assert "md0: resync (initial or after an unclean stop)" in "\n".join(lines)
        assert "esc Tree" in lines[-1]  # how to get the tree back, in the footer
        # esc: the tree is back, focused; the Sync tab stays chosen
        await pilot.press("escape")
        await pilot.pause()
        assert tree.size.width >= 32 and tree.has_focus
        assert app.main.query_one(TabbedContent).active == "sync"
        assert "esc Tree" not in screen_lines(app)[-1]
        assert _sync_card(app).region.width < 50
        # choosing Sync again collapses it; Devices (d) brings it back
        await pilot.press("d", "s")
        await pilot.pause()
        assert tree.size.width == 0
        await pilot.press("d")
        await pilot.pause()
        assert tree.size.width >= 32
        # tab / shift+tab reach the collapsed tree and open it: the focus cycle is unchanged
        await pilot.press("e")
        await pilot.pause()
        assert tree.size.width == 0
        for _ in range(len(app.main.focus_chain)):
            await pilot.press("shift+tab")
            await pilot.pause()
            if tree.has_focus:
                break
        assert tree.has_focus and tree.size.width >= 32


async def test_80x24_a_jump_from_the_sync_tab_shows_the_tree_where_it_went() -> None:
    """A jump (the command palette, a finding, a Sync card's array) moves the tree cursor: with
    the tree collapsed at 80 columns, the tree comes back to show where it went."""
    app = _app("big")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        tree = app.main.query_one(StorageTree)
        await _show_sync(pilot, app)
        assert tree.size.width == 0
        assert app.go_to("md3")
        await pilot.pause()
        assert tree.size.width >= 32
        assert tree.cursor_node is not None and tree.cursor_node.data.name == "md3"


async def test_80x24_a_click_on_the_banner_shows_the_tree_at_the_worst_array() -> None:
    app = _app("big")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        tree = app.main.query_one(StorageTree)
        await _show_sync(pilot, app)
        assert tree.size.width == 0
        await pilot.click(HeaderBanner, offset=(10, 1))
        await wait_for(pilot, lambda: tree.size.width >= 32)
        worst = rollup(app.machine).worst if app.machine else None
        assert worst is not None and app.selected is not None and app.selected.name == worst


@pytest.mark.parametrize("key", ["s", "e", "m"])
async def test_200x60_keeps_the_tree_beside_every_tab(key: str) -> None:
    app = _app("raid10-evo")
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_ready(pilot)
        tree = app.main.query_one(StorageTree)
        side = app.main.query_one(TabbedContent)
        before = (tree.region, side.region)
        await pilot.press(key)
        await pilot.pause(0.1)
        assert (tree.region, side.region) == before
        assert tree.size.width > 60 and "esc Tree" not in screen_lines(app)[-1]


async def test_a_narrow_card_puts_the_title_explanation_on_its_own_line() -> None:
    app = _app("raid10-evo")
    async with app.run_test(size=(44, 30)) as pilot:
        await wait_ready(pilot)
        await _show_sync(pilot, app)
        title = _sync_card(app).query_one("#title", TitleLine)
        screen = "\n".join(screen_lines(app))
        assert "md127: resync" in screen
        assert "initial or after an unclean" in screen and "stop" in screen
        assert title.size.height >= 2  # wrapped below the head, not cut
        members = _sync_card(app).query_one("#members", FlowLine)
        # no rates yet (a manual clock): "members: sda2 ? | … | sdd2 ?" is 42 columns, more
        # than the card's 38: the fourth goes to a line of its own, none is cut
        assert members.size.height == 2
        assert "members: sda2 ? | sdb2 ? | sdc2 ?" in screen
        assert "│ sdd2 ?" in screen


def test_squeeze_label_keeps_the_state_map_and_the_sync_percent() -> None:
    label = Text("md0", style="bold")
    label.append("  raid6 [_UUUU] · DEGRADED(1) · recover 8.2%", style="red")
    # the map shows the hole: DEGRADED(1) gives way first
    assert squeeze_label(label, 42).plain == "md0  raid6 [_UUUU] · recover 8.2%"
    assert squeeze_label(label, 32).plain == "md0 raid6 [_UUUU] recover 8.2%"
    assert squeeze_label(label, 32).spans[0].style == "bold"  # the name keeps its style
    whole = Text("md127  raid6 [UUUU] · DEGRADED(1) · resync 1.0%")  # no hole: says it once
    assert "DEGRADED(1)" in squeeze_label(whole, 10).plain


def test_squeeze_label_drops_whole_parts_facts_last() -> None:
    """Issue 39: "md0 raid6 [_UUUU] recover 8.2% l" at 80×24 (the layout cut after one
    letter): parts go whole, layout and chunk before the live facts (speed, ETA)."""
    label = Text("md0  raid6 [_UUUU] · DEGRADED(1) · recover 8.2% · 24.4 MiB/s · ETA 9h 57m"
                 " · left-symmetric · 1M")  # fmt: skip
    assert squeeze_label(label, 60).plain == (
        "md0  raid6 [_UUUU] · recover 8.2% · 24.4 MiB/s · ETA 9h 57m"
    )
    assert squeeze_label(label, 52).plain == "md0 raid6 [_UUUU] recover 8.2% 24.4 MiB/s ETA 9h 57m"
    assert squeeze_label(label, 45).plain == "md0 raid6 [_UUUU] recover 8.2% 24.4 MiB/s"
    for room in range(30, 45):
        assert squeeze_label(label, room).plain.endswith(("8.2%", "MiB/s"))


async def test_80x24_tree_label_keeps_the_sync_percent() -> None:
    app = _app("raid6-wd")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.pause(0.1)
        sync = app.machine.array("md0").sync if app.machine else None
        assert sync is not None and sync.fraction is not None
        row = next(line for line in screen_lines(app) if "md0 raid6" in line)
        assert f"[_UUUU] recover {sync.fraction * 100:.1f}%" in row, row
        # issue 39: nothing after the percent but the end of the pane (no "l" of the layout)
        assert row.split("▕")[0].rstrip(" ▁▂▃▄▅▆▇█").endswith("%"), row


async def test_80x24_mdstat_recovery_line_keeps_finish_and_speed() -> None:
    """Issue 39: the mdstat tab cut md's recovery line at the edge of an 80-column terminal
    ("recovery =  0.3% (1397745/449218560) finish=40"): it is folded, whole."""
    app = _app("raid5-cable")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("m")
        await wait_for(pilot, lambda: any("recovery =" in ln for ln in screen_lines(app)))
        lines = screen_lines(app)
        i = next(i for i, ln in enumerate(lines) if "recovery =" in ln)
        shown = " ".join(ln.strip(" ▕▁▂▃▄▅▆▇█▊▍▎") for ln in lines[i : i + 2])
        assert re.search(r"finish=\d+\.\dmin speed=\d+K/sec", shown), lines[i : i + 2]
        assert "[UUU_]" in "".join(lines)  # the state map, folded onto its own row


def test_fold_lines_indents_the_continuation() -> None:
    line = "      [=>...................]  recovery =  8.2% (80337988/976561152) finish=549.1min speed=24999K/sec"
    assert fold_lines(line, 76) == [
        "      [=>...................]  recovery =  8.2% (80337988/976561152)",
        "          finish=549.1min speed=24999K/sec",
    ]
    assert fold_lines("short\n\nlines", 76) == ["short", "", "lines"]
