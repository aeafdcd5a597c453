"""The banner stays one line on a machine with many arrays in trouble, names the worst array,
and a click lists them all and goes to the worst (issue 16: on `big` the banner of 16 syncing
arrays took 7 of 24 rows)."""

from __future__ import annotations

from app.format import duration, percent, speed
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


def test_narrow_banner_keeps_speed_and_eta() -> None:
    """issue 24 item 5: at 80 columns a degraded, rebuilding array's banner ended
    'recover 0.1% @ 18…'; the words shorten, the numbers stay."""
    for scenario in ("raid5-cable", "raid6-wd"):
        m = SimulatedBackend.from_scenario(scenario, clock=SimClock.manual()).probe()
        wide = banner_text(m)
        narrow = banner_text(m, width=78)
        assert wide is not None and narrow is not None
        assert wide.cell_len > 78 >= narrow.cell_len
        (a,) = m.syncing_arrays
        assert a.sync is not None and a.sync.eta_s is not None
        for number in (percent(a.sync.fraction), speed(a.sync.speed_kib_s), duration(a.sync.eta_s)):
            assert number in narrow.plain
        assert "1 missing" in narrow.plain


async def test_first_screen_at_80x24_shows_speed_and_eta() -> None:
    for scenario in ("raid5-cable", "raid6-wd"):
        backend = SimulatedBackend.from_scenario(scenario, clock=SimClock.manual())
        app = RaidmanApp(backend, probe_interval=0, sample_interval=0)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_ready(pilot)
            header = app.main.query_one(HeaderBanner)
            await pilot.pause()
            line = header.render_line(1).text
            assert "MiB/s" in line and "ETA" in line and "…" not in line, line
