"""Snapshot tests of the main screen for every simulated scenario, at 80×24 and 200×60.

The clock is manual, so each picture is deterministic. Each run also writes the SVG to
``screenshots/<scenario>-<W>x<H>.svg`` so the pictures in the README stay current
(``make snapshots`` = ``pytest tests/ui --snapshot-update`` accepts new pictures).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import textual._doc
from textual.pilot import Pilot

from app.ui.app import RaidmanApp
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.fake_backend import FakeBackend
from tests.ui.helpers import wait_ready

SCREENSHOTS = Path(__file__).resolve().parents[2] / "screenshots"
SCENARIOS = (
    "raid10-evo",
    "raid5-cable",
    "raid6-wd",
    "usb-bridge",
    "imsm",
    "blank",
    "retire",
    "spare",
    "lvm-raid",
)
SIZES = ((80, 24), (200, 60))
SCENARIO_SIZES = ((80, 24), (120, 40), (200, 60))  # issue 16: every scenario at all three

SnapSave = Callable[..., bool]


@pytest.fixture
def snap_save(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> SnapSave:
    """``snap_compare`` that also writes the picture it took to ``screenshots/<name>.svg``."""

    def compare(app: RaidmanApp, name: str, **kw: Any) -> bool:
        taken: list[str] = []
        original = textual._doc.take_svg_screenshot

        def take(*args: Any, **kwargs: Any) -> str:
            svg = original(*args, **kwargs)
            taken.append(svg)
            return svg

        monkeypatch.setattr(textual._doc, "take_svg_screenshot", take)
        result = bool(snap_compare(app, **kw))
        assert taken, "snap_compare took no screenshot"
        SCREENSHOTS.mkdir(exist_ok=True)
        (SCREENSHOTS / f"{name}.svg").write_text(taken[0], encoding="utf-8")
        return result

    return compare


async def _ready(pilot: Pilot[None]) -> None:
    await wait_ready(pilot)
    await pilot.pause(0.1)


def _scenario_app(name: str) -> RaidmanApp:
    backend = SimulatedBackend.from_scenario(name, clock=SimClock.manual())
    return RaidmanApp(backend, probe_interval=0, sample_interval=0)


@pytest.mark.parametrize(
    ("width", "height"), SCENARIO_SIZES, ids=[f"{w}x{h}" for w, h in SCENARIO_SIZES]
)
@pytest.mark.parametrize("scenario", (*SCENARIOS, "big"))
def test_scenario(snap_save: SnapSave, scenario: str, width: int, height: int) -> None:
    app = _scenario_app(scenario)
    assert snap_save(
        app, f"{scenario}-{width}x{height}", terminal_size=(width, height), run_before=_ready
    )


def test_every_scenario_has_its_snapshots() -> None:
    """A scenario added to the simulator is pictured at every size (issue 24: 80x24 for every
    scenario), not left out of the snapshot list."""
    from backends.simulated.scenarios import SCENARIOS as REGISTERED

    assert {*SCENARIOS, "big"} == set(REGISTERED)


def test_fake_machine_mdstat_tab(snap_save: SnapSave) -> None:
    """The mdstat pane and a notes line, on the hand-built machine."""
    app = RaidmanApp(FakeBackend(), probe_interval=0, sample_interval=0)  # type: ignore[arg-type]
    assert snap_save(app, "fake-mdstat-120x30", terminal_size=(120, 30), run_before=_mdstat)


async def _mdstat(pilot: Pilot[None]) -> None:
    await _ready(pilot)
    await pilot.press("m")
    await pilot.pause(0.1)


async def _sync_tab_after_samples(pilot: Pilot[None]) -> None:
    """Sync tab of raid10-evo after ten 1-second samples on the manual clock."""
    app = pilot.app
    assert isinstance(app, RaidmanApp)
    await wait_ready(pilot)
    backend = app.backend
    assert isinstance(backend, SimulatedBackend)
    app.show_tab("sync")
    for _ in range(10):
        backend.clock.advance(1)
        n = app.sample_count
        app.refresh_sample()
        for _ in range(100):
            if app.sample_count > n:
                break
            await pilot.pause(0.02)
    await pilot.pause(0.2)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_sync_view(snap_save: SnapSave, width: int, height: int) -> None:
    app = _scenario_app("raid6-wd")
    assert snap_save(
        app,
        f"sync-raid6-wd-{width}x{height}",
        terminal_size=(width, height),
        run_before=_sync_tab_after_samples,
    )


async def _boosted_sync_tab(pilot: Pilot[None]) -> None:
    """raid10-evo's resync boosted (b, Run), then ten 1-second samples: the card says boosted,
    with the limits in force per member and when they are restored."""
    app = pilot.app
    assert isinstance(app, RaidmanApp)
    backend = app.backend
    assert isinstance(backend, SimulatedBackend)
    await wait_ready(pilot)
    app.show_tab("sync")
    await pilot.press("b")
    await pilot.pause()
    await pilot.click("#pp-run")
    await app.workers.wait_for_complete()
    await pilot.press("escape")
    for _ in range(10):
        backend.clock.advance(1)
        n = app.sample_count
        app.refresh_sample()
        for _ in range(100):
            if app.sample_count > n:
                break
            await pilot.pause(0.02)
    await pilot.pause(0.2)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_sync_view_boosted(snap_save: SnapSave, width: int, height: int) -> None:
    app = _scenario_app("raid10-evo")
    assert snap_save(
        app,
        f"sync-boosted-raid10-evo-{width}x{height}",
        terminal_size=(width, height),
        run_before=_boosted_sync_tab,
    )


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_sync_view_lvm_raid(snap_save: SnapSave, width: int, height: int) -> None:
    """An LVM RAID LV's resync as a card (issue 42): progress, speed and ETA from dm-raid's
    ratio and its images' I/O, the limits named (md's min holds it above the LV's max)."""
    app = _scenario_app("lvm-raid")
    assert snap_save(
        app,
        f"sync-lvm-raid-{width}x{height}",
        terminal_size=(width, height),
        run_before=_sync_tab_after_samples,
    )
