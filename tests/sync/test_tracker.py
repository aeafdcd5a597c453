"""SyncTracker: live samples in, progress views, finished-sync records and events out."""

from __future__ import annotations

from app.model import SyncStatus
from app.model.live import LiveSample, MdLive
from app.sync.tracker import SyncTracker

TOTAL = 335_302_656  # sectors: the 167651328-block resync of seed 000 (blocks are KiB)


def live(
    name: str = "md127",
    *,
    action: str | None = "resync",
    done: int | None = 0,
    speed: int | None = 384_214,
    degraded: int = 0,
    members: tuple[tuple[str, tuple[str, ...]], ...] = (),
    targets: tuple[str, ...] = (),
    mismatch: int | None = None,
    max_speed: int | None = 200_000,
    last: str | None = None,
) -> MdLive:
    sync = (
        SyncStatus(
            action,
            done_sectors=done,
            total_sectors=TOTAL,
            speed_kib_s=speed,
            max_speed_kib_s=max_speed,
            targets=targets,
        )
        if action
        else None
    )
    return MdLive(
        name,
        "active",
        degraded,
        sync,
        member_states=members,
        level="raid10",
        mismatch_cnt=mismatch,
        last_sync_action=last if last is not None else (action or "resync"),
    )


def sample(t: float, *arrays: MdLive) -> LiveSample:
    return LiveSample(taken_at=t, arrays=arrays)


def test_progress_view_speed_eta_and_history() -> None:
    tr = SyncTracker()
    tr.update(sample(0, live(done=54_817_792)))  # 16.3 %
    tr.update(sample(1, live(done=54_817_792 + 768_428)))
    tr.update(sample(2, live(done=54_817_792 + 2 * 768_428, speed=486_124)))
    (v,) = tr.views()
    assert v.array == "md127" and v.action == "resync"
    assert v.elapsed_s == 2
    assert v.speeds == (384_214.0, 384_214.0, 486_124.0)
    # ETA is the kernel's arithmetic: sectors left / 2 / speed
    assert v.eta_s is not None
    assert abs(v.eta_s - (TOTAL - 54_817_792 - 2 * 768_428) / 2 / 486_124) < 1e-6
    hist = tr.history("md127")
    assert hist is not None
    # measured from done_sectors deltas: 768428 sectors/s = 384214 KiB/s
    assert hist.points[-1].measured_kib_s == 384_214
    assert hist.average_kib_s() == 384_214
    assert v.max_speed_kib_s == 200_000  # the limit in force, passed through


