"""Navigating a big machine (issue 16 §2): `/` filters the tree by name, model, serial or state,
and `backspace` walks back along the jumps made with links, the palette or the banner."""

from __future__ import annotations

from app.ui.app import RaidmanApp
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready
from widgets.tree_filter import TreeFilterScreen, filter_specs
from widgets.tree_spec import build_tree_spec


def _keys(app: RaidmanApp) -> list[str]:
    return app.storage_tree.keys


def test_filter_keeps_matches_their_path_and_what_is_under_them() -> None:
    m = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual()).probe()
    specs = build_tree_spec(m)
    kept, n = filter_specs(specs, "sdb", m, {})
    keys = [s.ref.key for s in kept]
    assert n >= 2
    assert "dev:sdb" in keys and "dev:sdb1" in keys  # the disk and what is under it
    assert "section:disks" in keys  # the path to it
    assert "dev:sda" not in keys and "dev:sdc" not in keys
    # a state keyword: only the degraded array (and its members under it)
    kept, n = filter_specs(specs, "degraded", m, {})
    arrays = [s.ref.name for s in kept if s.ref.kind == "array"]
    assert arrays == ["md0"] and n == 1
    # a serial finds its disk
    serial = next(d.serial for d in m.disks if d.name == "sdc")
    assert serial
    kept, _ = filter_specs(specs, serial.lower(), m, {})
    assert "dev:sdc" in [s.ref.key for s in kept]
    # words are ANDed
    kept, n = filter_specs(specs, "sdb nothing-like-this", m, {})
    assert n == 0


async def test_slash_filters_as_you_type_and_escape_clears() -> None:
    backend = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ready(pilot)
        app.storage_tree.focus()
        await pilot.press("slash")
        await wait_for(pilot, lambda: isinstance(app.screen, TreeFilterScreen))
        await pilot.press(*"sdc")
        await wait_for(pilot, lambda: "dev:sda" not in _keys(app))
        assert "dev:sdc" in _keys(app) and _keys(app)[0] == "filter"
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, TreeFilterScreen))
        await wait_for(pilot, lambda: app.selected is not None and app.selected.name == "sdc", 15)
        assert app.storage_tree.filter_text == "sdc"
        app.storage_tree.focus()
        await pilot.press("escape")
        await wait_for(pilot, lambda: "dev:sda" in _keys(app))
        assert app.storage_tree.filter_text == "" and "filter" not in _keys(app)


async def test_backspace_goes_back_along_the_jumps() -> None:
    backend = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ready(pilot)
        tree = app.storage_tree
        tree.focus()
        assert app.go_to("sda1")
        await wait_for(pilot, lambda: app.selected is not None and app.selected.name == "sda1", 15)
        assert app.go_to("md0")  # a jump (palette, banner, finding)
        await wait_for(pilot, lambda: app.selected is not None and app.selected.name == "md0", 15)
        assert app.go_to("sde")
        await wait_for(pilot, lambda: app.selected is not None and app.selected.name == "sde", 15)
        await pilot.press("backspace")
        await wait_for(pilot, lambda: app.selected is not None and app.selected.name == "md0", 15)
        await pilot.press("backspace")
        await wait_for(pilot, lambda: app.selected is not None and app.selected.name == "sda1", 15)
        # a jump to a node the filter hides clears the filter first
        tree.set_filter("sdb")
        await wait_for(pilot, lambda: app.selected is not None and app.selected.name == "sdb", 15)
        assert "dev:sde" not in tree.keys
        assert app.go_to("sde")
        await wait_for(pilot, lambda: app.selected is not None and app.selected.name == "sde", 15)
        assert tree.filter_text == ""
