"""Boost: raise limits for one sync, persist what to restore, restore when the sync ends."""

from __future__ import annotations

from pathlib import Path

from app.model import SyncStatus
from app.model.live import LiveSample, MdLive
from app.plans.geometry import stripe_cache_devices, stripe_cache_memory
from app.sync.boost import (
    BoostStore,
    due_restores,
    plan_boost,
    restore_plan,
)
from backends.simulated import SimClock, SimulatedBackend

KERNEL_DEFAULTS = {
    "/proc/sys/dev/raid/speed_limit_min": "1000\n",
    "/proc/sys/dev/raid/speed_limit_max": "200000\n",
    "/sys/block/md0/md/stripe_cache_size": "256\n",
    "/sys/block/md127/md/stripe_cache_size": "256\n",
    "/proc/meminfo": "MemTotal:       16318976 kB\nMemAvailable:   12239232 kB\n",
}


class Files:
    """A writable view of sysfs/procfs values, applied the way the executor's steps would."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = dict(values)

    def read(self, path: str) -> str | None:
        return self.values.get(path)

    def apply(self, argv: tuple[str, ...], stdin: str | None) -> None:
        if argv[0] == "sysctl":
            key, _, value = argv[2].partition("=")
            self.values["/proc/sys/" + key.replace(".", "/")] = value + "\n"
        elif argv[0] == "tee":
            assert stdin is not None
            self.values[argv[1]] = stdin
        else:  # pragma: no cover - the plans only use these two
            raise AssertionError(argv)


def idle(name: str) -> MdLive:
    return MdLive(name, "clean", 0, None)


def syncing(name: str, action: str = "resync") -> MdLive:
    return MdLive(name, "active", 0, SyncStatus(action, 0, 100, 1000))


def test_boost_raises_then_restores_across_a_restart(tmp_path: Path) -> None:
    files = Files(KERNEL_DEFAULTS)
    store = BoostStore(tmp_path / "boost.json")
    plan, record = plan_boost(
        files.read, "md0", "recover", level="raid6", members=5, store=store, rotational=False
    )
    argvs = [s.argv for s in plan.steps]
    assert argvs == [
        ("sysctl", "-w", "dev.raid.speed_limit_min=200000"),
        ("sysctl", "-w", "dev.raid.speed_limit_max=500000"),
        ("tee", "/sys/block/md0/md/stripe_cache_size"),
    ]
    assert plan.steps[2].stdin == "8192\n"
    assert "160 MiB" in plan.steps[2].why  # 8192 pages × 4 KiB × 5 members
    store.add(record)
    for s in plan.steps:
        files.apply(s.argv, s.stdin)
    assert files.read("/proc/sys/dev/raid/speed_limit_max") == "500000\n"

    # raidman closed and reopened: the record is still there
    reopened = BoostStore(tmp_path / "boost.json")
    assert [r.array for r in reopened.records] == ["md0"]
    assert due_restores(reopened, LiveSample(1.0, (syncing("md0", "recover"),))) == []
    (due,) = due_restores(reopened, LiveSample(2.0, (idle("md0"),)))
    restore = restore_plan(due, reopened)
    for s in restore.steps:
        files.apply(s.argv, s.stdin)
    reopened.remove("md0")
    assert files.values == {k: v for k, v in KERNEL_DEFAULTS.items()}
    assert BoostStore(tmp_path / "boost.json").records == ()


def test_two_boosts_restore_globals_only_after_the_last(tmp_path: Path) -> None:
    files = Files(KERNEL_DEFAULTS)
    store = BoostStore(tmp_path / "boost.json")
    p1, r1 = plan_boost(files.read, "md0", "resync", level="raid5", members=4, store=store)
    store.add(r1)
    for s in p1.steps:
        files.apply(s.argv, s.stdin)
    p2, r2 = plan_boost(files.read, "md127", "resync", level="raid10", members=4, store=store)
    # globals are already raised: nothing to do for md127 (raid10 has no stripe cache)
    assert p2.steps == ()
    # ... but md127's record still knows the values from before any boost
    assert r2.previous["sysctl:dev.raid.speed_limit_max"] == "200000"
    store.add(r2)
    first = restore_plan(r1, store)
    assert [s.argv[0:2] for s in first.steps] == [("tee", "/sys/block/md0/md/stripe_cache_size")]
    for s in first.steps:
        files.apply(s.argv, s.stdin)
    store.remove("md0")
    assert files.read("/proc/sys/dev/raid/speed_limit_max") == "500000\n"  # md127 still syncing
    last = restore_plan(r2, store)
    for s in last.steps:
        files.apply(s.argv, s.stdin)
    store.remove("md127")
    assert files.values == KERNEL_DEFAULTS


def test_values_already_high_are_left_alone(tmp_path: Path) -> None:
    files = Files({**KERNEL_DEFAULTS, "/proc/sys/dev/raid/speed_limit_max": "900000\n"})
    store = BoostStore(tmp_path / "boost.json")
    plan, record = plan_boost(
        files.read, "md127", "resync", level="raid10", members=4, store=store, rotational=False
    )
    assert [s.argv for s in plan.steps] == [("sysctl", "-w", "dev.raid.speed_limit_min=200000")]
    assert record.previous == {"sysctl:dev.raid.speed_limit_min": "1000"}


def test_unreadable_setting_is_a_warning_not_a_blind_write(tmp_path: Path) -> None:
    store = BoostStore(tmp_path / "boost.json")
    plan, record = plan_boost(
        lambda p: None, "md0", "resync", level="raid5", members=3, store=store, rotational=False
    )
    assert plan.steps == ()
    assert len(plan.warnings) == 2  # the min and max limits
    # the stripe cache's memory cannot be checked against MemAvailable: not raised either
    assert any("MemAvailable could not be read" in n for n in plan.notes)
    assert record.previous == {}


def test_corrupt_store_is_moved_aside_with_a_note(tmp_path: Path) -> None:
    p = tmp_path / "boost.json"
    p.write_text("{not json")
    store = BoostStore(p)
    assert store.records == ()
    assert store.notes and "unreadable" in store.notes[0]
    assert not p.exists()
    assert list(tmp_path.glob("boost.json.corrupt-*"))


def test_stripe_cache_cost_counts_only_the_raid_device_slots() -> None:
    """Seed 001's RAID-6: five slots, plus the faulty sdb1 (no slot) and the spare sdf1 listed as
    members. raid5.c gives each stripe one page per slot (pool_size = raid_disks): 5, not 6."""
    wd = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual()).probe()
    md0 = wd.array("md0")
    assert md0 is not None and len(md0.members) == 6
    assert any(m.role == "faulty" for m in md0.members)
    assert stripe_cache_devices(md0) == 5
    assert stripe_cache_memory(8192, stripe_cache_devices(md0)) == 8192 * 4096 * 5


def test_an_arrays_own_limits_are_raised_and_restored_not_the_systems(tmp_path: Path) -> None:
    """md.c speed_min()/speed_max(): an array's own md/sync_speed_min/max ("(local)") win over
    dev.raid.speed_limit_*: raising the sysctl would not speed that array up."""
    files = Files(
        {
            **KERNEL_DEFAULTS,
            "/sys/block/md127/md/sync_speed_min": "1000 (system)\n",
            "/sys/block/md127/md/sync_speed_max": "4000 (local)\n",
        }
    )
    store = BoostStore(tmp_path / "boost.json")
    plan, record = plan_boost(
        files.read, "md127", "resync", level="raid10", members=4, store=store,
        rotational=False, max_kib=1_343_000,
    )  # fmt: skip
    assert [(s.argv, s.stdin) for s in plan.steps] == [
        (("sysctl", "-w", "dev.raid.speed_limit_min=200000"), None),
        (("tee", "/sys/block/md127/md/sync_speed_max"), "1343000\n"),
    ]
    assert "md127's own sync speed ceiling" in plan.steps[1].why
    assert record.previous["sysfs:/sys/block/md127/md/sync_speed_max"] == "4000"
    store.add(record)
    reopened = BoostStore(tmp_path / "boost.json")  # the record validates: a setting boost owns
    assert reopened.records == (record,)
    restore = restore_plan(record, reopened)
    assert [(s.argv, s.stdin) for s in restore.steps] == [
        (("sysctl", "-w", "dev.raid.speed_limit_min=1000"), None),
        (("tee", "/sys/block/md127/md/sync_speed_max"), "4000\n"),
    ]


def test_a_record_naming_another_arrays_limit_is_refused(tmp_path: Path) -> None:
    import pytest

    from app.sync.boost import check_setting

    check_setting("sysfs:/sys/block/md127/md/sync_speed_max", "4000", "md127")
    with pytest.raises(ValueError, match="belongs to md126"):
        check_setting("sysfs:/sys/block/md126/md/sync_speed_max", "4000", "md127")
    with pytest.raises(ValueError, match="not a setting"):
        check_setting("sysfs:/sys/block/md127/md/sync_action", "idle", "md127")


def test_the_ceiling_comes_from_what_the_members_can_do() -> None:
    """Not a fixed 500000: a RAID-10 resync of SATA SSDs reads ~2 × 537000 KiB/s of progress;
    of NVMe far more; of disks whose kind is unknown, seed 000's 500000; never below the kernel's
    default max."""
    from app.model.sync_model import boost_max_kib_s

    sata, why = boost_max_kib_s("raid10", 4, "n2", "resync", 537_000)
    assert sata == 1_343_000 and "1,074,000 KiB/s" in why
    nvme, _ = boost_max_kib_s("raid10", 4, "n2", "resync", 2_000_000)
    assert nvme == 5_000_000 > 500_000
    assert boost_max_kib_s("raid6", 5, None, "recover", None)[0] == 500_000
    assert boost_max_kib_s("raid1", 2, None, "recover", 100_000)[0] == 200_000  # the floor


def test_a_stripe_cache_over_an_eighth_of_memavailable_is_refused_with_figures(
    tmp_path: Path,
) -> None:
    """raid5.c (raid5_run/setup_conf) costs each stripe a page per device: 8192 entries × 4 KiB ×
    5 devices = 160 MiB, more than 1 GiB / 8: refused, with the figures; the most that fits
    (4096 = 80 MiB) is raised instead, since it is above the 256 in force (a 1 GiB guest's
    boost raised nothing before, VM test_sync_watch)."""
    files = Files({**KERNEL_DEFAULTS, "/proc/meminfo": "MemAvailable:    1048576 kB\n"})
    store = BoostStore(tmp_path / "boost.json")
    plan, record = plan_boost(
        files.read, "md0", "recover", level="raid6", members=5, store=store, rotational=False
    )
    (tee,) = [s for s in plan.steps if s.argv[0] == "tee"]
    assert tee.argv == ("tee", "/sys/block/md0/md/stripe_cache_size") and tee.stdin == "4096\n"
    (note,) = [n for n in plan.notes if "stripe cache raised to 4096 only" in n]
    assert "8192 entries × 4 KiB × 5 devices = 160.0 MiB" in note
    assert "MemAvailable (1.0 GiB / 8 = 128.0 MiB)" in note
    # with 64 MiB available even 256 does not fit above what is in force: nothing raised
    files = Files({**KERNEL_DEFAULTS, "/proc/meminfo": "MemAvailable:    65536 kB\n"})
    plan, record = plan_boost(
        files.read, "md0", "recover", level="raid6", members=5, store=store, rotational=False
    )
    assert not any(s.argv[0] == "tee" for s in plan.steps)
    assert "sysfs:/sys/block/md0/md/stripe_cache_size" not in record.applied
    assert any("stripe cache not raised" in n for n in plan.notes)
    # with 2 GiB available it fits (160 MiB <= 256 MiB)
    files = Files({**KERNEL_DEFAULTS, "/proc/meminfo": "MemAvailable:    2097152 kB\n"})
    plan, _ = plan_boost(
        files.read, "md0", "recover", level="raid6", members=5, store=store, rotational=False
    )
    assert plan.steps[-1].argv == ("tee", "/sys/block/md0/md/stripe_cache_size")