def test_sync_end_records_outcome_and_events() -> None:
    tr = SyncTracker()
    ev0 = tr.update(sample(0, live(action="idle", done=None, speed=None)))
    assert ev0 == []
    ev1 = tr.update(sample(10, live(action="check", done=0, speed=100_000)))
    assert [e.kind for e in ev1] == ["sync-started"]
    tr.update(sample(20, live(action="check", done=TOTAL // 2, speed=100_000)))
    tr.update(sample(30, live(action="check", done=TOTAL - 10, speed=100_000)))
    ev = tr.update(sample(31, live(action=None, done=None, mismatch=128)))
    assert [e.kind for e in ev] == ["sync-ended"]
    assert "mismatch_cnt 128" in ev[0].message
    (fin,) = tr.finished_for("md127")
    assert fin.completed and fin.seen_from_start
    assert fin.action == "check" and fin.mismatch_cnt == 128
    assert fin.duration_s == 21
    assert fin.average_kib_s is not None and fin.average_kib_s > 0
    assert tr.views() == []


def test_interrupted_sync_is_not_completed() -> None:
    tr = SyncTracker()
    tr.update(sample(0, live(action="check", done=1000, speed=1000)))
    tr.update(sample(1, live(action="check", done=3000, speed=1000)))
    tr.update(sample(2, live(action=None)))  # echo idle > sync_action
    (fin,) = tr.finished
    assert not fin.completed
    assert fin.done_sectors == 3000


def test_action_change_ends_one_sync_and_starts_another() -> None:
    tr = SyncTracker()
    tr.update(sample(0, live(action="resync", done=TOTAL - 100, speed=500_000)))
    ev = tr.update(sample(1, live(action="check", done=0, speed=500_000)))
    assert [e.kind for e in ev] == ["sync-ended", "sync-started"]
    assert tr.finished[0].completed  # its last speed would have carried it to the end


def test_member_events_faulty_degraded_takeover_and_removal() -> None:
    tr = SyncTracker()
    healthy = (("sda1", ("in_sync",)), ("sdb1", ("in_sync",)), ("sdc1", ("spare",)))
    tr.update(sample(0, live(action=None, members=healthy)))
    failed = (("sda1", ("in_sync",)), ("sdb1", ("faulty",)), ("sdc1", ("spare",)))
    ev = tr.update(sample(1, live(action=None, members=failed, degraded=1)))
    kinds = {e.kind for e in ev}
    assert kinds == {"member-faulty", "degraded"}
    assert all(e.severity == "warning" for e in ev)
    rebuilding = (("sda1", ("in_sync",)), ("sdb1", ("faulty",)), ("sdc1", ("spare",)))
    ev = tr.update(
        sample(2, live(action="recover", done=0, members=rebuilding, degraded=1, targets=("sdc1",)))
    )
    assert {e.kind for e in ev} == {"spare-takeover", "sync-started"}
    # still rebuilding next second: no repeated takeover event
    ev = tr.update(
        sample(
            3, live(action="recover", done=10, members=rebuilding, degraded=1, targets=("sdc1",))
        )
    )
    assert ev == []
    done = (("sda1", ("in_sync",)), ("sdc1", ("in_sync",)))
    ev = tr.update(sample(4, live(action=None, members=done, degraded=0)))
    assert {e.kind for e in ev} == {"member-removed", "recovered", "sync-ended"}
    assert tr.finished[-1].completed  # recovery that left the array whole


def test_degraded_at_first_sample_is_reported_once() -> None:
    tr = SyncTracker()
    ev = tr.update(sample(0, live(action=None, degraded=1)))
    assert [e.kind for e in ev] == ["degraded"]
    assert tr.update(sample(1, live(action=None, degraded=1))) == []


def test_vanished_array_ends_its_sync() -> None:
    tr = SyncTracker()
    tr.update(sample(0, live(action="resync", done=10)))
    ev = tr.update(sample(1))
    assert {e.kind for e in ev} == {"array-vanished", "sync-ended"}
    assert not tr.finished[0].completed and tr.finished[0].outcome == "array stopped"
    ev = tr.update(sample(2, live("md5", action=None, last="none")))  # assembled: no sync yet
    assert [e.kind for e in ev] == ["array-appeared"]


def test_throughput_meter_rates_and_slow_member() -> None:
    from app.model.live import DiskIO
    from app.sync.throughput import ThroughputMeter

    m = ThroughputMeter()
    assert (
        m.update(LiveSample(0, (), (DiskIO("sda", 0, 0), DiskIO("sdb", 0, 0), DiskIO("sdc", 0, 0))))
        == {}
    )
    r = m.update(
        LiveSample(
            2,
            (),
            (
                DiskIO("sda", 200_000_000, 0),
                DiskIO("sdb", 0, 200_000_000),
                DiskIO("sdc", 40_000_000, 0),
            ),
        )
    )
    assert r["sda"].read_bytes_s == 100_000_000
    assert r["sdb"].write_bytes_s == 100_000_000
    assert m.slowest(("sda", "sdb", "sdc")) == ("sdc",)
    # a counter that went backwards (device replaced) is skipped, not negative
    r = m.update(LiveSample(3, (), (DiskIO("sda", 1, 0),)))
    assert r == {}


def test_pending_then_resync_reads_as_waiting_then_started() -> None:
    tr = SyncTracker()
    ev = tr.update(sample(0, live(action="pending", done=0, speed=None)))
    assert [e.message for e in ev] == [
        "md127: sync pending (auto-read-only: it starts at the first write)"
    ]
    assert [e.kind for e in ev] == ["sync-waiting"]
    ev = tr.update(sample(1, live(action="resync", done=2048, speed=1000)))
    # the wait is no sync of its own: one sync, from when it really started (issue 38)
    assert [e.kind for e in ev] == ["sync-started"]
    assert ev[0].message == "md127: resync started after waiting 1s"
    assert tr.finished == [] and tr.running() == ("md127",) and tr.waiting() == ()


def test_end_hidden_by_coarse_sync_completed_counts_as_completed() -> None:
    """md moves sync_completed in 1/16 steps (seen in the VM: a check that ran to its end was
    last read 1/16 short of it): within that step of the end the sync counts as completed."""
    total = TOTAL  # what live() reports as total_sectors
    tr = SyncTracker()
    tr.update(sample(0, live(action="check", done=total - total // 16, speed=0)))
    tr.update(sample(1, live(action=None)))
    assert tr.finished[-1].completed
    tr.update(sample(2, live(action="check", done=total // 2, speed=0)))
    tr.update(sample(3, live(action=None)))
    assert not tr.finished[-1].completed  # echo idle half way: stopped, not finished
    assert tr.finished[-1].outcome == "interrupted" and tr.finished[-1].fraction == 0.5
    assert tr.finished[-1].outcome_text == "interrupted at 50.0%"
    tr.update(sample(4, live(action="check", done=total // 4, speed=0)))
    tr.update(sample(5, live(action="repair", done=0, speed=0)))
    assert tr.finished[-1].outcome == "became repair"


def test_a_sync_between_two_looks_is_still_seen() -> None:
    """md sets last_sync_action when a sync starts and keeps it: a change while no sync was
    seen running means one began (and ended) between two samples."""
    tr = SyncTracker()
    tr.update(sample(0, live(action=None, last="none")))
    ev = tr.update(sample(1, live(action=None, last="check", mismatch=8)))
    assert [e.kind for e in ev] == ["sync-started", "sync-ended"]
    assert [e.action for e in ev] == ["check", "check"] and ev[0].t == 0
    fin = tr.finished[-1]
    assert fin.action == "check" and fin.mismatch_cnt == 8 and not fin.completed
    assert fin.outcome == "ended between two looks"
    # an array created and synced since the last look: a recovery that left it whole finished
    ev = tr.update(
        sample(2, live(action=None, last="check"), live("md5", action=None, last="recovery"))
    )
    assert [e.kind for e in ev] == ["array-appeared", "sync-started", "sync-ended"]
    assert tr.finished[-1].action == "recover" and tr.finished[-1].outcome == "finished"
    assert (
        tr.update(
            sample(3, live(action=None, last="check"), live("md5", action=None, last="recovery"))
        )
        == []
    )


def test_first_seen_state_is_recorded() -> None:
    """An array first seen already degraded, with a faulty member and an idle spare (at start
    or appearing later) gets those events too, not only arrays that change under our eyes."""
    members = (("sda1", ("in_sync",)), ("sdb1", ("faulty",)), ("sdc1", ("spare",)))
    tr = SyncTracker()
    ev = tr.update(sample(0, live(action=None, degraded=1, members=members, last="none")))
    assert [(e.kind, e.device) for e in ev] == [
        ("degraded", None),
        ("member-faulty", "sdb1"),
        ("spare-present", "sdc1"),
    ]
    ev = tr.update(
        sample(
            1,
            live(action=None, degraded=1, members=members, last="none"),
            live("md5", action=None, degraded=1, members=members, last="none"),
        )
    )
    assert [(e.kind, e.array) for e in ev] == [
        ("array-appeared", "md5"),
        ("degraded", "md5"),
        ("member-faulty", "md5"),
        ("spare-present", "md5"),
    ]


def test_throughput_meter_steady_path_gives_what_a_fresh_computation_gives() -> None:
    """Issue 13: once the devices are steady the meter works only on counters that moved; its
    rates are still exactly those computed from the two samples alone, through idle spells, a
    counter reset, a device that comes and one that goes, and a repeated timestamp; a dict it
    handed out is never changed afterwards."""
    import random

    from app.model.live import DiskIO
    from app.sync.throughput import Rate, ThroughputMeter, rate_between

    def fresh(a: LiveSample, b: LiveSample) -> dict[str, Rate]:
        if b.taken_at <= a.taken_at:
            return {}
        old = {d.name: d for d in a.disk_io}
        dt = b.taken_at - a.taken_at
        out = {}
        for d in b.disk_io:
            o = old.get(d.name)
            if o is None or d.read_bytes < o.read_bytes or d.write_bytes < o.write_bytes:
                continue
            rate = rate_between(o, d, dt)
            assert rate is not None
            assert (rate.read_bytes_s, rate.write_bytes_s) == (
                (d.read_bytes - o.read_bytes) / dt,
                (d.write_bytes - o.write_bytes) / dt,
            )
            out[d.name] = rate
        return out

    rng = random.Random(13)
    names = [f"sd{c}" for c in "abcdefgh"]
    counters = {n: [0, 0] for n in names}
    objs = {n: DiskIO(n, 0, 0) for n in names}
    m = ThroughputMeter()
    prev: LiveSample | None = None
    handed: list[tuple[dict[str, Rate], dict[str, Rate]]] = []
    t = 0.0
    for step in range(300):
        t += 0.0 if step % 37 == 5 else rng.choice((1.0, 1.0, 0.5, 2.0))
        for n in names:
            roll = rng.random()
            if roll < 0.15:
                counters[n][0] += rng.randrange(1, 10**6)
                counters[n][1] += rng.randrange(0, 10**6)
            elif roll < 0.16:
                counters[n] = [0, 0]  # reset: the device came back
            if (objs[n].read_bytes, objs[n].write_bytes) != tuple(counters[n]) or roll < 0.3:
                objs[n] = DiskIO(n, *counters[n])  # an equal new object now and then, too
        present = [n for n in names if not (step % 50 == 20 and n == "sdc")]
        if step % 70 == 40:
            present.append("sdz")  # a device that appears for one sample
        sample = LiveSample(t, (), tuple(objs.get(n) or DiskIO(n, 5, 5) for n in present))
        got = m.update(sample)
        assert got == (fresh(prev, sample) if prev is not None else {}), step
        handed.append((got, dict(got)))
        prev = sample
    assert all(d == copy for d, copy in handed)  # nothing handed out was changed later


def test_speed_history_keeps_its_sparkline_beside_its_points() -> None:
    """The kernel speeds a sync card draws each second are kept as points come (a repeated
    instant replaces the last, the window and the cap drop the oldest), never re-read from
    every point: they always equal what the points say."""
    from app.sync.history import SpeedHistory

    h = SpeedHistory(window_s=10.0, max_points=8)
    assert h.kernel_speeds() == () and h.last is None
    for i, t in enumerate([0, 1, 2, 2, 3, 5, 8, 9, 9, 12, 13, 14, 15, 16, 17, 30]):
        h.add(float(t), i * 100, None if i % 5 == 4 else 1000 + i)
        assert h.series() == [float(p.kernel_kib_s or 0) for p in h.points], i
        assert h.kernel_speeds() == tuple(h.series())
        assert h.last == h.points[-1]
    assert len(h) == 1  # the 30 s point pushed the rest out of the 10 s window
    h.clear()
    assert h.kernel_speeds() == () and h.series() == []


def test_a_recovery_stopped_between_two_looks_on_a_degraded_array_is_not_a_sync_of_its_own() -> (
    None
):
    """Seen in the VM (monitor log of a failed run): mdadm created a RAID-5, the first look found
    it idle with last_sync_action "recovery" and one member missing, the next found the recovery
    running. md restarts a recovery that stopped short while the array is degraded, so the one
    rebuild is one record: nothing is said until it is seen running."""
    tr = SyncTracker()
    tr.update(sample(0))
    ev = tr.update(sample(1, live(action=None, last="recovery", degraded=1)))
    assert [e.kind for e in ev] == ["array-appeared", "degraded"]
    ev = tr.update(
        sample(2, live(action="recover", done=TOTAL // 2, degraded=1, targets=("sdc1",)))
    )
    assert [e.kind for e in ev] == ["sync-started"]
    ev = tr.update(sample(3, live(action=None, last="recovery", degraded=0)))
    assert [e.kind for e in ev if e.kind.startswith("sync")] == ["sync-ended"]
    assert [f.outcome for f in tr.finished] == ["finished"]
    # a recovery over between two looks that left the array whole is still seen
    tr.update(sample(4, live("md0", action=None, last="none", degraded=1)))
    ev = tr.update(sample(5, live("md0", action=None, last="recovery", degraded=0)))
    assert [e.kind for e in ev if e.kind.startswith("sync")] == ["sync-started", "sync-ended"]


def test_a_recovery_seen_only_waiting_that_ran_unseen_is_still_recorded() -> None:
    """md_do_sync sets last_sync_action before it waits its turn (resync=DELAYED): a recovery
    seen only as delayed, then over by the next look with the array whole, is one sync."""
    tr = SyncTracker()
    tr.update(sample(0, live(action=None, last="none", degraded=1)))
    tr.update(sample(1, live(action="delayed", done=None, last="recovery", degraded=1)))
    ev = tr.update(sample(2, live(action=None, last="recovery", degraded=0)))
    kinds = [(e.kind, e.action) for e in ev if e.kind.startswith("sync")]
    # the wait was no sync: one record, the recovery (issue 38)
    assert kinds == [("sync-started", "recover"), ("sync-ended", "recover")]
    assert [(f.action, f.outcome) for f in tr.finished] == [("recover", "finished")]
    assert tr.finished[-1].after_fact == "md's last_sync_action became recovery"
