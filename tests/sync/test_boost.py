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
    assert len(plan.warnings) == 3
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
