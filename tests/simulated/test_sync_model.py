"""The clock moves syncs at the modelled speeds (seed 000 and seed 001 numbers)."""

from __future__ import annotations

from backends.simulated import SimClock, SimulatedBackend


def speed(b: SimulatedBackend, array: str) -> int:
    a = b.probe().array(array)
    assert a is not None and a.sync is not None and a.sync.speed_kib_s is not None
    return a.sync.speed_kib_s


def test_resync_runs_to_completion_at_its_speed(make) -> None:
    b = make("raid10-evo")
    a = b.probe().array("md127")
    assert a is not None and a.sync is not None
    assert a.sync.speed_kib_s == 384214
    left_kib = (a.sync.total_sectors - a.sync.done_sectors) / 2  # type: ignore[operator]
    expected = left_kib / 384214
    b.clock.advance(60)
    mid = b.probe().array("md127")
    assert mid is not None and mid.sync is not None
    done_kib = (mid.sync.done_sectors - a.sync.done_sectors) / 2  # type: ignore[operator]
    assert abs(done_kib - 60 * 384214) < 2
    b.clock.advance(expected - 60 - 1)
    assert b.probe().array("md127").sync is not None  # type: ignore[union-attr]
    b.clock.advance(2)
    end = b.probe().array("md127")
    assert end is not None and end.sync is None
    assert b.read_text("/sys/block/md127/md/sync_action") == "idle\n"
    assert b.read_text("/sys/block/md127/md/last_sync_action") == "resync\n"
    assert "resync" not in (b.probe().mdstat or "")


def test_raising_limits_ramps_speed_like_the_article(make) -> None:
    b = make("raid10-evo")
    assert speed(b, "md127") == 384214
    assert b.run(["sysctl", "-w", "dev.raid.speed_limit_max=500000"]).ok
    assert b.run(["sysctl", "-w", "dev.raid.speed_limit_min=200000"]).ok
    readings = []
    for _ in range(12):
        b.clock.advance(3)
        readings.append(speed(b, "md127"))
    assert readings == sorted(readings)  # the kernel's 30 s window ramps up
    assert readings[0] < 420000
    assert any(480000 <= r <= 495000 for r in readings)  # 486124 in the article
    assert any(520000 <= r <= 530000 for r in readings)  # 525478
    assert 520000 <= readings[-1] <= 545000  # steady state: the hardware ceiling
    # lowering again throttles it back to the bound
    b.run(["sysctl", "-w", "dev.raid.speed_limit_max=100000"])
    b.clock.advance(60)
    assert speed(b, "md127") < 200000


def test_per_array_sync_speed_max_overrides_global(make) -> None:
    b = make("raid10-evo")
    r = b.run(["tee", "/sys/block/md127/md/sync_speed_max"], stdin="50000\n")
    assert r.ok and r.stdout == "50000\n"
    assert b.read_text("/sys/block/md127/md/sync_speed_max") == "50000 (local)\n"
    b.clock.advance(60)
    assert 90000 <= speed(b, "md127") <= 100000  # RAID-10 resync: 2 members' worth per unit
    b.run(["tee", "/sys/block/md127/md/sync_speed_max"], stdin="system\n")
    assert b.read_text("/sys/block/md127/md/sync_speed_max") == "200000 (system)\n"


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
    b.clock.advance(10)
    s1 = {d.name: d for d in b.sample().disk_io}
    prog_kib = 10 * 384214
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
    from backends.simulated.snapshot import build_sample

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
