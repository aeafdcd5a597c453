"""A new RAID-5's initial build is said as such (issue 24 item 9): mdadm builds a new RAID-5
degraded and rebuilds its last member, so md reports it degraded; after raidman's create plan
ran, the banner says 'initial build' in the syncing part instead of a red DEGRADED. A rebuild
of an array raidman did not create stays DEGRADED (raid5-cable)."""

from __future__ import annotations

from textual.widgets import Input, Select, SelectionList

from app.rollup import rollup
from app.ui.app import RaidmanApp
from app.ui.screens.plan_preview import PlanPreviewScreen
from app.ui.screens.wizards import CreateArrayWizard
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready
from widgets.header_banner import HeaderBanner, banner_text


def test_only_a_created_array_is_an_initial_build() -> None:
    m = SimulatedBackend.from_scenario("raid5-cable", clock=SimClock.manual()).probe()
    (a,) = m.arrays
    assert rollup(m).degraded == (a,)  # a rebuild raidman did not start: DEGRADED
    r = rollup(m, {a.name})
    assert not r.degraded and r.initial == {a.name}
    text = banner_text(m, initial={a.name})
    assert text is not None and "DEGRADED" not in text.plain
    assert f"{a.name} initial build" in text.plain


async def test_banner_after_creating_a_raid5(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))
    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    app = RaidmanApp(be, probe_interval=0, sample_interval=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, CreateArrayWizard))
        wiz = app.screen
        devs = wiz.query_one("#ca-devices", SelectionList)
        for d in ("nvme0n1", "nvme1n1", "nvme2n1"):
            devs.select(d)
        wiz.query_one("#ca-level", Select).value = "5"
        wiz.query_one("#ca-name", Input).value = "126"
        await pilot.pause()
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, PlanPreviewScreen))
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("1", "2", "6", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("escape")  # close the preview: the wizard hands the report back
        await wait_for(pilot, lambda: not isinstance(app.screen, PlanPreviewScreen))
        app.refresh_probe()
        header = app.main.query_one(HeaderBanner)
        await wait_for(pilot, lambda: "initial build" in header.render_line(1).text)
        assert "DEGRADED" not in header.render_line(1).text
