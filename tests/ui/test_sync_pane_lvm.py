"""The Sync tab on a machine whose only sync is an LVM RAID LV's (issue 42): it says that no md
array syncs and names the LV's sync as the last probe read it, not "No array is syncing."
while vgr/r1 resyncs (seen in tmux on --demo lvm-raid at 80x24)."""

from __future__ import annotations

from textual.widgets import Static

from app.ui.app import RaidmanApp
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock
from tests.ui.helpers import wait_for, wait_ready
from widgets.sync_pane import SyncPane, idle_text


async def test_the_sync_tab_names_the_lvs_sync() -> None:
    be = SimulatedBackend.from_scenario("lvm-raid", clock=SimClock.manual())
    app = RaidmanApp(be, probe_interval=0, sample_interval=0.2)  # the pane shows each sample
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("s")
        idle = app.screen.query_one(SyncPane).query_one("#idle", Static)
        await wait_for(pilot, lambda: "LVM RAID" in str(idle.render()))
        text = str(idle.render())
        assert idle.display
        assert text.startswith("No md array is syncing.\nLVM RAID vgr/r1: resync 40.0%"), text
        assert "vgr/r5" not in text  # its check is over: nothing runs


def test_no_lv_sync_keeps_the_plain_sentence() -> None:
    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    assert idle_text(be.probe()).plain == "No array is syncing."
    assert idle_text(None).plain == "No array is syncing."
