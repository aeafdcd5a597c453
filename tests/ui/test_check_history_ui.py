"""Pilot: the Sync tab shows each array's check history (issue 27 item 2) from the wear
database the app opens: a check recorded for md126 appears as "last check ..., N mismatches;
before: ..." under the cards; nothing is shown while no array has a check on record."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.ui.app import RaidmanApp
from app.wear.check_window import CheckWindow
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready
from widgets.check_history import CheckHistory


async def test_sync_tab_lists_the_check_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("imsm", clock=clock)
    uuid = backend.probe().array("md126").uuid  # type: ignore[union-attr]
    store = SnapshotStore.open(tmp_path / "state.db")
    now = clock.now()
    for i, n in enumerate((0, 128)):
        sid = store.start_sync("md126", "check", ["sda"], now - (10 - i) * 86400, array_uuid=uuid)
        store.end_sync(sid, now - (10 - i) * 86400 + 3600, "finished")
        store.set_check_window(sid, CheckWindow(0, 100, 100, n))
    store.close()
    app = RaidmanApp(backend, probe_interval=0, sample_interval=1)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_ready(pilot)
        app.show_tab("sync")
        pane = app.main.query_one(CheckHistory)
        app.refresh_sample()
        await wait_for(pilot, lambda: bool(pane.lines))
        assert pane.display
        assert pane.lines == {"md126": "last check 8 days ago, 1h 00m, 128 mismatches; before: 0 ↑"}
