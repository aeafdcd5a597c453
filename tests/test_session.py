"""The live session without Textual: probes and samples in, an immutable view and effects out.

A RAID-5 of four 256 MiB NVMe disks (the VM's layout): its initial sync is a recovery onto the
last member, which md writes once over while the others are only read.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from dataclasses import FrozenInstanceError, replace
from pathlib import Path
from typing import Any

import pytest

from app.model import Disk, Machine, MdArray, MdMember, SyncStatus
from app.model.live import DiskIO, LiveSample, MdLive
from app.model.smart import SmartReading
from app.monitor import WearMonitor
from app.session import Session
from app.wear.records import SyncMember
from app.wear.report import syncs_json
from app.wear.smart_reads import SmartRead
from app.wear.snapshots import SnapshotStore

MIB = 1 << 20
DISKS = ("nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1")
TOTAL = 256 * MIB // 512  # sectors per member


def machine(uuid: str | None = "aaaa:1111", level: str = "raid5", t: float = 0.0) -> Machine:
    disks = tuple(Disk(d, 256 * MIB, serial=f"SN-{d}", rotational=False) for d in DISKS)
    members = tuple(MdMember(d, i, ("in_sync",)) for i, d in enumerate(DISKS))
    arr = MdArray("md127", level, raid_disks=4, members=members, uuid=uuid)
    return Machine(host="h", kernel="k", disks=disks, arrays=(arr,), taken_at=t)


def sample(
    t: float,
    writes: dict[str, int],
    sync: SyncStatus | None = None,
    *,
    degraded: int = 0,
    mismatch: int | None = None,
    present: bool = True,
    last: str | None = None,
) -> LiveSample:
    arrays = (
        (
            MdLive(
                "md127",
                "active",
                degraded,
                sync,
                tuple((d, ("in_sync",)) for d in DISKS),
                level="raid5",
                mismatch_cnt=mismatch,
                last_sync_action=last,
            ),
        )
        if present
        else ()
    )
    return LiveSample(t, arrays, tuple(DiskIO(d, 0, writes.get(d, 0)) for d in DISKS))


def recover(done: int) -> SyncStatus:
    return SyncStatus("recover", done, TOTAL, 100_000, targets=("nvme3n1",))


def check(done: int) -> SyncStatus:
    return SyncStatus("check", done, TOTAL, 50_000)


class Writes:
    """Cumulative kernel write counters that move as the test says."""

    def __init__(self) -> None:
        self.w = dict.fromkeys(DISKS, 1_000_000)

    def add(self, **by: int) -> dict[str, int]:
        for d, n in by.items():
            self.w[d] += n
        return dict(self.w)


def reads_of(effects: Iterable[Any]) -> list[SmartRead]:
    return [r for e in effects for r in e.smart_reads]


def run_rebuild(session: Session) -> list[Any]:
    """Probe, one idle sample, a recovery over three samples, idle again."""
    w = Writes()
    out = [session.probed(machine(), 0.0)]
    out.append(session.sampled(sample(1, w.add(nvme0n1=4096)), 1.0))  # the last look before
    out.append(session.sampled(sample(2, w.add(nvme3n1=10 * MIB), recover(TOTAL // 10)), 2.0))
    out.append(session.sampled(sample(3, w.add(nvme3n1=120 * MIB), recover(TOTAL // 2)), 3.0))
    out.append(session.sampled(sample(4, w.add(nvme3n1=126 * MIB, nvme1n1=8192)), 4.0))
    return out


def test_a_rebuild_is_recorded_with_exact_kernel_writes_and_smart_reads_at_both_ends(
    tmp_path: Path,
) -> None:
    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None)
    effects = run_rebuild(s)

    # the first probe: a "start" SMART read of every disk; then sync-start and sync-end reads
    assert [r.disk for r in effects[0].smart_reads] == list(DISKS)
    assert {r.reason for r in effects[0].smart_reads} == {"start"}
    starts = [r for r in reads_of(effects) if r.reason == "sync-start"]
    ends = [r for r in reads_of(effects) if r.reason == "sync-end"]
    assert [r.disk for r in starts] == [r.disk for r in ends] == list(DISKS)
    assert starts[0].sync_id == ends[0].sync_id is not None
    assert [e.kind for e in effects[2].events] == ["sync-started"]
    assert [e.kind for e in effects[4].events] == ["sync-ended"]

    (ev,) = store.syncs_for("md127", "aaaa:1111")
    assert ev.action == "recover" and ev.outcome == "finished" and ev.fraction == 1.0
    assert ev.started_at == 2.0 and ev.ended_at == 4.0
    # the window runs from the last sample before the sync to the first after it: everything
    # the kernel wrote in between, including the first second (10 MiB) and the last (126 MiB)
    assert ev.kernel_written("nvme3n1") == 256 * MIB
    assert ev.kernel_written("nvme1n1") == 8192
    assert ev.kernel_written("nvme0n1") == 0  # its 4 KiB were written before the sync began

    (js,) = syncs_json(store, "md127", "aaaa:1111")
    assert js["array_uuid"] == "aaaa:1111" and js["outcome"] == "finished"
    m3 = next(m for m in js["members"] if m["disk"] == "nvme3n1")
    assert m3["kernel_bytes_written"] == 256 * MIB
    assert m3["kernel_capacity_share"] == 1.0


def test_the_view_is_immutable_and_follows_a_running_sync(tmp_path: Path) -> None:
    s = Session(store=SnapshotStore.open(tmp_path / "state.db"), audit_every_s=None)
    w = Writes()
    s.probed(machine(), 0.0)
    s.sampled(sample(1, w.add()), 1.0)
    s.sampled(sample(2, w.add(nvme3n1=10 * MIB), recover(TOTAL // 10)), 2.0)
    v = s.view
    assert dict(v.sync_writes["md127"])["nvme3n1"] == 10 * MIB
    s.sampled(sample(3, w.add(nvme3n1=20 * MIB), recover(TOTAL // 5)), 3.0)
    assert dict(s.view.sync_writes["md127"])["nvme3n1"] == 30 * MIB
    assert dict(v.sync_writes["md127"])["nvme3n1"] == 10 * MIB  # the old view did not move
    with pytest.raises(FrozenInstanceError):
        v.machine = None  # type: ignore[misc]
    assert [x.array for x in s.view.syncs] == ["md127"]
    arr = s.view.machine.array("md127") if s.view.machine else None
    assert arr is not None and arr.sync is not None and arr.sync.action == "recover"


def test_a_check_stopped_part_way_is_interrupted_with_its_fraction(tmp_path: Path) -> None:
    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None)
    w = Writes()
    s.probed(machine(), 0.0)
    s.sampled(sample(1, w.add()), 1.0)
    s.sampled(sample(2, w.add(), check(TOTAL // 20)), 2.0)
    s.sampled(sample(3, w.add(), check(TOTAL // 10)), 3.0)
    eff = s.sampled(sample(4, w.add(), mismatch=0), 4.0)  # echo idle > sync_action
    (ev,) = store.syncs_for("md127", "aaaa:1111")
    assert ev.outcome == "interrupted" and ev.fraction == pytest.approx(0.1, abs=1e-4)
    assert any("interrupted at 10.0%" in e.message for e in eff.events)
    (fin,) = s.view.finished
    assert fin.outcome_text == "interrupted at 10.0%"


def test_a_new_array_under_the_old_name_keeps_its_own_records(tmp_path: Path) -> None:
    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None)
    w = Writes()
    s.probed(machine("aaaa:1111"), 0.0)
    s.sampled(sample(1, w.add()), 1.0)
    s.sampled(sample(2, w.add(), check(TOTAL // 2)), 2.0)
    eff = s.sampled(sample(3, w.add(), present=False), 3.0)  # mdadm --stop
    assert eff.reprobe
    s.probed(replace(machine("bbbb:2222", "raid10"), arrays=()), 3.5)
    s.sampled(sample(4, w.add(), present=False), 4.0)
    eff = s.sampled(
        sample(5, w.add(nvme0n1=MIB), SyncStatus("resync", TOTAL - 10, TOTAL, 100_000)), 5.0
    )
    assert eff.reprobe  # array-appeared: its members are known after the probe
    reads = s.probed(machine("bbbb:2222", "raid10"), 5.5).smart_reads
    assert {r.reason for r in reads} == {"sync-start"}
    s.sampled(sample(6, w.add(nvme0n1=MIB)), 6.0)

    old = store.syncs_for("md127", "aaaa:1111")
    new = store.syncs_for("md127", "bbbb:2222")
    assert [(e.action, e.outcome) for e in old] == [("check", "array stopped")]
    assert [(e.action, e.outcome) for e in new] == [("resync", "finished")]
    assert {m.disk for m in new[0].members} == set(DISKS)
    assert new[0].kernel_written("nvme0n1") == 2 * MIB
    assert [j["array_uuid"] for j in syncs_json(store, "md127", "bbbb:2222")] == ["bbbb:2222"]


def test_a_rebuild_over_between_two_looks_is_recorded_from_the_write_counters(
    tmp_path: Path,
) -> None:
    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None)
    w = Writes()
    s.probed(machine(), 0.0)
    s.sampled(sample(1, w.add(), last="none"), 1.0)
    # md rebuilt all of nvme3n1 within one second: no sample saw it running
    eff = s.sampled(sample(2, w.add(nvme3n1=256 * MIB), last="recovery"), 2.0)
    assert [e.kind for e in eff.events] == ["sync-started", "sync-ended"]
    (ev,) = store.syncs_for("md127", "aaaa:1111")
    assert (ev.action, ev.outcome, ev.started_at, ev.ended_at) == ("recover", "finished", 1.0, 2.0)
    assert ev.kernel_written("nvme3n1") == 256 * MIB and ev.kernel_written("nvme0n1") == 0
    # SMART now would be after the sync: only its end is read (its start is the last snapshot
    # before it, see app/wear/delta.py)
    assert {r.reason for r in eff.smart_reads} == {"sync-end"}


def test_an_array_created_and_synced_between_two_looks_gets_its_members_at_the_next_probe(
    tmp_path: Path,
) -> None:
    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None)
    w = Writes()
    s.probed(replace(machine(), arrays=()), 0.0)
    s.sampled(sample(1, w.add(), present=False), 1.0)
    eff = s.sampled(sample(2, w.add(nvme3n1=256 * MIB), last="recovery"), 2.0)
    assert eff.reprobe
    assert [e.kind for e in eff.events] == ["array-appeared", "sync-started", "sync-ended"]
    eff = s.probed(machine(), 2.5)
    assert {r.reason for r in eff.smart_reads} == {"sync-end"}
    (ev,) = store.syncs_for("md127", "aaaa:1111")
    assert {m.disk for m in ev.members} == set(DISKS) and ev.outcome == "finished"
    assert ev.kernel_written("nvme3n1") == ev.capacities["nvme3n1"] == 256 * MIB


def test_degraded_at_first_sight_and_shape_changes() -> None:
    s = Session(audit_every_s=60.0)
    eff = s.probed(machine(), 0.0)
    assert eff.audit and not s.probed(machine(), 1.0).audit  # the cadence
    eff = s.sampled(sample(1, {}, degraded=1), 1.0)
    assert [e.kind for e in eff.events] == ["degraded"]
    assert s.tick(30.0).audit is False
    assert s.tick(61.0).audit is False  # still running (never reported finished)
    s.audit_finished(61.0)
    assert s.tick(122.0).audit


def test_an_audit_asked_for_while_one_runs_runs_when_it_ends() -> None:
    s = Session(audit_every_s=60.0)
    assert not s.audit_now(0.0)  # nothing probed yet: nothing to audit
    assert s.probed(machine(), 0.0).audit  # the first audit starts
    # a plan ran (or SMART turned a verdict) while it was running: not dropped, kept pending
    assert s.audit_now(5.0) is False
    assert s.audit_now(6.0) is False  # asked twice: still one more audit, not two
    assert s.audit_finished(10.0) is True  # the kept one starts at once
    assert s.tick(11.0).audit is False  # and is running
    assert s.audit_finished(12.0) is False  # nothing more was asked for
    assert s.audit_now(13.0) is True  # idle: starts directly
    assert s.audit_finished(14.0) is False


# ---- the TUI and the monitor record the same syncs ----------------------------------------------
class ScriptedBackend:
    """Replays one probe and a fixed sample sequence; SMART from fixed counters."""

    name = "scripted"
    read_only_reason = "test"

    def __init__(self, samples: list[LiveSample]) -> None:
        self.samples = samples
        self.i = 0
        self.t = 0.0

    def now(self) -> float:
        return self.t

    def probe(self) -> Machine:
        return machine(t=self.t)

    def sample(self) -> LiveSample:
        s = self.samples[min(self.i, len(self.samples) - 1)]
        self.i += 1
        self.t = s.taken_at
        return s

    def smart(self, disk: str) -> SmartReading:
        return SmartReading(disk, True, protocol="NVMe", serial=f"SN-{disk}", taken_at=self.t)

    def read_text(self, path: str) -> str | None:
        return None


def _sequence() -> list[LiveSample]:
    w = Writes()
    seq = [sample(1, w.add())]
    seq.append(sample(2, w.add(nvme3n1=64 * MIB), recover(TOTAL // 4)))
    seq.append(sample(3, w.add(nvme3n1=192 * MIB)))
    seq.append(sample(4, w.add(), check(TOTAL // 10)))
    seq.append(sample(5, w.add(), mismatch=0))
    return seq


def _records(store: SnapshotStore) -> list[tuple[Any, ...]]:
    return [
        (
            e.array,
            e.array_uuid,
            e.action,
            e.started_at,
            e.ended_at,
            e.outcome,
            e.fraction,
            *(e.kernel_written(d) for d in DISKS),
        )
        for e in store.syncs_for("md127", "aaaa:1111")
    ]


def test_the_tui_and_the_monitor_record_the_same_syncs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the monitor, as `raidman monitor` runs it
    mstore = SnapshotStore.open(tmp_path / "monitor.db")
    mon = WearMonitor(ScriptedBackend(_sequence()), mstore)
    for _ in _sequence():
        mon.tick()
    monitor_records = _records(mstore)

    # the TUI, fed the same samples through its own timers and workers
    from app.ui.app import RaidmanApp

    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "tui"))
    backend = ScriptedBackend(_sequence())
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0.01)

    async def drive() -> None:
        async with app.run_test() as pilot:
            for _ in range(500):
                if app.sample_count > len(backend.samples) + 1:  # all seen, the last twice
                    break
                await pilot.pause(0.02)

    asyncio.run(drive())
    tstore = SnapshotStore.open(tmp_path / "tui" / "state.db")
    tui_records = _records(tstore)

    assert [r[2] for r in monitor_records] == ["recover", "check"]
    assert monitor_records[0][5] == "finished" and monitor_records[1][5] == "interrupted"
    assert monitor_records[0][7 + 3] == 256 * MIB
    assert tui_records == monitor_records


def test_the_threaded_monitor_records_the_same_and_reads_smart_beside_sampling(
    tmp_path: Path,
) -> None:
    inline = SnapshotStore.open(tmp_path / "inline.db")
    mon = WearMonitor(ScriptedBackend(_sequence()), inline)
    for _ in _sequence():
        mon.tick()
    threaded = SnapshotStore.open(tmp_path / "threaded.db")
    tmon = WearMonitor(ScriptedBackend(_sequence()), threaded, threaded=True)
    for _ in _sequence():
        tmon.tick()
    tmon.close()  # the queued SMART reads are done
    assert _records(threaded) == _records(inline)
    (rec, _chk) = threaded.syncs_for("md127", "aaaa:1111")
    for d in DISKS:
        assert threaded.sync_snapshot(rec.id, f"SN-{d}", "sync-start") is not None
        assert threaded.sync_snapshot(rec.id, f"SN-{d}", "sync-end") is not None


def test_merge_live_keeps_what_the_sample_did_not_change_by_identity() -> None:
    """Only the arrays a sample changed are new objects (widgets skip the rest by identity); a
    sample that changes nothing gives back the probed machine itself."""
    from app.session import merge_live
    from backends.simulated import SimClock, SimulatedBackend

    clock = SimClock.manual()
    backend = SimulatedBackend.big(disks=40, arrays=10, syncing=3, clock=clock)
    probed = backend.probe()
    clock.advance(1.0)
    merged = merge_live(probed, backend.sample())
    moved = {a.name for a in probed.arrays if a.sync is not None and a.sync.active}
    assert len(moved) == 3
    for old, new in zip(probed.arrays, merged.arrays, strict=True):
        assert (new is old) == (old.name not in moved), old.name
    pairs = list(_synced_pairs(merged, probed))
    assert len(pairs) == 3
    assert all(a.sync.done_sectors > b.sync.done_sectors for a, b in pairs)

    idle = SimulatedBackend.big(disks=40, arrays=10, syncing=0, clock=SimClock.manual())
    still = idle.probe()
    assert merge_live(still, idle.sample()) is still


def test_the_session_merger_gives_what_merge_live_gives_and_the_same_machine_when_still() -> None:
    """Issue 13: the session folds each sample in with work only for the arrays that moved; its
    machine equals ``merge_live(probed, sample)`` at every sample (syncs moving, a member failed,
    a new probe), and a sample that moves nothing gives back the very machine of the last one."""
    from app.session import LiveMerger, merge_live
    from backends.simulated import SimClock, SimulatedBackend

    clock = SimClock.manual()
    backend = SimulatedBackend.big(disks=40, arrays=10, syncing=3, clock=clock)
    merger = LiveMerger()
    probed = backend.probe()
    for step in range(7):
        clock.advance(1.0)
        if step == 3:
            assert backend.run(["mdadm", "--manage", "/dev/md5", "--fail", "/dev/sdu"]).ok
        if step == 4:
            probed = backend.probe()
        if step == 5:  # an array leaves the samples before a probe: shown as probed again
            assert backend.run(["mdadm", "--stop", "/dev/md7"]).ok
        sample = backend.sample()
        got = merger.merge(probed, sample)
        assert got == merge_live(probed, sample), step
    assert all(a.name != "md7" for a in sample.arrays)
    assert got.array("md7") == probed.array("md7")
    failed = got.array("md5")
    assert failed is not None and failed.degraded == 1

    idle = SimulatedBackend.big(disks=40, arrays=10, syncing=0, clock=SimClock.manual())
    still, m2 = idle.probe(), LiveMerger()
    first = m2.merge(still, idle.sample())
    assert first is still
    assert m2.merge(still, idle.sample()) is first
    one = SimulatedBackend.big(disks=40, arrays=10, syncing=1, clock=(c1 := SimClock.manual()))
    p1, m3 = one.probe(), LiveMerger()
    c1.advance(1.0)
    a = m3.merge(p1, one.sample())
    c1.advance(1.0)
    b = m3.merge(p1, one.sample())
    assert a is not b and a.arrays[0] is not b.arrays[0]  # the syncing one moved
    assert all(x is y for x, y in zip(a.arrays[1:], b.arrays[1:], strict=True))


def _synced_pairs(after: Machine, before: Machine) -> Iterable[tuple[Any, Any]]:
    old = {a.name: a for a in before.arrays}
    for a in after.arrays:
        if a.sync is not None and old[a.name].sync is not None:
            yield a, old[a.name]


def test_a_running_sync_stores_only_its_members_counters_each_second(tmp_path: Path) -> None:
    """On a big machine the running record of a sync holds its members' write counters, not
    every disk's (issue 13: ~30 KB of JSON per sync per second on 1,000 disks); it follows the
    kernel every SO_FAR_EVERY_S, not each second (issue 44: a commit each second was a tenth of
    raid10-evo's main thread)."""
    from app.wear.recorder import SO_FAR_EVERY_S
    from backends.simulated import SimClock, SimulatedBackend

    clock = SimClock.manual()
    backend = SimulatedBackend.big(disks=40, arrays=10, syncing=1, clock=clock)
    store = SnapshotStore.open(tmp_path / "w.db")
    session = Session(store=store, audit_every_s=None, smart_every_s=None)
    machine = backend.probe()
    session.probed(machine, clock.now())
    syncing = next(a for a in machine.arrays if a.sync is not None and a.sync.active)
    disks = {m.device for m in syncing.members}

    def stored() -> dict[str, int]:
        (ev,) = [e for e in store.running_syncs() if e.array == syncing.name]
        assert set(ev.kernel_end) == disks
        assert set(ev.kernel_start) == disks
        return {d: ev.kernel_end[d] - ev.kernel_start[d] for d in disks}

    written = []
    for _ in range(2 * int(SO_FAR_EVERY_S) + 1):
        clock.advance(1.0)
        session.sampled(backend.sample())
        written.append(stored())
    # moved twice in 11 seconds (at 5 and 10 s after the first), held in between
    moves = [i for i in range(1, len(written)) if written[i] != written[i - 1]]
    assert moves == [int(SO_FAR_EVERY_S), 2 * int(SO_FAR_EVERY_S)], moves
    assert all(written[-1][d] > 0 for d in disks)


def test_a_batch_of_store_writes_commits_together_or_not_at_all(tmp_path: Path) -> None:
    store = SnapshotStore.open(tmp_path / "w.db")
    sid = store.start_sync("md0", "resync", (), 1.0, kernel_start={"sda": 1})
    with store.batch():
        store.set_kernel_writes(sid, {"sda": 1}, {"sda": 5})
    with pytest.raises(RuntimeError), store.batch():
        store.set_kernel_writes(sid, {"sda": 1}, {"sda": 9})
        raise RuntimeError("half-way")
    (ev,) = store.running_syncs()
    assert dict(ev.kernel_end) == {"sda": 5}  # the failed batch left nothing behind


def test_view_carries_the_boost_records_for_the_sync_card(tmp_path: Path) -> None:
    """The Sync card says "boosted" from the record the session holds: there from the moment
    the record is written (before anything is raised), gone when nothing ran."""
    from app.sync.boost import BoostRecord, BoostStore

    session = Session(boosts=BoostStore(tmp_path / "boost.json"), audit_every_s=None)
    rec = BoostRecord(
        "md127",
        "resync",
        0.0,
        previous={"sysctl:dev.raid.speed_limit_max": "200000"},
        applied={"sysctl:dev.raid.speed_limit_max": "500000"},
    )
    assert dict(session.view.boost_records) == {}
    session.boost_starting(rec)
    shown = session.view.boost_records["md127"]
    assert shown.applied == rec.applied and shown.pending
    assert session.boost_ran(rec, None) is None  # closed without running
    assert dict(session.view.boost_records) == {}


def test_a_readded_member_is_in_the_record_of_the_rebuild_it_gets(tmp_path: Path) -> None:
    """mdadm --re-add: the probe saw the array without nvme1n1, the sample that shows the
    recovery shows it back; the record (kernel window and SMART reads) includes it."""
    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None)
    w = Writes()
    m = machine()
    (arr,) = m.arrays
    without = replace(arr, members=tuple(x for x in arr.members if x.device != "nvme1n1"))
    s.probed(replace(m, arrays=(without,)), 0.0)
    s.sampled(sample(1, w.add()), 1.0)
    rebuild = SyncStatus("recover", TOTAL // 50, TOTAL, 100_000, targets=("nvme1n1",))
    eff = s.sampled(sample(2, w.add(nvme1n1=MIB), rebuild), 2.0)
    assert "nvme1n1" in {r.disk for r in eff.smart_reads if r.reason == "sync-start"}
    eff = s.sampled(sample(3, w.add(nvme1n1=2 * MIB)), 3.0)
    assert "nvme1n1" in {r.disk for r in eff.smart_reads if r.reason == "sync-end"}
    (ev,) = store.syncs_for("md127", "aaaa:1111")
    assert {x.disk for x in ev.members} == set(DISKS)
    assert next(x for x in ev.members if x.disk == "nvme1n1").serial == "SN-nvme1n1"
    assert ev.kernel_written("nvme1n1") == 3 * MIB


def test_a_member_only_the_next_probe_shows_joins_the_running_record(tmp_path: Path) -> None:
    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None)
    w = Writes()
    m = machine()
    (arr,) = m.arrays
    s.probed(replace(m, arrays=(replace(arr, members=arr.members[:3]),)), 0.0)
    s.sampled(sample(1, w.add()), 1.0)
    # a sample whose member list does not have it yet either (md's sysfs lagging)
    live = sample(2, w.add(nvme3n1=MIB), recover(TOTAL // 50))
    live = replace(live, arrays=(replace(live.arrays[0], member_states=()),))
    s.sampled(live, 2.0)
    reads = s.probed(m, 2.5).smart_reads
    assert [(r.disk, r.reason) for r in reads] == [("nvme3n1", "sync-start")]
    (ev,) = store.syncs_for("md127", "aaaa:1111")
    assert {x.disk for x in ev.members} == set(DISKS)


def test_the_sample_gate_never_overlaps_and_coalesces_events() -> None:
    from app.session import SampleGate

    g = SampleGate()
    assert g.want() is True  # the timer starts one
    assert g.want() is False  # a timer tick while it is in flight: dropped
    assert g.done() is False and not g.busy
    assert g.want() is True
    assert g.want(event=True) is False  # an md event while in flight ...
    assert g.want(event=True) is False  # ... and another: one more sample for both
    assert g.done() is True and g.busy  # the coalesced sample starts at once
    assert g.want(event=True) is False
    assert g.done() is True
    assert g.done() is False and not g.busy


def test_a_syncs_smart_reads_wait_for_one_start_read_not_for_all(tmp_path: Path) -> None:
    """The threaded monitor queues its start snapshot one disk at a time: a sync that begins
    and ends while smartctl works through the disks gets its reads after the one in progress
    (issue 15: a 15 s start snapshot of 5 disks let a whole initial sync go by)."""
    gate, busy = threading.Event(), threading.Event()

    class Slow(ScriptedBackend):
        def smart(self, disk: str) -> SmartReading:
            busy.set()
            gate.wait(5)  # the first smartctl run is slow
            return super().smart(disk)

    store = SnapshotStore.open(tmp_path / "state.db")
    lines: list[str] = []
    mon = WearMonitor(Slow(_sequence()[:3]), store, threaded=True, log=lines.append)
    mon.tick()  # idle: the start snapshot is queued, its first disk being read
    assert busy.wait(5)
    mon.tick()  # the recovery running
    mon.tick()  # over
    gate.set()
    mon.close()
    snaps = sorted(
        (x for sn in store.serials() for x in store.snapshots_for(sn)), key=lambda x: x.id
    )
    order = [x.reason for x in snaps]
    assert order == ["start"] + ["sync-start"] * 4 + ["sync-end"] * 4 + ["start"] * 3, order
    assert "start snapshot of 4 disk(s)" in lines
    (rec,) = store.syncs_for("md127", "aaaa:1111")
    assert rec.outcome == "finished"


def _nvme(disk: str, units: int) -> dict[str, Any]:
    from app.wear.smart_reads import counters_of

    r = SmartReading(
        disk, True, protocol="NVMe", serial=f"SN-{disk}", nvme={"data_units_written": units}
    )
    return counters_of(r, 256 * MIB)


def test_a_short_sync_has_a_smart_pair_and_says_which_figure_is_whose(tmp_path: Path) -> None:
    """A rebuild of 100 KiB over between two looks (a bitmap re-add): no read at its start,
    the before is the disk's recent snapshot, the after is read at its end; the NVMe counter's
    step (512,000 B, NVMe base spec "Data Units Written") is coarser than what was written."""
    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None)
    w = Writes()
    start = s.probed(machine(), 0.0).smart_reads
    assert {r.reason for r in start} == {"start"}
    for r in start:  # the recent "before" of every disk
        store.record_snapshot(f"SN-{r.disk}", r.disk, _nvme(r.disk, 1000), ts=0.5, reason=r.reason)
    s.sampled(sample(1, w.add(), last="none"), 1.0)
    eff = s.sampled(sample(2, w.add(nvme3n1=100 * 1024), last="recovery"), 2.0)
    ends = [r for r in eff.smart_reads if r.reason == "sync-end"]
    assert {r.disk for r in ends} == set(DISKS)
    for r in ends:
        units = 1001 if r.disk == "nvme3n1" else 1000
        store.record_snapshot(
            f"SN-{r.disk}", r.disk, _nvme(r.disk, units), ts=2.5, reason=r.reason, sync_id=r.sync_id
        )
    (js,) = syncs_json(store, "md127", "aaaa:1111")
    by = {m["disk"]: m for m in js["members"]}
    t = by["nvme3n1"]
    assert t["smart_pair"] and t["bytes_written"] == 512_000 and t["kernel_bytes_written"] == 102400
    assert (t["kernel_counter"], t["smart_counter"]) == (
        "/proc/diskstats",
        "nvme:data_units_written",
    )
    assert t["smart_unit_bytes"] == 512_000 and t["smart_coarser_than_written"] is True
    o = by["nvme0n1"]
    assert o["smart_pair"] and o["bytes_written"] == 0 and o["kernel_bytes_written"] == 0
    assert o["smart_coarser_than_written"] is False  # nothing written: both say so

    from app.wear.delta import sync_wear

    (ev,) = store.syncs_for("md127", "aaaa:1111")
    lines = sync_wear(store, ev).lines()
    assert (
        "SMART counter: this rebuild wrote 500.0 KiB to nvme3n1 = 0.0 × its capacity (the device "
        "counts in steps of 512,000 B, coarser than the 100.0 KiB written: the kernel's figure is "
        "the exact one)"
    ) in lines, lines
    assert any(
        ln.startswith("kernel counter: this rebuild wrote 100.0 KiB to nvme3n1") for ln in lines
    )


def test_every_disk_keeps_a_recent_smart_snapshot(tmp_path: Path) -> None:
    """Read when first seen (a disk added later: at the probe that shows it), then on the
    cadence per disk; a sync's own reads count as that disk's refresh."""
    s = Session(
        store=SnapshotStore.open(tmp_path / "state.db"), audit_every_s=None, smart_every_s=100
    )
    m = machine()
    three = replace(m, disks=m.disks[:3])
    assert [r.disk for r in s.probed(three, 0.0).smart_reads] == list(DISKS[:3])
    assert s.probed(three, 10.0).smart_reads == ()
    assert [(r.disk, r.reason) for r in s.probed(m, 20.0).smart_reads] == [("nvme3n1", "start")]
    assert s.tick(99.0).smart_reads == ()
    assert [r.disk for r in s.tick(100.0).smart_reads] == list(DISKS[:3])
    assert [r.disk for r in s.tick(120.0).smart_reads] == ["nvme3n1"]


# ---- a sync that starts before SMART's "before" could be read (issue 15 §3) ---------------------
class NvmeBackend(ScriptedBackend):
    """SMART's NVMe data-unit counter (512,000 B, NVMe base spec "Data Units Written") follows
    the kernel's write counters of whatever sample the test says the device is at."""

    def __init__(self) -> None:
        super().__init__([])
        self.device: dict[str, int] = {}

    def smart(self, disk: str) -> SmartReading:
        return SmartReading(
            disk,
            True,
            protocol="NVMe",
            serial=f"SN-{disk}",
            nvme={"data_units_written": self.device[disk] // 512_000},
            taken_at=self.t,
        )


def test_the_start_up_sweep_reads_a_syncing_arrays_members_first() -> None:
    from app.wear.smart_reads import sweep_order

    other = (Disk("sda", 10 * MIB, serial="SA"), Disk("sdb", 10 * MIB, serial="SB"))
    m = machine()
    syncing = replace(m.arrays[0], sync=recover(0))
    idle_arr = MdArray(
        "md0", "raid1", raid_disks=2, members=(MdMember("sdb", 0, ("in_sync",)),), uuid="x"
    )
    m2 = replace(m, disks=(*other, *m.disks), arrays=(idle_arr, syncing))
    assert [d.name for d in sweep_order(m2)] == [*DISKS, "sdb", "sda"]
    s = Session(store=SnapshotStore.open(":memory:"), audit_every_s=None)
    assert [r.disk for r in s.probed(m2, 0.0).smart_reads] == [*DISKS, "sdb", "sda"]
    # no sync running: array members before the rest (a sync may start on them any moment)
    m3 = replace(m2, arrays=(idle_arr, m.arrays[0]))
    assert [d.name for d in sweep_order(m3)] == ["sdb", *DISKS, "sda"]


def test_a_before_read_after_the_sync_began_is_corrected_by_the_kernel_and_says_so(
    tmp_path: Path,
) -> None:
    """The watcher starts, the recovery begins at once: its members' SMART "before" comes 2 s
    into it, when the kernel had counted 64 MiB written to the target. The SMART delta then
    covers only the rest; the record adds the kernel's 64 MiB and says which is which."""
    from app.wear.delta import sync_wear
    from app.wear.smart_reads import take_snapshot

    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None)
    be = NvmeBackend()
    w = Writes()
    sweep = s.probed(machine(), 0.0).smart_reads  # the start-up sweep: smartctl not done yet
    s.sampled(sample(1, w.add()), 1.0)
    eff = s.sampled(sample(2, w.add(nvme3n1=64 * MIB), recover(TOTAL // 4)), 2.0)
    starts = [r for r in eff.smart_reads if r.reason == "sync-start"]
    assert {r.disk for r in starts} == set(DISKS)
    be.device, be.t = dict(w.w), 4.0  # read 2 s after the sync began, at 64 MiB
    for r in [*starts, *sweep]:
        take_snapshot(be, store, r, kernel=s.kernel_count)
    # while it runs with no SMART reading after the "before", SMART has measured nothing yet:
    # the Wear tab says so rather than "about 0 B" (the kernel's figure is the live one)
    (running,) = store.syncs_for("md127", "aaaa:1111")
    now = sync_wear(store, running)
    target = now.member("nvme3n1")
    assert target is not None and target.running
    assert now.line(target) == (
        "no SMART reading of nvme3n1 since this rebuild began yet (SMART is re-read on its own "
        "cadence; the kernel's figure is live)"
    )
    eff = s.sampled(sample(10, w.add(nvme3n1=192 * MIB)), 10.0)  # over
    be.device, be.t = dict(w.w), 10.5
    assert {r.reason for r in eff.smart_reads} == {"sync-end"}
    for r in eff.smart_reads:
        take_snapshot(be, store, r, kernel=s.kernel_count)

    (ev,) = store.syncs_for("md127", "aaaa:1111")
    assert ev.kernel_written("nvme3n1") == 256 * MIB
    t = sync_wear(store, ev).member("nvme3n1")
    assert t is not None and t.start is not None and t.start.reason == "sync-start"
    assert t.start_late and t.written_before_start == 64 * MIB
    # SMART counted only from its reading on (192 MiB, in whole 512,000 B units)
    assert abs(t.bytes_written - 192 * MIB) < 512_000  # type: ignore[operator]
    assert t.corrected_bytes is not None and abs(t.corrected_bytes - 256 * MIB) < 512_000
    assert t.capacity_share is not None and 0.99 < t.capacity_share < 1.01
    line = sync_wear(store, ev).line(t)
    assert line.startswith("this rebuild wrote about 255.9 MiB to nvme3n1 = 1.0 × its capacity")
    assert "SMART's before was read 2 s after the rebuild began: 191.9 MiB counted by SMART" in line
    assert "+ 64.0 MiB the kernel counted before that reading" in line, line
    other = sync_wear(store, ev).member("nvme0n1")
    assert other is not None and other.written_before_start == 0 and other.corrected_bytes == 0
    # read late, but the kernel counted nothing written to it before that: SMART's figure is
    # the whole of it, said plainly (no "read 2 s after ... + 0 B")
    assert (
        sync_wear(store, ev).line(other) == "this rebuild wrote 0 B to nvme0n1 = 0.0 × its capacity"
    )

    (js,) = syncs_json(store, "md127", "aaaa:1111")
    j = next(m for m in js["members"] if m["disk"] == "nvme3n1")
    assert j["smart_start_after_sync_began"] is True
    assert j["kernel_bytes_before_smart_start"] == 64 * MIB
    assert j["bytes_written"] == t.bytes_written  # SMART's own delta, unchanged
    assert j["bytes_written_corrected"] == t.corrected_bytes


def test_a_sync_before_any_smart_read_takes_the_first_reading_during_it(tmp_path: Path) -> None:
    """No sync-start read and no reading before it (it began and ended between two looks while
    the start-up sweep was still going): the sweep's reading taken during it is the "before",
    corrected by the kernel's count — not "no snapshot pair"."""
    from app.wear.delta import sync_wear

    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None)
    w = Writes()
    s.probed(machine(), 0.0)
    s.sampled(sample(1, w.add(), last="none"), 1.0)
    eff = s.sampled(sample(3, w.add(nvme3n1=256 * MIB), last="recovery"), 3.0)
    (ev,) = store.syncs_for("md127", "aaaa:1111")
    assert (ev.started_at, ev.ended_at) == (1.0, 3.0)
    assert {r.reason for r in eff.smart_reads} == {"sync-end"}
    mid = 1_000_000 + 100 * MIB  # the sweep read nvme3n1 at 2.0, 100 MiB into the rebuild
    counters = _nvme("nvme3n1", mid // 512_000)
    counters.update(kernel_bytes_written=mid, kernel_at=2.0)
    store.record_snapshot("SN-nvme3n1", "nvme3n1", counters, ts=2.0, reason="start")
    end = _nvme("nvme3n1", (1_000_000 + 256 * MIB) // 512_000)
    store.record_snapshot("SN-nvme3n1", "nvme3n1", end, ts=3.5, reason="sync-end", sync_id=ev.id)
    t = sync_wear(store, ev).member("nvme3n1")
    assert t is not None and t.start is not None and t.start.reason == "start"
    assert t.start_late and t.written_before_start == 100 * MIB
    assert t.corrected_bytes is not None and abs(t.corrected_bytes - 256 * MIB) < 512_000
    # a reading without the kernel's counter (stored by an older raidman) is no "before": the
    # SMART delta would silently miss what came before it
    store2 = SnapshotStore.open(tmp_path / "old.db")
    sid = store2.start_sync(
        "md127", "recover", ev.members, 1.0, kernel_start=ev.kernel_start, array_uuid="u"
    )
    store2.end_sync(sid, 3.0)
    store2.record_snapshot("SN-nvme3n1", "nvme3n1", _nvme("nvme3n1", 5), ts=2.0, reason="start")
    store2.record_snapshot("SN-nvme3n1", "nvme3n1", end, ts=3.5, reason="sync-end", sync_id=sid)
    ev2 = store2.sync(sid)
    assert ev2 is not None
    old = sync_wear(store2, ev2).member("nvme3n1")
    assert old is not None and old.start is None
    assert "no snapshot pair" in sync_wear(store2, ev2).line(old)


def test_a_late_before_without_the_kernels_count_is_a_lower_bound(tmp_path: Path) -> None:
    from app.wear.delta import sync_wear

    store = SnapshotStore.open(tmp_path / "state.db")
    sid = store.start_sync("md127", "recover", [SyncMember("nvme3n1", "nvme3n1", "S")], 10.0)
    store.end_sync(sid, 20.0)
    store.record_snapshot(
        "S", "nvme3n1", _nvme("x", 100), ts=12.0, reason="sync-start", sync_id=sid
    )
    store.record_snapshot("S", "nvme3n1", _nvme("x", 600), ts=21.0, reason="sync-end", sync_id=sid)
    ev = store.sync(sid)
    assert ev is not None
    sw = sync_wear(store, ev)
    (m,) = sw.members
    assert m.start_late and m.written_before_start is None and m.corrected_bytes is None
    assert m.capacity_share is None
    assert sw.line(m) == (
        "this rebuild wrote at least 244.1 MiB to nvme3n1 (SMART's before was read 2 s after the "
        "rebuild began; what it wrote before that is unknown)"
    )


@pytest.mark.parametrize("threaded", [False, True])
def test_the_monitors_smart_snapshots_keep_the_kernels_counter(
    tmp_path: Path, threaded: bool
) -> None:
    """What the correction above needs, stored by `raidman monitor` itself: each snapshot
    carries the disk's kernel write counter of the last sample when the reading came back."""
    store = SnapshotStore.open(tmp_path / "state.db")
    mon = WearMonitor(ScriptedBackend(_sequence()), store, threaded=threaded)
    for _ in range(3):  # idle, the recovery running (64 MiB written to nvme3n1), over
        mon.tick()
    mon.close()
    (rec,) = store.syncs_for("md127", "aaaa:1111")
    start = store.sync_snapshot(rec.id, "SN-nvme3n1", "sync-start")
    end = store.sync_snapshot(rec.id, "SN-nvme3n1", "sync-end")
    assert start is not None and end is not None
    if not threaded:  # read in line, right after the sample that saw the sync start / end
        assert start.kernel_bytes_written == 1_000_000 + 64 * MIB
        assert end.kernel_bytes_written == 1_000_000 + 256 * MIB
    else:  # beside sampling: whichever sample was the last one then
        assert start.kernel_bytes_written in (1_000_000 + 64 * MIB, 1_000_000 + 256 * MIB)
        assert end.kernel_bytes_written == 1_000_000 + 256 * MIB
    assert start.counters["kernel_at"] in (2.0, 3.0)


def watching_an_array_being_created(tmp_path: Path) -> tuple[SnapshotStore, Session, Writes]:
    """A session that probed md127 before it had a UUID (md/uuid all zeros, read as none),
    and one idle sample."""
    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None)
    w = Writes()
    s.probed(machine(uuid=None), 0.0)
    s.sampled(sample(1, w.add()), 1.0)
    return store, s, w


def test_a_sync_of_an_array_still_being_created_is_filed_under_its_uuid_once_known(
    tmp_path: Path,
) -> None:
    """A fresh-clone VM run (test_session_monitor): the monitor probed md127 while mdadm was
    still creating it (md/uuid all zeros, read as no UUID), and the resync, 0.04 s later, was
    over before anything else changed shape. The session asks for a probe until it knows
    the array's UUID, and files the record under it."""
    store, s, w = watching_an_array_being_created(tmp_path)
    resync = SyncStatus("resync", TOTAL - 10, TOTAL, 100_000)
    eff = s.sampled(sample(2, w.add(nvme0n1=MIB), resync), 2.0)
    assert eff.reprobe  # the sync's array has no UUID yet
    s.probed(machine(uuid=None), 2.1)  # mdadm is not done yet
    eff = s.sampled(sample(3, w.add(nvme0n1=MIB)), 3.0)  # over
    assert [e.kind for e in eff.events] == ["sync-ended"]
    assert not eff.reprobe  # asked 1 s ago: the next ask waits 2 s
    eff = s.sampled(sample(4, w.add()), 4.0)
    assert eff.reprobe
    s.probed(machine(uuid="cccc:3333"), 4.1)
    assert not s.sampled(sample(5, w.add()), 6.5).reprobe  # known: no more probes

    (ev,) = store.syncs_for("md127", "cccc:3333")
    assert ev.action == "resync" and ev.outcome == "finished"
    assert ev.kernel_written("nvme0n1") == 2 * MIB
    assert [j["array_uuid"] for j in syncs_json(store, "md127", "cccc:3333")] == ["cccc:3333"]


def test_an_array_that_never_shows_a_uuid_is_not_probed_without_end(tmp_path: Path) -> None:
    store, s, w = watching_an_array_being_created(tmp_path)
    asks = 0
    for t in range(2, 40):
        eff = s.sampled(sample(t, w.add(), check(TOTAL // 2)), float(t))
        if eff.reprobe:
            asks += 1
            s.probed(machine(uuid=None), t + 0.1)
    assert asks == 5
    (ev,) = store.syncs_for("md127", None)
    assert ev.array_uuid is None and ev.outcome is None


def test_an_array_stopped_before_its_uuid_was_known_lends_it_no_new_arrays_uuid(
    tmp_path: Path,
) -> None:
    store, s, w = watching_an_array_being_created(tmp_path)
    s.sampled(sample(2, w.add(), SyncStatus("resync", 8, TOTAL, 100_000)), 2.0)
    s.sampled(sample(3, w.add(), present=False), 3.0)  # stopped: the sync ends with it
    s.sampled(sample(4, w.add()), 4.0)  # another md127
    s.probed(machine(uuid="dddd:4444"), 4.5)
    assert store.syncs_for("md127", "dddd:4444") == []
    (ev,) = store.syncs_for("md127", None)
    assert ev.array_uuid is None


def test_a_readd_over_between_two_looks_is_recorded_after_the_fact(tmp_path: Path) -> None:
    """A bitmap re-add of 4 MiB (issue 38): md recovered it within a second and
    last_sync_action already said "recovery" (the array's earlier rebuild). The looks saw the
    member gone, then in sync with the array whole: one record, the member's own bytes, marked
    as seen after the fact (report --json too)."""
    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None)
    w = Writes()
    s.probed(machine(), 0.0)
    gone = sample(1, w.add(), degraded=1, last="recovery")
    gone = replace(
        gone, arrays=(replace(gone.arrays[0], member_states=gone.arrays[0].member_states[:3]),)
    )
    s.sampled(gone, 1.0)
    eff = s.sampled(sample(2, w.add(nvme3n1=4 * MIB), last="recovery"), 2.0)
    assert [e.kind for e in eff.events if e.kind.startswith("sync")] == [
        "sync-started",
        "sync-ended",
    ]
    (ev,) = store.syncs_for("md127", "aaaa:1111")
    assert (ev.action, ev.outcome) == ("recover", "finished")
    assert ev.kernel_written("nvme3n1") == 4 * MIB
    assert ev.seen_after == "nvme3n1 in sync, md127 degraded 1 -> 0"
    (j,) = syncs_json(store, "md127", "aaaa:1111")
    assert j["seen_after_the_fact"] == ev.seen_after
    assert s.sampled(sample(3, w.add(), last="recovery"), 3.0).events == ()


def test_a_before_read_after_md_began_but_before_the_first_look_is_late(tmp_path: Path) -> None:
    """Seen in the VM under load (test_session_monitor, SMART 129.5 MB of the kernel's 267 MB):
    md began the rebuild between two looks, the start-up sweep read nvme3n1 then, and the
    first look that saw the rebuild came later. That reading is older than the sync's
    ``started_at`` (the first look), yet not a clean "before": the kernel had already counted
    100 MiB of the rebuild to the disk. Judged by its own kernel counter against the sync's
    ``kernel_start`` (the look before md began), it is late and corrected like any late one."""
    from app.wear.delta import sync_wear

    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None)
    w = Writes()
    s.probed(machine(), 0.0)
    s.sampled(sample(1, w.add()), 1.0)  # idle: the kernel's count at this look is the start
    s.sampled(sample(4, w.add(nvme3n1=150 * MIB), recover(TOTAL * 150 // 256)), 4.0)
    mid = 1_000_000 + 100 * MIB  # the sweep read nvme3n1 at 2.5, 100 MiB into the rebuild
    counters = _nvme("nvme3n1", mid // 512_000)
    counters.update(kernel_bytes_written=mid, kernel_at=2.5)
    store.record_snapshot("SN-nvme3n1", "nvme3n1", counters, ts=2.5, reason="start")
    s.sampled(sample(6, w.add(nvme3n1=106 * MIB)), 6.0)  # over
    (ev,) = store.syncs_for("md127", "aaaa:1111")
    assert ev.started_at > 2.5 and ev.kernel_written("nvme3n1") == 256 * MIB
    end = _nvme("nvme3n1", (1_000_000 + 256 * MIB) // 512_000)
    store.record_snapshot("SN-nvme3n1", "nvme3n1", end, ts=6.5, reason="sync-end", sync_id=ev.id)
    wear = sync_wear(store, ev)
    t = wear.member("nvme3n1")
    assert t is not None and t.start is not None and t.start.ts == 2.5
    assert t.start_late and t.written_before_start == 100 * MIB
    assert t.corrected_bytes is not None and abs(t.corrected_bytes - 256 * MIB) < 512_000
    line = wear.line(t)
    assert line.startswith("this rebuild wrote about 256.2 MiB to nvme3n1"), line
    assert "SMART's before was read after the rebuild began, before raidman first saw it" in line
    assert "+ 100.0 MiB the kernel counted before that reading" in line, line
