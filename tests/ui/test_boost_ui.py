"""The boost key on a rotational array (seed 001's RAID-6 of WD disks, recovering): the plan
leaves speed_limit_min alone and says why; the restore record is on disk (pending) while the
preview is open, before anything is raised, and is dropped when the preview closes unrun."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.ui.app import RaidmanApp
from app.ui.screens.plan_preview import PlanPreviewScreen
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready


async def test_boost_on_rotational_array_keeps_min_and_writes_record_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid6-wd", clock=clock)
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_ready(pilot)
        n = app.sample_count
        app.refresh_sample()
        await wait_for(pilot, lambda: app.sample_count > n)
        await pilot.press("b")
        await pilot.pause()
        preview = app.screen
        assert isinstance(preview, PlanPreviewScreen)
        assert [s.argv for s in preview.plan.steps] == [
            # what the WD disks can do (~250000 KiB/s each, rated), with a quarter headroom
            ("sysctl", "-w", "dev.raid.speed_limit_max=313000"),
            ("tee", "/sys/block/md0/md/stripe_cache_size"),
        ]
        assert any("starves foreground I/O" in note for note in preview.plan.notes)
        # the stripe cache costs a page per raid device slot: 5, not the 6 listed members
        # (the faulty sdb1 and the spare sdf1 hold no slot): 8192 × 4 KiB × 5 = 160 MiB
        assert "costs 160 MiB RAM" in preview.plan.steps[1].why
        # nothing raised yet, but the record that undoes it is already on disk
        assert backend.read_text("/proc/sys/dev/raid/speed_limit_max") == "200000\n"
        (rec,) = json.loads((tmp_path / "boost.json").read_text())
        assert rec["array"] == "md0" and rec["pending"] is True
        assert rec["previous"]["sysctl:dev.raid.speed_limit_max"] == "200000"
        await pilot.press("escape")
        await pilot.pause()
        assert app.boosts.records == ()
        assert json.loads((tmp_path / "boost.json").read_text()) == []
