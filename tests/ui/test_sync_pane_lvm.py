"""The Sync tab on a machine whose only sync is an LVM RAID LV's (issue 42): the LV's sync gets a
card like an md array's — progress, speed and ETA from the 1 Hz sample (dm-raid's sync ratio,
its speed from the images' I/O: app.sync.dm_raid) — not "No array is syncing." while vgr/r1
resyncs (seen in tmux on --demo lvm-raid at 80x24). Before the first sample has shown it, the
idle text names it as the probe read it."""

from __future__ import annotations

from textual.widgets import Static

from app.ui.app import RaidmanApp
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock
from tests.ui.helpers import wait_for, wait_ready
from widgets.sync_pane import SyncCard, SyncPane, card_id, idle_text


def _card_text(card: SyncCard) -> str:
    return "\n".join(str(w.render()) for w in card.children)


async def test_the_sync_tab_shows_the_lvs_sync_as_a_card() -> None:
    be = SimulatedBackend.from_scenario("lvm-raid", clock=SimClock.manual())
    app = RaidmanApp(be, probe_interval=0, sample_interval=0.2)  # the pane shows each sample
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("s")
        pane = app.screen.query_one(SyncPane)
        await wait_for(pilot, lambda: bool(pane.query(f"#{card_id('vgr/r1')}")))
        card = pane.query_one(f"#{card_id('vgr/r1')}", SyncCard)
        await wait_for(pilot, lambda: "ETA" in _card_text(card))
        text = _card_text(card)
        assert "vgr/r1: resync" in text, text
        assert "40.0%" in text, text
        # the simulated sync's rate (1,035 KiB/s): md's min holds it, the LV's max is below it
        assert "1.0 MiB/s progress (its images' I/O since the last sample)" in text, text
        assert "limits: md's min 1000.0 KiB/s, its --maxrecoveryrate 256.0 KiB/s;" in text, text
        assert "held at md's min: its --maxrecoveryrate is below it" in text, text
        assert "b: boost" not in text, text  # a boost writes md's sysfs: no LV's
        assert not pane.query_one("#idle", Static).display
        assert not pane.query(f"#{card_id('vgr/r5')}")  # its check is over: nothing runs


def test_card_ids_hold_any_lvm_name() -> None:
    assert card_id("md127") == "sync-md127"
    assert card_id("vgr/r1") == "sync-vgr_2f_r1"
    assert card_id("vg.a+b/r_1-x") == "sync-vg_2e_a_2b_b_2f_r_1-x"


def test_idle_text_names_an_lv_sync_not_sampled_yet() -> None:
    be = SimulatedBackend.from_scenario("lvm-raid", clock=SimClock.manual())
    text = idle_text(be.probe()).plain
    assert text.startswith("No md array is syncing.\nLVM RAID vgr/r1: resync 40.0%"), text


def test_no_lv_sync_keeps_the_plain_sentence() -> None:
    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    assert idle_text(be.probe()).plain == "No array is syncing."
    assert idle_text(None).plain == "No array is syncing."
