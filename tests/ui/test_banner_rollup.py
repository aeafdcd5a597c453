"""The banner stays one line on a machine with many arrays in trouble, names the worst array,
and a click lists them all and goes to the worst (issue 16: on `big` the banner of 16 syncing
arrays took 7 of 24 rows)."""

from __future__ import annotations

from app.rollup import rollup, syncing_part
from app.ui.app import RaidmanApp
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready
from widgets.header_banner import HeaderBanner, banner_text


def test_rollup_counts_many_and_names_the_slowest() -> None:
    m = SimulatedBackend.big(disks=64, arrays=16, syncing=16, clock=SimClock.manual()).probe()
    r = rollup(m)
    assert len(r.syncing) == 16 and not r.degraded
    etas = [a.sync.eta_s for a in r.syncing if a.sync is not None]
    assert all(e is not None for e in etas)
    assert etas == sorted(etas, reverse=True)  # longest first
    assert r.worst == r.syncing[0].name
    line = syncing_part(r)
    assert line.startswith("16 arrays, slowest ") and r.worst in line and "ETA" in line
    one = banner_text(m)
    assert one is not None and "\n" not in one.plain
    every = banner_text(m, expanded=True)
    assert every is not None and every.plain.count("\n") == 16


def test_one_syncing_array_is_shown_in_full() -> None:
    m = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual()).probe()
    t = banner_text(m)
    assert t is not None
    assert "md127 resync" in t.plain and "ETA" in t.plain and "%" in t.plain


async def test_big_banner_is_one_line_at_80x24_and_a_click_goes_to_the_worst() -> None:
    backend = SimulatedBackend.big(disks=64, arrays=16, syncing=16, clock=SimClock.manual())
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        header = app.main.query_one(HeaderBanner)
        assert header.region.height == 2  # title + one banner line
        worst = rollup(app.machine).worst
        assert worst is not None
        app.go_to("sda")
        await wait_for(pilot, lambda: app.selected is not None and app.selected.name == "sda")
        await pilot.click(HeaderBanner, offset=(10, 1))
        await wait_for(pilot, lambda: app.selected is not None and app.selected.name == worst)
        await wait_for(pilot, lambda: header.region.height > 2)  # every array listed
        await pilot.click(HeaderBanner, offset=(10, 1))
        await wait_for(pilot, lambda: header.region.height == 2)
