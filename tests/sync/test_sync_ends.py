"""A finished sync leaves the screen (issue 24 item 3): the simulator's live sample forgot a
check's end (its per-array cache kept the MdLive built while the check ran, as a check ends with
array_state, members and raid_disks unchanged: 98.9 % for ever on the IMSM demo's md126); and a
sync whose position has not moved for a while is said to have no progress, on its card and in
the banner."""

from __future__ import annotations

from app.model.devices import Machine
from app.rollup import rollup, sync_item
from app.session import merge_live
from app.sync.tracker import STALL_S, SyncTracker
from backends.simulated import SimClock, SimulatedBackend
from tests.sync.test_tracker import TOTAL, live, sample
from widgets.sync_pane import progress_items


def _check_runs_to_its_end(scenario: str, array: str) -> None:
    clock = SimClock.manual()
    be = SimulatedBackend.from_scenario(scenario, clock=clock)
    for _ in range(20_000):  # a sync already running (raid10-evo's initial resync) ends first
        if all(x.sync is None for x in be.sample().arrays if x.name == array):
            break
        clock.advance(60)
    probed = be.probe()
    assert probed.array(array) is not None and probed.array(array).sync is None  # type: ignore[union-attr]
    tr = SyncTracker()
    tr.update(be.sample())
    r = be.run(("tee", f"/sys/block/{array}/md/sync_action"), stdin="check\n")
    assert r.returncode == 0, r.stderr
    seen_running = False
    for _ in range(20_000):
        clock.advance(5)
        s = be.sample()
        tr.update(s)
        md = next(x for x in s.arrays if x.name == array)
        if md.sync is not None:
            seen_running = True
            continue
        break
    assert seen_running
    assert md.sync is None, "the check never ended in the live sample"
    assert md.last_sync_action == "check" and md.mismatch_cnt == 0
    assert be.probe().array(array).sync is None  # type: ignore[union-attr]
    assert array not in {v.array for v in tr.views()}
    (fin,) = tr.finished_for(array)
    assert fin.action == "check" and fin.outcome == "finished"


def test_imsm_check_ends() -> None:
    _check_runs_to_its_end("imsm", "md126")


def test_raid10_check_after_its_resync_ends() -> None:
    _check_runs_to_its_end("raid10-evo", "md127")


def test_mismatch_cnt_agrees_between_array_and_sync_block() -> None:
    """Details of md126 during a check: the array's mismatch_cnt and its sync block's."""
    clock = SimClock.manual()
    be = SimulatedBackend.from_scenario("imsm", clock=clock)
    be.run(("tee", "/sys/block/md126/md/sync_action"), stdin="check\n")
    clock.advance(30)
    a = be.probe().array("md126")
    assert a is not None and a.sync is not None
    assert a.mismatch_cnt is not None and a.mismatch_cnt == a.sync.mismatch_cnt
    merged = merge_live(be.probe(), be.sample()).array("md126")
    assert merged is not None and merged.sync is not None
    assert merged.mismatch_cnt == merged.sync.mismatch_cnt == 0


def _stuck(tr: SyncTracker, t0: float, seconds: int, *, speed: int | None) -> None:
    for t in range(int(t0), int(t0) + seconds + 1):
        tr.update(sample(t, live(action="check", done=TOTAL // 2, speed=speed)))


def test_no_progress_is_noticed() -> None:
    tr = SyncTracker()
    tr.update(sample(0, live(action="check", done=TOTAL // 2 - 1000, speed=0)))
    _stuck(tr, 1, int(STALL_S) - 5, speed=0)
    (v,) = tr.views()
    assert not v.stalled  # under two minutes: not yet
    _stuck(tr, STALL_S - 3, 10, speed=0)
    (v,) = tr.views()
    assert v.stalled and v.still_s >= STALL_S
    assert any("no progress for 2m" in item for item in progress_items(v))
    tr.update(sample(STALL_S + 10, live(action="check", done=TOTAL // 2 + 8, speed=0)))
    (v,) = tr.views()
    assert not v.stalled and v.still_s == 0  # it moved


def test_a_big_step_of_sync_completed_is_no_stall() -> None:
    """sync_completed moves 1/16 of the sync at a time: at 10 MiB/s a 160 GiB sync's step is
    ~17 min; three minutes without a move at a steady speed is that, not a stall."""
    tr = SyncTracker()
    tr.update(sample(0, live(action="check", done=TOTAL // 2 - 1000, speed=10_240)))
    _stuck(tr, 1, 180, speed=10_240)
    (v,) = tr.views()
    assert v.still_s >= 180 and not v.stalled


def test_banner_says_no_progress() -> None:
    from app.model import SyncStatus
    from app.model.devices import MdArray

    a = MdArray(
        name="md126",
        level="raid1",
        size_bytes=1 << 30,
        raid_disks=2,
        sync=SyncStatus("check", done_sectors=1000, total_sectors=2000, speed_kib_s=287_000),
    )
    m = Machine(host="h", kernel="k", arrays=(a,))
    (syncing,) = rollup(m).syncing
    assert "ETA" in sync_item(syncing)
    text = sync_item(syncing, {"md126": 540.0})
    assert text == "md126 check 50.0%, no progress for 9m 00s"


def test_cards_sort_naturally() -> None:
    tr = SyncTracker()
    tr.update(sample(0, *(live(n, done=1000) for n in ("md10", "md2", "md0", "md1"))))
    assert [v.array for v in tr.views()] == ["md0", "md1", "md2", "md10"]


def test_card_says_watched_for_and_when_the_sync_began() -> None:
    """A resync found at 50 %: raidman watched it 10 s; md's position over its speed says it
    began ~2h 16m ago (167,753,728 sectors = 83,876,864 KiB at 10,240 KiB/s = 8,191 s)."""
    tr = SyncTracker()
    speed = 10_240  # KiB/s
    for t in range(11):
        tr.update(sample(t, live(done=TOTAL // 2 + t * 2 * speed, speed=speed)))
    (v,) = tr.views()
    assert v.elapsed_s == 10
    assert v.began_s is not None
    assert abs(v.began_s - (TOTAL // 2 + 10 * 2 * speed) / 2 / speed) < 1
    items = progress_items(v)
    assert items[-1] == "watched for 10s"
    assert any(i.startswith("began ~2h 16m ago") for i in items), items
