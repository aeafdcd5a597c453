"""The clock moves syncs at the modelled speeds (seed 000 and seed 001 numbers), on the sync
model of app/model/sync_model.py: md's limits bound the progress rate (md.c md_do_sync()), for a
RAID-10 resync too (VM, issue 22: 4,401 KiB/s under speed_limit_max 4,000)."""

from __future__ import annotations

from app.model.sync_model import held_rate
from backends.simulated import SimClock, SimulatedBackend

# seed 000 raised the limits before its first reading: the resync is held at the new 500000
EVO_RATE = held_rate(500_000)


def speed(b: SimulatedBackend, array: str) -> int:
    a = b.probe().array(array)
    assert a is not None and a.sync is not None and a.sync.speed_kib_s is not None
    return a.sync.speed_kib_s


def test_resync_runs_to_completion_at_its_speed(make) -> None:
    b = make("raid10-evo")
    a = b.probe().array("md127")
    assert a is not None and a.sync is not None
    assert a.sync.speed_kib_s == 384214  # the article's first reading, md's window ramping
    left_kib = (a.sync.total_sectors - a.sync.done_sectors) / 2  # type: ignore[operator]
    expected = left_kib / EVO_RATE
    b.clock.advance(60)
    mid = b.probe().array("md127")
    assert mid is not None and mid.sync is not None
    done_kib = (mid.sync.done_sectors - a.sync.done_sectors) / 2  # type: ignore[operator]
    assert abs(done_kib - 60 * EVO_RATE) < 2
    b.clock.advance(expected - 60 - 1)
    assert b.probe().array("md127").sync is not None  # type: ignore[union-attr]
    b.clock.advance(2)
    end = b.probe().array("md127")
    assert end is not None and end.sync is None
    assert b.read_text("/sys/block/md127/md/sync_action") == "idle\n"
    assert b.read_text("/sys/block/md127/md/last_sync_action") == "resync\n"
    assert "resync" not in (b.probe().mdstat or "")


def test_the_speed_ramps_like_the_article_and_holds_at_the_limit(make) -> None:
    """Seed 000 read 384214, 486124, 525478 K/sec after raising speed_limit_max to 500000: md's
    30 s window ramping up to the rate the new limit holds it at (limit × (t+1)/t)."""
    b = make("raid10-evo")
    assert b.read_text("/proc/sys/dev/raid/speed_limit_max") == "500000\n"
    readings = [speed(b, "md127")]
    for _ in range(12):
        b.clock.advance(3)
        readings.append(speed(b, "md127"))
    assert readings == sorted(readings)
    assert readings[0] == 384214
    assert any(480000 <= r <= 495000 for r in readings)  # 486124 in the article
    assert 500000 <= readings[-1] <= 530000  # held at the limit: the article's 525478
    # the default limit holds a RAID-10 resync at ~200000 progress, not 2 × 200000
    b.run(["sysctl", "-w", "dev.raid.speed_limit_max=200000"])
    b.clock.advance(60)
    assert 200000 <= speed(b, "md127") <= 212000
    b.run(["sysctl", "-w", "dev.raid.speed_limit_max=100000"])
    b.clock.advance(60)
    assert 100000 <= speed(b, "md127") <= 106000


def test_per_array_sync_speed_max_overrides_global(make) -> None:
    b = make("raid10-evo")
    r = b.run(["tee", "/sys/block/md127/md/sync_speed_max"], stdin="50000\n")
    assert r.ok and r.stdout == "50000\n"
    assert b.read_text("/sys/block/md127/md/sync_speed_max") == "50000 (local)\n"
    b.clock.advance(60)
    assert 50000 <= speed(b, "md127") <= 53000  # the array's own limit, on progress
    assert b.probe().array("md127").speed_max_local == 50000  # type: ignore[union-attr]
    b.run(["tee", "/sys/block/md127/md/sync_speed_max"], stdin="system\n")
    assert b.read_text("/sys/block/md127/md/sync_speed_max") == "500000 (system)\n"
    assert b.probe().array("md127").speed_max_local is None  # type: ignore[union-attr]


def test_stripe_cache_raises_raid6_rebuild_25_to_66(make) -> None:
    b = make("raid6-wd")
    before = speed(b, "md0")
    assert 24000 <= before <= 26000  # "около 25МБ/сек"
    r = b.run(["tee", "/sys/block/md0/md/stripe_cache_size"], stdin="8192\n")
    assert r.ok
    assert b.read_text("/sys/block/md0/md/stripe_cache_size") == "8192\n"
    b.clock.advance(45)
    after = speed(b, "md0")
    assert 64000 <= after <= 68000  # "66МБ/сек"
    bad = b.run(["tee", "/sys/block/md0/md/stripe_cache_size"], stdin="99999\n")
    assert bad.returncode == 1 and "Invalid argument" in bad.stderr


