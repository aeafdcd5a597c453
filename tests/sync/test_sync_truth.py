"""A sync is what md did (issue 38): no record for a "recover" md never ran, a wait is no sync,
a recovery over between two looks is recorded from what it left behind."""

from __future__ import annotations

from app.model import SyncStatus
from app.model.live import LiveSample, MdLive
from app.sync.tracker import SyncTracker

IN = ("in_sync",)
FAULTY = ("faulty",)
SPARE = ("spare",)


def md(
    states: tuple[tuple[str, tuple[str, ...]], ...],
    *,
    sync: SyncStatus | None = None,
    degraded: int = 0,
    last: str = "resync",
    name: str = "md127",
    level: str = "raid10",
) -> MdLive:
    return MdLive(
        name,
        "clean",
        degraded,
        sync,
        member_states=states,
        level=level,
        last_sync_action=last,
    )


WHOLE = (("nvme0n1", IN), ("nvme1n1", IN), ("nvme2n1", IN), ("nvme3n1", IN))
FAILED = (("nvme0n1", IN), ("nvme1n1", IN), ("nvme2n1", IN), ("nvme3n1", FAULTY))
GONE = (("nvme0n1", IN), ("nvme1n1", IN), ("nvme2n1", IN))


def test_a_recover_without_target_is_no_sync() -> None:
    """md_sync_action says "recover" while MD_RECOVERY_NEEDED is set; md_check_recovery then
    finds nothing to rebuild (remove_and_add_spares: no spare) and md_do_sync never runs. The
    VM showed it after `mdadm --fail` on a RAID-10 without spare: one look saw it."""
    tr = SyncTracker()
    tr.update(LiveSample(0, (md(WHOLE),)))
    phantom = SyncStatus("recover", done_sectors=None, total_sectors=None)  # no targets
    ev = tr.update(LiveSample(1, (md(FAILED, sync=phantom, degraded=1),)))
    assert [e.kind for e in ev] == ["member-faulty", "degraded"]
    assert tr.running() == () and tr.views() == []
    ev = tr.update(LiveSample(2, (md(FAILED, degraded=1),)))
    assert ev == [] and tr.finished == []


def test_a_recover_onto_a_spare_is_a_sync() -> None:
    tr = SyncTracker()
    tr.update(LiveSample(0, (md(FAILED, degraded=1),)))
    states = (*GONE, ("nvme3n1", SPARE))
    real = SyncStatus("recover", 0, 1000, 5000, targets=("nvme3n1",))
    ev = tr.update(LiveSample(1, (md(states, sync=real, degraded=1),)))
    assert [e.kind for e in ev] == ["sync-started"] and tr.running() == ("md127",)


def test_a_readd_recovered_between_two_looks_is_recorded_after_the_fact() -> None:
    """A bitmap re-add of a few MiB recovers in well under a second: the looks see the member
    gone, then in sync with the array whole. last_sync_action said "recovery" already (the
    array's earlier rebuild), so only the member's change shows it: one sync, finished."""
    tr = SyncTracker()
    tr.update(LiveSample(0, (md(GONE, degraded=1, last="recovery"),)))
    ev = tr.update(LiveSample(1.5, (md(WHOLE, last="recovery"),)))
    syncs = [(e.kind, e.action, e.t) for e in ev if e.kind.startswith("sync")]
    assert syncs == [("sync-started", "recover", 0), ("sync-ended", "recover", 1.5)]
    (fin,) = tr.finished
    assert fin.completed and fin.outcome == "finished"
    assert fin.after_fact == "nvme3n1 in sync, md127 degraded 1 -> 0"
    assert "seen after the fact" in ev[-1].message
    # and once only
    assert tr.update(LiveSample(2.5, (md(WHOLE, last="recovery"),))) == []


def test_a_member_added_in_sync_without_degraded_falling_is_no_sync() -> None:
    """A grow's new member or an assembled one: no degraded count fell, nothing recovered."""
    tr = SyncTracker()
    tr.update(LiveSample(0, (md(GONE),)))
    ev = tr.update(LiveSample(1, (md(WHOLE),)))
    assert [e.kind for e in ev] == ["member-added"] and tr.finished == []


def test_a_delayed_sync_waits_then_is_recorded_once_from_when_it_ran() -> None:
    """md_do_sync: "delaying resync of md126 until md127 has finished (they share one or more
    physical units)"; the wait is a state of its own, the sync begins when it leaves it."""
    tr = SyncTracker()
    two = (("sdb1", IN), ("sdc1", IN))
    tr.update(LiveSample(0, ()))
    ev = tr.update(LiveSample(1, (md(two, sync=SyncStatus("delayed"), name="md126"),)))
    assert [e.kind for e in ev] == ["array-appeared", "sync-waiting"]
    assert ev[0].message == "md126 appeared (raid10)"
    for t in range(2, 200):
        assert tr.update(LiveSample(t, (md(two, sync=SyncStatus("delayed"), name="md126"),))) == []
    (v,) = tr.views()
    assert v.action == "delayed" and v.elapsed_s == 198 and not v.stalled
    running = SyncStatus("resync", 100, 10_000, 5000)
    ev = tr.update(LiveSample(200, (md(two, sync=running, name="md126"),)))
    assert [(e.kind, e.message) for e in ev] == [
        ("sync-started", "md126: resync started after waiting 3m 19s")
    ]
    ev = tr.update(LiveSample(203, (md(two, name="md126"),)))
    (fin,) = tr.finished
    assert (fin.action, fin.started_at, fin.ended_at) == ("resync", 200, 203)


def test_level_number_from_sysfs_is_named() -> None:
    """md.c level_show prints the number while md has no personality yet ("10")."""
    tr = SyncTracker()
    tr.update(LiveSample(0, ()))
    ev = tr.update(LiveSample(1, (md(WHOLE, level="10"),)))
    assert ev[0].message == "md127 appeared (raid10)"


def test_a_resync_gone_while_md_may_run_one_finished() -> None:
    """VM: a 32 MiB RAID-1 resync ended within two looks, last seen at 90 %. md restarts an
    interrupted resync at once (md_check_recovery: recovery_cp < MaxSector), so one gone from an
    array md may sync is over; a frozen one is not."""
    two = (("sdb2", IN), ("sdc2", IN))
    for after, outcome in ((None, "finished"), (SyncStatus("frozen", 900, 1000), "interrupted")):
        tr = SyncTracker()
        tr.update(LiveSample(0, (md(two, sync=SyncStatus("resync", 0, 1000, 0)),)))
        tr.update(LiveSample(1, (md(two, sync=SyncStatus("resync", 900, 1000, 0)),)))
        tr.update(LiveSample(2, (md(two, sync=after),)))
        assert [f.outcome for f in tr.finished] == [outcome]
