"""Snapshot pictures of the wizards and the help screen (issue 11), at 80×24 and 200×60, written
to ``screenshots/`` too (``snap_save`` of test_snapshots): what an admin sees after ``n``, ``a``,
``t``, ``v`` and ``?`` on the syncing RAID-10 demo."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from tests.ui.test_snapshots import SIZES, SnapSave, _ready, _scenario_app, snap_save

__all__ = ["snap_save"]  # the fixture, imported for pytest

SCREENS = {"n": "create", "a": "members", "t": "sync", "v": "filesystem", "question_mark": "help"}


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("key", sorted(SCREENS))
def test_wizard(snap_save: SnapSave, key: str, width: int, height: int) -> None:
    async def open_it(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press(key)
        await pilot.pause(0.2)

    app = _scenario_app("raid10-evo")
    name = f"wizard-{SCREENS[key]}-raid10-evo-{width}x{height}"
    assert snap_save(app, name, terminal_size=(width, height), run_before=open_it)