def test_rebuild_ends_array_no_longer_degraded(make) -> None:
    b = make("raid6-wd")
    b.run(["tee", "/sys/block/md0/md/stripe_cache_size"], stdin="8192\n")
    b.clock.advance(24 * 3600)
    a = b.probe().array("md0")
    assert a is not None and a.sync is None and a.degraded == 0
    assert a.member("sdf1").role == "in_sync"  # type: ignore[union-attr]
    assert "[5/5] [UUUUU]" in (b.probe().mdstat or "")


def test_check_sets_mismatch_cnt_and_frozen_pauses(make) -> None:
    b = make("raid10-evo")
    b.clock.advance(3600)  # resync done
    b.state.arrays["md127"].mismatch_sectors_on_check = 128
    assert b.run(["tee", "/sys/block/md127/md/sync_action"], stdin="check\n").ok
    busy = b.run(["tee", "/sys/block/md127/md/sync_action"], stdin="check\n")
    assert busy.returncode == 1 and "busy" in busy.stderr
    a = b.probe().array("md127")
    assert a is not None and a.sync is not None and a.sync.action == "check"
    assert "check =" in (b.probe().mdstat or "")
    b.run(["tee", "/sys/block/md127/md/sync_action"], stdin="frozen\n")
    pos = b.probe().array("md127").sync.done_sectors  # type: ignore[union-attr]
    b.clock.advance(30)
    assert b.probe().array("md127").sync.done_sectors == pos  # type: ignore[union-attr]
    b.run(["tee", "/sys/block/md127/md/sync_action"], stdin="idle\n")
    b.clock.advance(3600)
    assert b.read_text("/sys/block/md127/md/mismatch_cnt") == "128\n"
    assert b.read_text("/sys/block/md127/md/last_sync_action") == "check\n"


def test_disk_io_counters_follow_the_sync(make) -> None:
    b = make("raid10-evo")
    s0 = {d.name: d for d in b.sample().disk_io}
    p0 = b.probe().array("md127").sync.done_sectors  # type: ignore[union-attr]
    b.clock.advance(10)
    s1 = {d.name: d for d in b.sample().disk_io}
    p1 = b.probe().array("md127").sync.done_sectors  # type: ignore[union-attr]
    prog_kib = (p1 - p0) // 2
    # near-2 on four disks: slots 0/2 read the first copy, slots 1/3 write the second
    for disk, (r, w) in {"sda": (1, 0), "sdb": (0, 1), "sdc": (1, 0), "sdd": (0, 1)}.items():
        dr = s1[disk].read_bytes - s0[disk].read_bytes
        dw = s1[disk].write_bytes - s0[disk].write_bytes
        assert abs(dr - r * prog_kib * 512) <= 4096
        assert abs(dw - w * prog_kib * 512) <= 4096
    live = b.sample().arrays[0]
    assert live.name == "md127" and live.sync is not None and live.sync.action == "resync"


def test_a_sample_reuses_what_did_not_move_and_says_what_did() -> None:
    """Issue 13: the simulator hands out an idle array's MdLive and an idle disk's counters as
    the same objects sample after sample (its cost and its consumers' then follow what moved),
    and every sample is equal to one built from scratch: a member marked or failed by mdadm shows
    at once."""
    from backends.simulated.live import build_sample

    clock = SimClock.manual()
    b = SimulatedBackend.big(disks=40, arrays=10, syncing=3, clock=clock)
    first = b.sample()
    clock.advance(1.0)
    second = b.sample()
    assert second == build_sample(b.state)  # the same as without the cache
    idle = [a for a in first.arrays if a.sync is None]
    assert idle and all(
        x is y for x, y in zip(idle, [a for a in second.arrays if a.sync is None], strict=True)
    )
    moved = {d.name for d in second.disk_io} - {
        d.name for d, e in zip(first.disk_io, second.disk_io, strict=True) if d is e
    }
    assert moved and all(
        d.write_bytes > e.write_bytes or d.read_bytes > e.read_bytes
        for d, e in zip(second.disk_io, first.disk_io, strict=True)
        if d.name in moved
    )
    marked = idle[1]  # a flag added to a member in place (no spare: nothing else moves)
    mdev = marked.member_states[1][0]
    assert b.run(["mdadm", "--manage", f"/dev/{marked.name}", "--replace", f"/dev/{mdev}"]).ok
    clock.advance(1.0)
    after = b.sample()
    assert after == build_sample(b.state)
    now = next(a for a in after.arrays if a.name == marked.name)
    assert "want_replacement" in dict(now.member_states)[mdev]
    victim = idle[0]
    dev = victim.member_states[0][0]
    assert b.run(["mdadm", "--manage", f"/dev/{victim.name}", "--fail", f"/dev/{dev}"]).ok
    clock.advance(1.0)
    third = b.sample()
    assert third == build_sample(b.state)
    now = next(a for a in third.arrays if a.name == victim.name)
    assert now is not victim and "faulty" in dict(now.member_states)[dev]
    assert now.degraded == victim.degraded + 1


