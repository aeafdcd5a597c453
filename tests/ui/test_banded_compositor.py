"""The compositor of the 1 Hz screens renders only the rows that changed (issue 29: the update
each second walked every widget under the rectangle around the banner, a tree line and the
Details' sync lines, i.e. most of the screen), and what it sends to the terminal is the same,
byte for byte, as Textual's own partial update for the same dirty regions."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable

import pytest
from rich.console import Console
from textual._compositor import Compositor
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from app.ui.app import RaidmanApp
from backends.simulated import SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready
from widgets.banded_compositor import BAND_GAP, BandedCompositor, row_bands


def test_bands_join_regions_whose_rows_overlap_and_keep_the_others_apart() -> None:
    regions = [Region(0, 1, 200, 1), Region(92, 37, 108, 4), Region(0, 21, 88, 1)]
    regions.append(Region(100, 39, 10, 5))  # overlaps the Details' rows: same band
    assert row_bands(regions) == [
        Region(0, 1, 200, 1),
        Region(0, 21, 88, 1),
        Region(92, 37, 108, 7),
    ]
    assert row_bands([Region(0, 0, 0, 0)]) == []
    # touching rows are one band (a pass over the widgets per band: the sync lines in one)
    assert row_bands([Region(0, 0, 5, 2), Region(0, 2, 5, 1), Region(0, 4, 5, 1)], gap=0) == [
        Region(0, 0, 5, 3),
        Region(0, 4, 5, 1),
    ]
    # and so are rows up to BAND_GAP clean rows apart (the Details' progress and ETA lines
    # moved, the speed between them held): one pass, not two; three clean rows part them
    assert BAND_GAP == 2
    assert row_bands([Region(0, 0, 5, 2), Region(0, 4, 5, 1), Region(0, 8, 5, 1)]) == [
        Region(0, 0, 5, 5),
        Region(0, 8, 5, 1),
    ]


RENDERED: list[str] = []  # the widgets the last ``_update`` rendered, by class name


def _update(comp: BandedCompositor, regions: Iterable[Region], *, stock: bool) -> tuple[str, int]:
    """What the partial update for ``regions`` writes, and how many lines the widgets rendered
    for it (Textual's own compositor when ``stock``)."""
    lines = 0
    real = Widget.render_lines
    RENDERED.clear()

    def counting(self: Widget, crop: Region) -> list[Strip]:
        nonlocal lines
        strips = real(self, crop)
        lines += len(strips)
        RENDERED.append(type(self).__name__)
        return strips

    cls = type(comp)
    if stock:
        comp.__class__ = Compositor  # type: ignore[assignment]
    Widget.render_lines = counting  # type: ignore[method-assign]
    try:
        comp._dirty_regions = set(regions)
        update = comp.render_partial_update()
    finally:
        Widget.render_lines = real  # type: ignore[method-assign]
        comp.__class__ = cls
    assert update is not None
    console = Console(width=comp.size.width, color_system="truecolor", force_terminal=True)
    return update.render_segments(console), lines


@pytest.mark.parametrize(("scenario", "size"), [("raid10-evo", (200, 60)), ("big", (80, 24))])
def test_the_update_is_textuals_and_renders_fewer_lines(
    scenario: str, size: tuple[int, int]
) -> None:
    app = RaidmanApp(SimulatedBackend.from_scenario(scenario), probe_interval=0)

    async def run() -> None:
        async with app.run_test(size=size) as pilot:
            await wait_ready(pilot)
            await wait_for(pilot, lambda: app.sample_count >= 2)
            comp = app.screen._compositor
            assert isinstance(comp, BandedCompositor)
            w, h = size
            # the rows a syncing array moves each second, far apart, as the app marks them
            seconds = [
                Region(0, 1, w, 1),
                Region(0, h // 3, w // 2, 1),
                Region(w // 2, h - 8, w // 2, 3),
            ]
            cases: list[list[Region]] = [seconds, [Region(0, 0, w, h)], [Region(3, 5, 1, 1)]]
            rnd = random.Random(29)
            for _ in range(25):
                cases.append(
                    [
                        Region(
                            rnd.randrange(w),
                            rnd.randrange(h),
                            rnd.randrange(1, w),
                            rnd.randrange(1, 6),
                        ).intersection(Region(0, 0, w, h))
                        for _ in range(rnd.randrange(1, 5))
                    ]
                )
            fewer = 0
            for regions in cases:
                regions = [r for r in regions if r]
                if not regions:
                    continue
                ours, ours_lines = _update(comp, regions, stock=False)
                theirs, their_lines = _update(comp, regions, stock=True)
                assert ours == theirs, regions
                assert ours_lines <= their_lines
                fewer += ours_lines < their_lines
            assert fewer > len(cases) // 2
            _, ours_lines = _update(comp, seconds, stock=False)
            _, their_lines = _update(comp, seconds, stock=True)
            # the three moving places: a few rows of each widget under them, not all of them
            assert ours_lines * 4 < their_lines, (ours_lines, their_lines)
            print(
                scenario, size, "lines rendered for one second's update:", ours_lines, their_lines
            )
            # the Details' sync lines alone: the tree beside them is not rendered, nor the
            # screen and containers their children cover there (issue 44)
            ours, _ = _update(comp, [seconds[2]], stock=False)
            assert ours == _update(comp, [seconds[2]], stock=True)[0]
            _update(comp, [seconds[2]], stock=False)
            assert "StorageTree" not in RENDERED, RENDERED
            assert "MainScreen" not in RENDERED and "ContentSwitcher" not in RENDERED, RENDERED

    asyncio.run(run())


def test_the_screens_that_update_every_second_use_it() -> None:
    from app.ui.screens.hosts import HostsScreen
    from app.ui.screens.main import MainScreen

    assert isinstance(MainScreen()._compositor, BandedCompositor)
    assert isinstance(HostsScreen()._compositor, BandedCompositor)
