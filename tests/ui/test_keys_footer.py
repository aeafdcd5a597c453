"""The main screen's footer (widgets/keys_footer.py) is built on Textual's public API only: its
keys are its own ``FooterEntry`` widgets (Textual's footer key widget lives in a private module
that may change in any release). How it looks is pinned by tests/ui/test_snapshots.py."""

from __future__ import annotations

import ast
from pathlib import Path

from app.ui.app import RaidmanApp
from app.ui.screens.help import HelpScreen
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready

ROOT = Path(__file__).resolve().parents[2]


def _private_textual_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "textual" and any(p.startswith("_") for p in parts):
                found.append(f"{path.relative_to(ROOT)}: {name}")
    return found


# A private module imported on purpose (path: module -> why), with Textual pinned in
# constraints.txt and a test that fails if the module changes under it.
ALLOWED = {
    # the compositor whose partial update renders only the rows that moved (issue 29); its
    # output is compared byte for byte with Textual's own in tests/ui/test_banded_compositor.py
    "widgets/banded_compositor.py: textual._compositor",
}


def test_app_and_widgets_import_no_private_textual_module() -> None:
    found = [
        f
        for d in ("app", "widgets")
        for p in (ROOT / d).rglob("*.py")
        for f in _private_textual_imports(p)
    ]
    assert sorted(set(found) - ALLOWED) == []
    assert set(found) >= ALLOWED, "an allowance no longer needed: drop it"


async def test_footer_keys_are_its_own_and_a_click_presses_the_key() -> None:
    from widgets.keys_footer import FooterEntry, KeysFooter

    backend = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual())
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_ready(pilot)
        footer = app.screen.query_one(KeysFooter)
        entries = list(footer.query(FooterEntry))
        shown = {e.key_display: e.description for e in entries}
        assert shown["q"] == "Quit" and shown["n"] == "New array" and shown["?"] == "Help"
        help_key = next(e for e in entries if e.description == "Help")
        await pilot.click(help_key)
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
