"""Focus and back (issue 24 item 6): at 200x60 Esc brings the focus back to the tree after the
tab keys moved it to the panes, and the tree's cursor stays visible meanwhile; after a jump the
footer says backspace goes back, at 80 columns too, and ? says what goes back; the / filter
shows what is typed and leaves the banner in view."""

from __future__ import annotations

from textual.widgets import Input

from app.ui.app import RaidmanApp
from app.ui.screens.help import HelpScreen
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready
from widgets.header_banner import HeaderBanner
from widgets.keys_footer import FooterEntry, KeysFooter
from widgets.storage_tree import StorageTree


def _app() -> RaidmanApp:
    backend = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    return RaidmanApp(backend, probe_interval=0, sample_interval=0)


def _footer(app: RaidmanApp) -> dict[str, str]:
    footer = app.screen.query_one(KeysFooter)
    return {e.action: e.description for e in footer.query(FooterEntry)}


async def test_escape_returns_to_the_tree_at_200x60() -> None:
    app = _app()
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_ready(pilot)
        tree = app.storage_tree
        line = tree.cursor_line
        for keys in (("tab",), ("tab", "tab"), ("f", "tab", "tab")):
            for k in keys:
                await pilot.press(k)
            await pilot.pause()
            assert not tree.has_focus
            assert "show_tree" in _footer(app)  # the footer says Esc brings it back
            # the cursor line is still drawn as the cursor (not the tree's plain background)
            assert tree.get_component_rich_style("tree--cursor").bgcolor is not None
            await pilot.press("escape")
            await pilot.pause()
            assert tree.has_focus and tree.cursor_line == line, keys


async def test_back_after_a_jump_is_in_the_footer_and_help() -> None:
    app = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        assert "back" not in _footer(app)  # nowhere to go back to yet
        app.go_to("sdb")
        await pilot.pause()
        app.go_to("md0")
        await wait_for(pilot, lambda: app.selected is not None and app.selected.name == "md0")
        await pilot.pause()
        assert _footer(app).get("back") == "Back"
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = " ".join(str(s.render()) for s in app.screen.query(".help-extra"))
        assert "backspace on the tree goes back" in text
        assert "Esc goes back one step" not in text
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("backspace")
        await wait_for(pilot, lambda: app.selected is not None and app.selected.name == "sdb")


async def test_filter_box_shows_the_text_and_not_over_the_banner() -> None:
    app = _app()
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_ready(pilot)
        await pilot.press("slash")
        await pilot.pause()
        for k in "sdb":
            await pilot.press(k)
        await pilot.pause()
        box = app.screen.query_one(Input)
        banner = app.main.query_one(HeaderBanner)
        assert box.region.height == 1 and box.region.y >= banner.region.bottom
        assert "sdb" in box.render_line(0).text
        assert isinstance(app.main.query_one(StorageTree), StorageTree)
        # issue 39: `/` again was typed into the field ("sdb/"): it starts a new filter
        await pilot.press("slash", "m", "d")
        await pilot.pause()
        assert box.value == "md" and app.storage_tree.filter_text == "md"


async def test_escape_from_the_preview_lands_in_a_field() -> None:
    """Issue 39: back from the preview (Esc) after the Preview button, no field had the focus
    (the button kept it): the first field has it; a field that had it keeps it."""
    from textual.widgets import Button

    from app.ui.screens.plan_preview import PlanPreviewScreen
    from app.ui.screens.wizards import CreateArrayWizard, DevicePicker

    backend = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, CreateArrayWizard))
        wizard = app.screen
        await pilot.press("tab", "space", "down", "space")
        for via_button in (True, False):
            if via_button:
                wizard.query_one("#wz-preview", Button).focus()
                await pilot.press("enter")
            else:
                wizard.query_one("#ca-devices", DevicePicker).focus()
                await pilot.press("ctrl+r")
            await wait_for(pilot, lambda: isinstance(app.screen, PlanPreviewScreen), timeout=20)
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is wizard)
            await pilot.pause(0.1)
            want = "ca-level" if via_button else "ca-devices"
            assert app.focused is not None and app.focused.id == want, app.focused
