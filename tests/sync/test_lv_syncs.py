"""An LVM RAID LV's sync (issue 42) through the one tracker, recorder and alerts md syncs go
through: it is in the 1 Hz sample as "VG/LV" (app.sync.dm_raid.lv_live), its start and end are
events and RebuildStarted/RebuildFinished alerts, and ``raidman monitor`` records it with its
images' PVs and the sync model's forecast beside what it took."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.model.devices import LogicalVolume
from app.model.live import LiveSample
from app.model.lvm_raid import DmRaidStatus, RaidImage, RaidLv
from app.monitor import WearMonitor
from app.routine.events import sync_alerts
from app.sync.dm_raid import RELOAD_GRACE_S, lv_live
from app.sync.tracker import SyncTracker
from app.wear.report import syncs_json
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimClock, SimulatedBackend

TOTAL = 131072


def _lv(t: float, action: str, done: int, health: str) -> LiveSample:
    """vgr/r1 as app.sync.dm_raid.lv_live makes it from one dmsetup status line."""
    images = tuple(RaidImage(i, f"r1_rimage_{i}", f"r1_rmeta_{i}", ()) for i in range(len(health)))
    dm = DmRaidStatus("vgr-r1", "raid1", len(health), health, done, TOTAL, action, 0)
    lv = LogicalVolume("r1", "vgr", TOTAL * 512, "raid1", raid=RaidLv(images=images, dm=dm))
    running = action not in ("idle", "frozen")
    live = lv_live(lv, 512 if running else None)
    assert live is not None
    return LiveSample(t, (), (), lvs=(live,))


def test_an_lv_resync_ends_finished_when_every_image_is_in_sync() -> None:
    # dm-raid's ratio is md's curr_resync_completed (1/16 steps): last seen at half-way, the
    # next look finds it idle with both images "A" — finished, not interrupted
    tr = SyncTracker()
    (started,) = tr.update(_lv(0.0, "resync", TOTAL // 2, "aa"))
    assert (started.kind, started.array) == ("sync-started", "vgr/r1")
    (ended,) = tr.update(_lv(1.0, "idle", TOTAL, "AA"))
    assert ended.kind == "sync-ended" and ended.sync is not None
    assert ended.sync.outcome == "finished" and ended.sync.fraction == 1.0
    names = [(a.event, a.array) for a in sync_alerts([started, ended])]
    assert names == [("RebuildStarted", "vgr/r1"), ("RebuildFinished", "vgr/r1")]


def test_an_lv_resync_idle_at_its_end_with_images_not_in_sync_is_interrupted() -> None:
    tr = SyncTracker()
    tr.update(_lv(0.0, "resync", TOTAL // 2, "aa"))
    (ended,) = tr.update(_lv(1.0, "idle", TOTAL, "aa"))  # images still "a"
    assert ended.sync is not None and ended.sync.outcome == "interrupted"


@pytest.mark.parametrize(
    ("action", "done", "health"),
    [
        # a table reload mid-resync (VM: lvchange --maxrecoveryrate while it ran): frozen with
        # every image "A", then with every image "a", its ratio short of the end
        ("frozen", TOTAL // 2, "AA"),
        ("frozen", TOTAL // 2, "aa"),
        ("idle", TOTAL // 2 + 4096, "AA"),
    ],
)
def test_an_lv_resync_stopped_short_of_its_end_is_held_then_interrupted(
    action: str, done: int, health: str
) -> None:
    # dm-raid freezes md for each table reload and md goes on after it: a look in between
    # ends nothing; a sync that has not come back after RELOAD_GRACE_S stopped at that look
    tr = SyncTracker()
    tr.update(_lv(0.0, "resync", TOTAL // 2, "aa"))
    assert tr.update(_lv(1.0, action, done, health)) == []
    assert tr.update(_lv(RELOAD_GRACE_S, action, done, health)) == []
    assert tr.running() == ("vgr/r1",)
    (ended,) = tr.update(_lv(1.0 + RELOAD_GRACE_S, action, done, health))
    assert ended.sync is not None and ended.sync.outcome == "interrupted"
    assert ended.sync.ended_at == 1.0  # when it was last seen running, near enough


def test_an_lv_resync_resumed_as_repair_after_a_reload_is_one_resync() -> None:
    # VM (lvchange --maxrecoveryrate 256K on an initial resync of 65,536 sectors): resync "aa"
    # at 6144, frozen "AA", frozen "aa", then "repair" with both "A" from 4224 (recovery_cp:
    # dm-raid.c raid_preresume() resumes it as a requested sync) to idle "AA" at the end
    tr = SyncTracker()
    tr.update(_lv(0.0, "resync", 6144, "aa"))
    seen = [
        e
        for t, (action, done, health) in enumerate(
            [("frozen", 6144, "AA"), ("frozen", 6144, "aa"), ("repair", 4224, "AA")], start=1
        )
        for e in tr.update(_lv(float(t), action, done, health))
    ]
    assert seen == []
    (view,) = tr.views()
    assert (view.action, view.done_sectors) == ("resync", 4224)  # not a repair begun by someone
    (ended,) = tr.update(_lv(9.0, "idle", TOTAL, "AA"))
    assert ended.sync is not None
    assert (ended.sync.action, ended.sync.outcome, ended.sync.started_at) == (
        "resync",
        "finished",
        0.0,
    )


def test_an_lv_recovery_through_the_repairs_reloads_is_one_recovery() -> None:
    # VM (lvconvert --repair of a raid1 LV that lost a PV, then lvchange --maxrecoveryrate and
    # --refresh while it recovered): "Aa" throughout, "frozen" at each reload, the ratio going
    # on where it stood. It was recorded "finished" at the first frozen look (6.6 of 16 MiB):
    # an LV's degraded counted only "D", so md's "recover ends when degraded is 0" held
    tr = SyncTracker()
    tr.update(_lv(0.0, "idle", TOTAL, "AD"))
    tr.update(_lv(1.0, "recover", 0, "Aa"))
    events = []
    for t, action, done in [(2.0, "recover", 4352), (3.0, "frozen", 4352), (4.0, "recover", 6528)]:
        events += tr.update(_lv(t, action, done, "Aa"))
    assert [e.kind for e in events] == []
    assert tr.running() == ("vgr/r1",)
    ended = [e for e in tr.update(_lv(5.0, "idle", TOTAL, "AA")) if e.kind == "sync-ended"]
    assert [(e.sync.action, e.sync.outcome) for e in ended if e.sync] == [("recover", "finished")]


def test_a_scrub_stopped_by_a_reload_ends_at_once() -> None:
    # md starts a check again only when asked (lvm2#184: an lvchange of the rate stops a scrub)
    tr = SyncTracker()
    tr.update(_lv(0.0, "check", TOTAL // 4, "AA"))
    (ended,) = tr.update(_lv(1.0, "frozen", TOTAL // 4, "AA"))
    assert ended.sync is not None and ended.sync.outcome == "interrupted"


@pytest.mark.parametrize(
    ("action", "health", "degraded"),
    [
        ("resync", "aa", 0),  # dm-raid prints "a" for every image while it resyncs
        ("idle", "aa", 0),  # a resync needed, not begun: the same
        ("recover", "Aa", 1),  # the image being rebuilt: md's degraded counts its slot
        ("frozen", "Aa", 1),  # a reload during the recovery
        ("idle", "AD", 1),
        ("idle", "A-", 1),  # no device for the image
        ("check", "AAA", 0),
        ("recover", "Aaa", 2),
    ],
)
def test_an_lvs_degraded_counts_as_mds(action: str, health: str, degraded: int) -> None:
    assert _lv(0.0, action, 0, health).lvs[0].degraded == degraded


def test_an_lv_image_recovery_is_tracked_onto_its_new_image() -> None:
    # lvconvert --repair: the new image "a" recovers from the others (md's recover with a target)
    tr = SyncTracker()
    tr.update(_lv(0.0, "idle", TOTAL, "AD"))
    started = [e for e in tr.update(_lv(1.0, "recover", 0, "Aa")) if e.kind == "sync-started"]
    assert [e.message for e in started] == ["vgr/r1: recover onto r1_rimage_1 started"]
    (ended,) = [e for e in tr.update(_lv(2.0, "idle", TOTAL, "AA")) if e.kind == "sync-ended"]
    assert ended.sync is not None and ended.sync.outcome == "finished"


def test_an_image_failing_is_a_faulty_member_and_a_degraded_lv() -> None:
    tr = SyncTracker()
    tr.update(_lv(0.0, "idle", TOTAL, "AA"))
    kinds = {(e.kind, e.device) for e in tr.update(_lv(1.0, "idle", TOTAL, "AD"))}
    assert ("member-faulty", "r1_rimage_1") in kinds and ("degraded", None) in kinds


def test_the_monitor_records_the_demos_lv_resync_with_its_forecast(tmp_path: Path) -> None:
    clock = SimClock.manual()
    be = SimulatedBackend.from_scenario("lvm-raid", clock=clock)
    store = SnapshotStore.open(tmp_path / "state.db")
    lines: list[str] = []
    mon = WearMonitor(be, store, interval_s=1e9, log=lines.append)
    mon.tick()
    assert "watching 0 array(s), 2 raid LV(s)" in lines
    for _ in range(300):  # 120 GiB left at 1,035 KiB/s: ~34 h, looked at every 10 min
        clock.advance(600)
        mon.tick()
        if not store.syncs_for("vgr/r1")[0].running:
            break
    (rec,) = syncs_json(store, "vgr/r1")
    assert (rec["action"], rec["outcome"], rec["fraction"]) == ("resync", "finished", 1.0)
    assert [m["device"] for m in rec["members"]] == ["nvme0n1", "nvme1n1"]  # the images' PVs
    fc = rec["forecast"]
    assert fc["source"] == "model" and fc["from_fraction"] == 0.4
    # md's min (1000) holds it, the LV's --maxrecoveryrate 256K below it binds not
    assert fc["speed_kib_s"] > 1000
    took = rec["end"] - rec["start"]
    assert abs(fc["duration_s"] - took) <= 0.02 * took + 600, (fc["duration_s"], took)
    # a RAID-1 resync copies the first image onto the other: 60 % of 200 GiB to nvme1n1
    assert [m["bytes_written"] for m in fc["members"]] == [0, 120 * (1 << 30)]
    assert any(ln.startswith("vgr/r1: resync finished after") for ln in lines), lines


def test_a_repairs_record_learns_the_new_images_pv_at_the_next_probe(tmp_path: Path) -> None:
    # the VM's captures: vgr/r1 lost nvme1n1 (image 1 "[unknown]", dm "AD"), and after
    # lvconvert --repair its image 1 on nvme2n1; the recovery's record begins while the probe
    # knows only the survivor's PV, asks for a probe, and then counts nvme2n1's writes too
    from app.model.live import DiskIO
    from app.session import Session
    from tests.lvm_raid_machine import raid_machine

    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None, smart_every_s=None, shows=False)
    lost, repaired = raid_machine("f_pv_lost", lost="nvme1n1"), raid_machine("g_after_repair")
    s.probed(lost, 0.0)

    def sample(t: float, action: str, health: str, nvme2: int) -> LiveSample:
        lv = _lv(t, action, 0 if action == "recover" else TOTAL, health).lvs[0]
        io = (DiskIO("nvme0n1", 0, 0), DiskIO("nvme2n1", 0, nvme2))
        return LiveSample(t, (), io, lvs=(replace(lv, name="vgr/r1"),))

    s.sampled(sample(1.0, "idle", "AD", 0))
    eff = s.sampled(sample(2.0, "recover", "Aa", 1 << 20))
    assert eff.reprobe  # the new image's PV is not known yet
    (rec,) = syncs_json(store, "vgr/r1")
    assert [m["device"] for m in rec["members"]] == ["nvme0n1"]
    s.probed(repaired, 3.0)
    s.sampled(sample(4.0, "recover", "Aa", 40 << 20))
    s.sampled(sample(5.0, "idle", "AA", 65 << 20))
    (rec,) = syncs_json(store, "vgr/r1")
    assert (rec["action"], rec["outcome"]) == ("recover", "finished")
    by = {m["device"]: m["kernel_bytes_written"] for m in rec["members"]}
    assert by == {"nvme0n1": 0, "nvme2n1": 65 << 20}  # from the look before it began


def test_an_lv_sync_that_never_came_back_from_a_reload_is_recorded_ended_then(
    tmp_path: Path,
) -> None:
    # the record ends when the tracker says (the first stopped look), not RELOAD_GRACE_S later
    # when the tracker gives up waiting: the Sync tab's duration and the record's agree
    from app.session import Session
    from tests.lvm_raid_machine import raid_machine

    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None, smart_every_s=None, shows=False)
    s.probed(raid_machine("g_after_repair"), 0.0)
    s.sampled(_lv(1.0, "resync", TOTAL // 4, "aa"))
    s.sampled(_lv(2.0, "resync", TOTAL // 2, "aa"))
    s.sampled(_lv(3.0, "frozen", TOTAL // 2, "AA"))
    assert syncs_json(store, "vgr/r1")[0]["end"] is None  # held: a reload, perhaps
    s.sampled(_lv(3.0 + RELOAD_GRACE_S, "frozen", TOTAL // 2, "AA"))
    (rec,) = syncs_json(store, "vgr/r1")
    assert (rec["outcome"], rec["start"], rec["end"]) == ("interrupted", 1.0, 3.0)
