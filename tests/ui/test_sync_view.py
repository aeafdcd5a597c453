"""Pilot: the Sync pane on the simulated RAID-10 of seed 000 (resync read at 384214 K/s just after
speed_limit_max was raised to 500000, ramping up to that limit), the boost key through its plan
preview, the limits restored by the App when the sync ends, and events."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from app.format import speed
from app.sync.tracker import SyncTracker, SyncView
from app.ui.app import RaidmanApp
from app.ui.screens.plan_preview import PlanPreviewScreen
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import screen_lines, wait_for, wait_ready
from widgets.sync_pane import EventLog, Line, SyncCard, WrapLine, progress_items


def _app(scenario: str = "raid10-evo") -> tuple[RaidmanApp, SimClock, SimulatedBackend]:
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario(scenario, clock=clock)
    return RaidmanApp(backend, probe_interval=0, sample_interval=0), clock, backend


async def _tick(pilot: Pilot[None], app: RaidmanApp, clock: SimClock, seconds: float = 1.0) -> None:
    clock.advance(seconds)
    n = app.sample_count
    app.refresh_sample()
    await wait_for(pilot, lambda: app.sample_count > n)


def _card_text(app: RaidmanApp, array: str) -> str:
    card = app.main.query_one(f"#sync-{array}", SyncCard)
    return "\n".join(line.text for line in card.query(Line))


async def test_sync_card_shows_progress_speed_eta_and_history() -> None:
    app, clock, _ = _app()
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_ready(pilot)
        app.show_tab("sync")
        for _ in range(5):
            await _tick(pilot, app, clock)
        await wait_for(pilot, lambda: bool(app.main.query("#sync-md127")))
        await _tick(pilot, app, clock)
        text = _card_text(app, "md127")
        (view,) = app.session.tracker.views()
        assert "md127: resync" in text
        assert f"{speed(view.speed_kib_s)} progress" in text  # md's window still ramping
        assert "ETA" in text and "watched for" in text
        # the limits bound the progress rate itself: no per-member conversion (issue 22)
        assert f"limits 195.3 MiB/s … 488.3 MiB/s; now {speed(view.speed_kib_s)}" in text
        assert "per member" not in text
        assert "at its ceiling" not in text  # 384214 → ~430000: below 95 % of 500000
        assert len(view.speeds) == 6  # one point per sample taken
        assert view.fraction is not None and f"{view.fraction * 100:.1f}%" in text
        assert (
            view.done_sectors is not None and view.done_sectors > 54_817_792
        )  # moved on from 16.3 %


async def test_boost_key_previews_raises_and_app_restores_at_the_end() -> None:
    app, clock, backend = _app()
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_ready(pilot)
        await _tick(pilot, app, clock)
        await pilot.press("b")
        await pilot.pause()
        preview = app.screen
        assert isinstance(preview, PlanPreviewScreen)
        # min is already the article's 200000; max goes to what four SATA SSDs can do
        assert [s.argv for s in preview.plan.steps] == [
            ("sysctl", "-w", "dev.raid.speed_limit_max=1343000"),
        ]
        await pilot.click("#pp-run")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert backend.read_text("/proc/sys/dev/raid/speed_limit_max") == "1343000\n"
        await pilot.press("escape")
        await wait_for(pilot, lambda: [r.array for r in app.boosts.records] == ["md127"])
        # run the resync to its end: the App restores the limits by itself
        for _ in range(40):
            await _tick(pilot, app, clock, 15)
            if not app.boosts.records:
                break
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.boosts.records == ()
        assert backend.read_text("/proc/sys/dev/raid/speed_limit_max") == "500000\n"
        assert backend.read_text("/proc/sys/dev/raid/speed_limit_min") == "200000\n"
        log = app.main.query_one(EventLog)
        assert any("resync finished" in line for line in log.entries)
        (fin,) = app.session.tracker.finished
        assert fin.completed and fin.action == "resync"


@pytest.mark.parametrize("width", [80, 200])
async def test_after_a_boost_the_card_says_boosted_in_full(width: int) -> None:
    """Seed 000's resync held at its raised 500000 (the card says "at its ceiling" and offers the
    boost); after the boost (500000 → what the SSDs can do) the card no longer offers it, says
    what was raised and when it is restored — in full at 200 columns, wrapped at 80."""
    app, clock, _ = _app()
    async with app.run_test(size=(width, 40)) as pilot:
        await wait_ready(pilot)
        app.show_tab("sync")
        await _tick(pilot, app, clock)
        await wait_for(pilot, lambda: bool(app.main.query("#sync-md127")))
        await _tick(pilot, app, clock, 30)  # md's 30 s speed window has caught up: held
        assert "at its ceiling" in _card_text(app, "md127")
        assert "b: boost" in _card_text(app, "md127")
        await pilot.press("b")
        await pilot.pause()
        await pilot.click("#pp-run")
        await app.workers.wait_for_complete()
        await pilot.press("escape")
        await wait_for(pilot, lambda: "boosted" in _card_text(app, "md127"))
        for _ in range(3):
            await _tick(pilot, app, clock)
        text = _card_text(app, "md127")
        assert "b: boost" not in text and "raising the limit" not in text
        assert "max 488.3 MiB/s → 1.3 GiB/s" in text
        assert "… 1.3 GiB/s;" in text  # the limit now in force
        state = app.main.query_one("#sync-md127 #limit-state", WrapLine)
        sentence = (
            "limits are restored when this resync of md127 ends, even after a restart of raidman"
        )
        r = state.region  # the rows and columns of the screen the state line occupies
        rows = [line[r.x : r.right] for line in screen_lines(app)[r.y : r.bottom]]
        shown = " ".join(" ".join(rows).split())
        assert sentence in shown  # every word on screen, none cut off
        assert "…" not in state.render().plain
        assert state.size.height >= 2  # wrapped, not cut: the text is longer than the card


async def test_member_failure_is_announced() -> None:
    app, clock, backend = _app()
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_ready(pilot)
        await _tick(pilot, app, clock)
        result = backend.run(["mdadm", "/dev/md127", "--fail", "/dev/sdb2"])
        assert result.ok, result.stderr
        await _tick(pilot, app, clock)
        kinds = [e.kind for e in app.session.tracker.events]
        assert "member-faulty" in kinds and "degraded" in kinds
        log = app.main.query_one(EventLog)
        assert any("sdb2 in md127 is faulty" in line for line in log.entries)


async def test_sync_start_snapshots_smart_at_once() -> None:
    """A sync seen starting takes its SMART snapshots right away (not at the next wear tick)."""
    from app.wear.snapshots import SnapshotStore

    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid5-cable", clock=clock)
    app = RaidmanApp(backend, probe_interval=0, sample_interval=3600)  # timers never fire here
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_ready(pilot)
        await _tick(pilot, app, clock)  # first sample: the recovery is seen -> sync-started
        await app.workers.wait_for_complete()
        await pilot.pause()
        store = SnapshotStore.open()
        (sync,) = store.running_syncs()
        assert sync.array == "md127" and sync.action == "recover"
        assert len({m.disk for m in sync.members}) == 4
        for m in sync.members:
            assert m.serial is not None
            assert store.snapshots_for(m.serial), m
        store.close()


def test_card_says_the_two_speeds_use_different_windows() -> None:
    """issue 24 item 8: after a boost the members' rates and the progress rate disagreed for
    ~20 s without a word: md's sync_speed is a mean over up to 30 s of marks (md.c
    sync_speed_show), the members' rates are between two samples; the card says so."""
    from app.sync.throughput import Rate
    from widgets.sync_pane import members_items

    be = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual())
    m = be.probe()
    (a,) = m.arrays
    rates = {x.device: Rate(x.device, 1e8, 1e8) for x in a.members}
    cells = members_items(a.name, m, rates, ())
    assert cells[0].startswith("members: ") and "since the last sample" in cells[-1]
    tr = SyncTracker()
    tr.update(be.sample())
    (view,) = tr.views()
    assert any("md's mean over ≤30 s" in item for item in progress_items(view))


def test_the_card_shows_mds_eta_also_at_the_ceiling() -> None:
    """Issue 39: the card summed its own ETA at the ceiling (the held rate): 7m 42s beside the
    banner's 6m 22s after a limit change. It shows the view's, md's own, as every screen."""
    v = SyncView(
        array="md127", action="resync", done_sectors=1, total_sectors=10, speed_kib_s=4401,
        eta_s=60.0, elapsed_s=1.0, targets=(), speeds=(), min_speed_kib_s=1000,
        max_speed_kib_s=4000,
    )  # fmt: skip
    assert "ETA 1m 00s" in progress_items(v)
