"""Issue 36: the TUI's preview and ``raidman plan --json`` forecast the same plan alike at the same
moment. raid10-evo opens seconds after md's speed limit was raised, so md's own sync_speed (an
average over its ~30 s marks window) still lags the rate the resync runs at: the CLI took it for
the members' speed ("about 6m 05s at 375.2 MiB/s (the members' speed)") where the TUI said
"about 4m 24s at 505.4 MiB/s (md's limit)". Both now forecast from the progress measured over
the last second (app/plans/outcome/rates.py): the TUI from the session's last two samples, the CLI from
two it takes a second apart."""

from __future__ import annotations

import pytest

from app.plans.builders.sync_actions import build_speed_limits, build_sync_action
from app.plans.outcome.rates import progress_rates
from app.plans.plan import Plan
from app.plans.render import current_consequences, format_plan
from app.ui.app import RaidmanApp
from app.ui.screens.plan_preview import PlanPreviewScreen
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready


def _plan(scenario: str, backend: SimulatedBackend) -> Plan:
    m = backend.probe()
    if scenario == "raid6-wd":
        return build_sync_action(m, "md0", "frozen")
    return build_speed_limits(m, max_kib_s=400000, array="md127")


@pytest.mark.parametrize("scenario", ["raid10-evo", "raid6-wd"])
async def test_the_preview_forecasts_what_plan_json_does(scenario: str) -> None:
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario(scenario, clock=clock)
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0.05)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_ready(pilot)
        plan = _plan(scenario, backend)
        screen = PlanPreviewScreen(plan, backend, audit=app.audit_log())
        await app.push_screen(screen)
        for _ in range(3):  # the session samples each tick; the clock moves a second
            clock.advance(1)
            await pilot.pause(0.2)
            if screen.rated_from_samples:
                break
        await wait_for(pilot, lambda: screen.rated_from_samples, timeout=10)
        await app.workers.wait_for_complete()
        await pilot.pause()
        shown = screen.plan.consequences
        # the CLI at the same moment: the same machine, the same two samples' rate
        machine = screen.forecast_on
        assert machine is not None
        rates = progress_rates(*screen._lives[-2:])
        cli = current_consequences(plan, machine, backend, rates=rates).consequences
        assert shown is not None and cli is not None
        assert shown.to_json() == cli.to_json()
        assert shown.lines() == cli.lines()
        if scenario == "raid10-evo":
            (sync,) = shown.syncs
            assert sync.rate_source == "measured" and "(the array's own limit" in format_plan(
                screen.plan
            )
        else:
            assert [s.fate for s in shown.stops] == ["stopped"]


def test_a_rate_measured_after_a_limit_change_is_the_rate_md_holds() -> None:
    """md's sync_speed lags: 384,214 KiB/s when raid10-evo opens, while the resync moves at the
    rate md's throttle holds under the raised limit (md.c md_do_sync: currspeed compared with
    speed_max)."""
    clock = SimClock.manual()
    be = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    first = be.sample()
    clock.advance(1)
    second = be.sample()
    (md127,) = [a for a in second.arrays if a.name == "md127"]
    assert md127.sync is not None and md127.sync.speed_kib_s is not None
    rate = progress_rates(first, second)["md127"]
    assert rate > md127.sync.speed_kib_s * 1.2  # md's own figure still lags
    assert md127.sync.max_speed_kib_s is not None
    assert rate == pytest.approx(md127.sync.max_speed_kib_s * 1.035, rel=0.01)