def test_a_sync_on_a_shared_disk_waits_like_md(make) -> None:
    """md.c md_do_sync(): a sync on an array that shares a disk with one already syncing is
    delayed ("resync=DELAYED" in mdstat, sync_completed "delayed") until that one ends; the
    issue's case: md126 created on sdb1/sdc1/sdd1 while md127 (sda2..sdd2) resyncs."""
    b = make("raid10-evo")
    r = b.run(
        ["mdadm", "--create", "/dev/md126", "--run", "--level=5", "--raid-devices=3",
         "/dev/sdb1", "/dev/sdc1", "/dev/sdd1"]
    )  # fmt: skip
    assert r.ok, r.stderr
    new = b.probe().array("md126")
    assert new is not None and new.sync is not None and new.sync.action == "delayed"
    assert b.read_text("/sys/block/md126/md/sync_completed") == "delayed\n"
    mdstat = b.probe().mdstat or ""
    block = mdstat.split("md126 :", 1)[1].split("\n\n", 1)[0]
    assert "resync=DELAYED" in block
    b.clock.advance(30)
    assert b.probe().array("md126").sync.action == "delayed"  # type: ignore[union-attr]
    assert b.state.arrays["md126"].job.pos == 0  # type: ignore[union-attr]
    # md127's resync runs meanwhile at its own speed, then md126 starts afresh
    b.clock.advance(3600)
    assert b.probe().array("md127").sync is None  # type: ignore[union-attr]
    b.clock.advance(1)
    moving = b.probe().array("md126")
    assert moving is not None
    assert moving.sync is None or moving.sync.action == "recover"
    b.clock.advance(3600)
    assert b.probe().array("md126").sync is None  # type: ignore[union-attr]
    (hist,) = b.state.arrays["md126"].history
    assert hist["duration_s"] < 60  # its own sync only, not the wait


def test_arrays_on_other_disks_sync_at_once(make) -> None:
    b = make("raid6-wd")
    st = b.state
    syncing = [a for a in st.arrays.values() if a.job is not None]
    assert syncing and not any(a.job.waiting for a in syncing if a.job)


def test_a_sample_handed_out_again_is_always_what_the_state_says_now() -> None:
    """The sample's cache hands an idle array's MdLive out again without looking at its members
    while no program ran and no sync started or ended (issue 44: comparing big's idle arrays
    each second was an eighth of the monitor's time): through syncs starting and ending with
    time, members failed, removed, added and marked, checks asked through sysfs, arrays stopped, every
    sample equals one built from scratch, and most arrays come back as the same objects."""
    import random

    from backends.simulated.live import build_sample

    clock = SimClock.manual()
    b = SimulatedBackend.big(disks=40, arrays=10, syncing=3, clock=clock)
    rnd = random.Random(44)
    last = b.sample()
    kept = 0
    for step in range(60):
        move = rnd.randrange(6)
        idle = [a for a in last.arrays if a.sync is None and a.degraded == 0]
        if move == 0 and idle:
            a = rnd.choice(idle)
            dev = rnd.choice(a.member_states)[0]
            b.run(["mdadm", "--manage", f"/dev/{a.name}", "--fail", f"/dev/{dev}"])
            b.run(["mdadm", "--manage", f"/dev/{a.name}", "--remove", f"/dev/{dev}"])
            b.run(["mdadm", "--manage", f"/dev/{a.name}", "--add", f"/dev/{dev}"])
        elif move == 1 and idle:
            a = rnd.choice(idle)
            b.run(["tee", f"/sys/block/{a.name}/md/sync_action"], stdin="check\n")
        elif move == 2 and len(idle) > 3:
            b.run(["mdadm", "--stop", f"/dev/{rnd.choice(idle).name}"])
        elif move == 3 and idle:  # a flag set on a member in place, nothing else moves
            a = rnd.choice(idle)
            dev = rnd.choice(a.member_states)[0]
            b.run(["mdadm", "--manage", f"/dev/{a.name}", "--replace", f"/dev/{dev}"])
        clock.advance(rnd.choice((0.5, 1.0, 1.0, 30.0, 900.0)))
        now = b.sample()
        assert now == build_sample(b.state), step  # the same as without the cache
        kept += sum(x is y for x, y in zip(now.arrays, last.arrays, strict=False))
        last = now
    assert kept > 60 * 3  # idle arrays came back as they were, sample after sample
    # a program that changed a member in place and touched nothing else: every program run
    # counts (SimState.runs), so the next sample looks at the members again
    quiet = next(a for a in last.arrays if a.sync is None)
    b.state.arrays[quiet.name].members[0].state.add("write_mostly")
    b.state.runs += 1  # what SimulatedBackend.run counts for each program
    assert b.sample() == build_sample(b.state)
