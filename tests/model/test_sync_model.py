"""The sync model (app/model/sync_model.py): throttle on the progress rate, bytes per member per
level and action, durations. Numbers from the VM runs of issue 22 (four 256 MiB NVMe disks,
Debian 6.1 kernel): a 4-disk RAID-10 n2 resync held 4,401 KiB/s under speed_limit_max 4,000;
RAID-5 creation wrote ~254 MiB to the last member and ~13 kB to the others."""

from __future__ import annotations

import pytest

from app.model.devices import MdArray
from app.model.sync_model import (
    HELD_RATIO,
    SyncForecast,
    at_ceiling,
    effective_limits,
    forecast_sync,
    progress_per_member,
    shares_disk,
)

MIB = 1024 * 1024
M = 256 * MIB
FOUR = [("nvme0n1", M), ("nvme1n1", M), ("nvme2n1", M), ("nvme3n1", M)]


def r10(action: str = "resync", **kw: object) -> SyncForecast:
    """A forecast for the VM's 4-disk RAID-10 n2 of 256 MiB members."""
    return forecast_sync(
        array="md127", level="raid10", raid_disks=4, layout="n2", action=action, members=FOUR,
        **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def written(f: SyncForecast, dev: str) -> tuple[int, int]:
    m = next(m for m in f.members if m.device == dev)
    return m.bytes_low, m.bytes_high


def test_progress_unit_comes_from_the_level_table() -> None:
    assert progress_per_member("raid10", 4, "n2", "resync") == 2
    assert progress_per_member("raid10", 4, "n2", "check") == 2
    assert progress_per_member("raid10", 3, "n2", "resync") == 1.5
    assert progress_per_member("raid10", 6, "n3", "repair") == 2
    assert progress_per_member("raid10", 4, "n2", "recover") == 1  # member sectors
    assert progress_per_member("raid1", 2, None, "resync") == 1
    assert progress_per_member("raid6", 5, "left-symmetric", "resync") == 1
    assert progress_per_member(None, None, None, "resync") == 1


def test_raid10_resync_is_held_at_the_limit_on_progress_not_per_member() -> None:
    """VM: 4-disk RAID-10 n2 at speed_limit_max 4000 progressed at 4,401 KiB/s (array
    sectors): the limit bounds progress, so the forecast is ~limit, not 2 × limit."""
    f = r10("resync", initial=True, limit_kib_s=(1000, 4000))
    assert f.speed_kib_s is not None and 4000 <= f.speed_kib_s <= 4401
    assert f.speed_why == "md's limit"
    assert f.progress_sectors == 2 * M // 512  # array sectors: 512 MiB
    assert f.duration_s_low == pytest.approx(2 * M / 1024 / (4000 * HELD_RATIO))
    assert f.duration_s_high is None  # member speed unknown: the limit is only a bound
    # with the members' speed known (far faster than the limit): exact
    g = r10("resync", limit_kib_s=(1000, 4000), member_speed_kib_s=500_000)
    assert g.duration_s_low == g.duration_s_high == f.duration_s_low
    # a slow member bounds it: 3000 KiB/s per member reads 6000 KiB/s of array progress
    h = r10("resync", limit_kib_s=(1000, 200_000), member_speed_kib_s=3000)
    assert h.speed_kib_s == 6000 and h.speed_why == "the members' speed"


def test_raid10_near_resync_writes_only_second_copies_up_to_the_member() -> None:
    f = r10("resync", initial=True, content="used")
    assert written(f, "nvme0n1") == (0, 0)
    assert written(f, "nvme1n1") == (0, M)
    assert written(f, "nvme2n1") == (0, 0)
    assert written(f, "nvme3n1") == (0, M)
    zero = r10("resync", initial=True, content="zero")
    assert all(m.bytes_high == 0 for m in zero.members)


def test_raid5_creation_recovers_the_last_member() -> None:
    f = forecast_sync(
        array="md0",
        level="raid5",
        raid_disks=4,
        layout="left-symmetric",
        action="resync",
        members=FOUR,
        initial=True,
        limit_kib_s=(1000, 4000),
    )
    assert f.action == "recover"
    assert written(f, "nvme3n1") == (M, M)
    assert all(m.bytes_high == 0 for m in f.members[:3])
    assert f.progress_sectors == M // 512  # member sectors
    assert "last member" in f.why


def test_raid1_initial_resync_copies_every_mirror_but_the_first() -> None:
    f = forecast_sync(
        array="md1",
        level="raid1",
        raid_disks=3,
        layout=None,
        action="resync",
        members=FOUR[:3],
        initial=True,
    )
    assert [(m.bytes_low, m.bytes_high) for m in f.members] == [(0, 0), (M, M), (M, M)]


def test_raid6_resync_writes_at_most_its_parity_share() -> None:
    f = forecast_sync(
        array="md0",
        level="raid6",
        raid_disks=4,
        layout=None,
        action="resync",
        members=FOUR,
        initial=True,
        content="used",
    )
    assert all((m.bytes_low, m.bytes_high) == (0, M // 2) for m in f.members)


def test_recovery_writes_one_member_and_a_bitmap_re_add_only_the_dirty_bits() -> None:
    full = r10("recover", targets=("nvme1n1",), limit_kib_s=(1000, 4000))
    assert written(full, "nvme1n1") == (M, M)
    assert written(full, "nvme0n1") == (0, 0)
    assert full.progress_sectors == M // 512
    re_add = r10(
        "recover", targets=("nvme1n1",), bitmap_dirty_bytes=16 * MIB, limit_kib_s=(1000, 4000)
    )
    assert written(re_add, "nvme1n1") == (16 * MIB, 16 * MIB)
    assert re_add.duration_s_low is not None and full.duration_s_low is not None
    assert re_add.duration_s_low == pytest.approx(full.duration_s_low / 16)


def test_check_writes_nothing_and_reshape_rewrites_every_member() -> None:
    kw = dict(array="md0", level="raid5", raid_disks=4, layout=None, members=FOUR)
    chk = forecast_sync(action="check", **kw)  # type: ignore[arg-type]
    assert all(m.bytes_high == 0 for m in chk.members)
    rs = forecast_sync(action="reshape", **kw)  # type: ignore[arg-type]
    assert all((m.bytes_low, m.bytes_high) == (M, M) for m in rs.members)


def test_a_running_sync_forecasts_what_is_left() -> None:
    f = forecast_sync(
        array="md0",
        level="raid1",
        raid_disks=2,
        layout=None,
        action="recover",
        members=FOUR[:2],
        targets=("nvme1n1",),
        limit_kib_s=(1000, 4000),
        done_sectors=M // 512 // 2,
    )
    assert f.duration_s_low == pytest.approx(M / 2 / 1024 / (4000 * HELD_RATIO))


def test_the_arrays_own_limit_wins_and_is_named() -> None:
    a = MdArray(name="md0", level="raid1", speed_max_local=50_000)
    assert effective_limits(a, 1000, 200_000) == (1000, 50_000)
    assert effective_limits(MdArray(name="md0", level="raid1"), 1000, 200_000) == (1000, 200_000)
    f = forecast_sync(
        array="md0",
        level="raid1",
        raid_disks=2,
        layout=None,
        action="check",
        members=FOUR[:2],
        limit_kib_s=(1000, 50_000),
        limit_local=True,
    )
    assert f.speed_why == "the array's own limit"


def test_at_ceiling_compares_progress_with_the_limit() -> None:
    assert at_ceiling(4401, 4000) is True  # the VM's RAID-10 resync
    assert at_ceiling(2000, 4000) is False
    assert at_ceiling(None, 4000) is None
    assert at_ceiling(3000, None) is None


def test_a_max_below_the_min_binds_at_the_min() -> None:
    # md.c md_do_sync: it sleeps only while currspeed > speed_min AND > speed_max; the VM's
    # raid1 LV with --maxrecoveryrate 256 under speed_limit_min 1000 synced at 1,664 KiB/s
    assert at_ceiling(1664, 256) is True  # without the min: "above its max"
    assert at_ceiling(1664, 256, 1000) is True  # held at the min
    assert at_ceiling(600, 256, 1000) is False  # below the min: the disks hold it
    assert at_ceiling(600, 256) is True


def test_arrays_on_partitions_of_one_disk_share_it() -> None:
    def disk_of(d: str) -> str:
        return d.rstrip("0123456789") if d.startswith("sd") else d

    assert shares_disk(["sdb1", "sdc1"], ["sda2", "sdb2"], disk_of)
    assert not shares_disk(["sdb1", "sdc1"], ["sda2", "sdd2"], disk_of)


def test_to_json_has_the_plan_fields() -> None:
    f = forecast_sync(
        array="md0",
        level="raid1",
        raid_disks=2,
        layout=None,
        action="recover",
        members=FOUR[:2],
        targets=("nvme1n1",),
    )
    j = f.to_json()
    assert set(j) >= {"array", "action", "speed_kib_s", "duration_s_low", "duration_s_high"}
    assert j["members"][1] == {
        "device": "nvme1n1",
        "bytes_written_low": M,
        "bytes_written_high": M,
        "member_bytes": M,
    }


def test_waiting_for_names_syncing_arrays_on_a_shared_disk() -> None:
    """md.c md_do_sync(): a sync waits for one running on an array sharing a disk
    (match_mddev_units); the simulated raid10-evo: md126 on sdb1/sdc1/sdd1 waits for md127."""
    from app.model.sync_model import waiting_for
    from backends.simulated import SimClock, SimulatedBackend

    b = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual())
    m = b.probe()
    names, wait = waiting_for(m, "md126", ["sdb1", "sdc1", "sdd1"])
    md127 = m.array("md127")
    assert md127 is not None and md127.sync is not None
    assert names == ("md127",) and wait == md127.sync.eta_s
    assert waiting_for(m, "md127", ["sda2", "sdb2"]) == ((), None)  # not itself
    f = forecast_sync(
        array="md126", level="raid1", raid_disks=2, layout=None, action="resync",
        members=FOUR[:2], waits_for=names, wait_s=wait,
    )  # fmt: skip
    assert f.to_json()["waits_for"] == ["md127"] and f.to_json()["wait_s"] == wait


def test_members_rated_speed_is_the_slowest_disks_kind() -> None:
    from app.model.sync_model import RATED_KIB_S, members_rated_kib_s
    from backends.simulated import SimClock, SimulatedBackend

    evo = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual()).probe()
    assert members_rated_kib_s(evo, ["md127"]) == RATED_KIB_S["ssd"]  # four SATA 850 EVO
    assert members_rated_kib_s(evo, ["sda2", "sdb2"]) == RATED_KIB_S["ssd"]
    wd = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual()).probe()
    assert members_rated_kib_s(wd, ["md0"]) == RATED_KIB_S["hdd"]
    assert members_rated_kib_s(wd, []) is None


def test_an_imsm_raid5_volume_starts_whole_and_resyncs_no_member_rebuilt() -> None:
    """mdadm Create.c Create(): the degraded-create trick (last slot moved to the spares) is
    taken only ``if (st->ss->external == 0 && ...)``; an IMSM RAID-5 volume starts whole and md
    resyncs it (VM, issue 43: 46–54 kB written per member, no member rebuilt)."""
    kw = dict(array="md126", level="raid5", raid_disks=4, layout=None, members=FOUR)
    native = forecast_sync(action="resync", initial=True, **kw)  # type: ignore[arg-type]
    imsm = forecast_sync(
        action="resync",
        initial=True,
        external_metadata=True,
        content="zero",
        **kw,  # type: ignore[arg-type]
    )
    assert native.action == "recover" and written(native, "nvme3n1") == (M, M)
    assert imsm.action == "resync" and "last member" not in imsm.why
    assert all((m.bytes_low, m.bytes_high) == (0, 0) for m in imsm.members)
    # parity already right where the disks read zeroes: the measured tens of kB, not 256 MiB
    unknown = forecast_sync(action="resync", initial=True, external_metadata=True, **kw)  # type: ignore[arg-type]
    assert all(m.bytes_low == 0 for m in unknown.members)


def test_an_unknown_limit_leaves_the_slow_end_open_not_an_exact_tenth_of_a_second() -> None:
    """Issue 43: with md's limit unknown, a recovery of a 256 MiB NVMe member forecast at the
    rated 2,000,000 KiB/s (RATED_KIB_S, an interface maximum) read "about 0.13 s" — exact-looking,
    while the kernel's speed_limit_max (md.c speed_max(), 200,000 by default) may hold it ten
    times slower. The rated speed only bounds it: a floor, the slow end unknown."""
    from app.model.sync_model import RATED_KIB_S
    from app.plans.outcome.consequence_types import sync_line

    f = r10("recover", targets=("nvme1n1",), member_speed_kib_s=RATED_KIB_S["nvme"])
    assert f.duration_s_low == pytest.approx(M / 1024 / 2_000_000)  # 0.131 s
    assert f.duration_s_high is None
    assert "at least 0.1s" in sync_line(f) and "about" not in sync_line(f)
    # with the limit known and the members faster than it, md's limit holds it: exact
    g = r10("recover", targets=("nvme1n1",), member_speed_kib_s=2_000_000, limit_kib_s=(1000, 4000))
    assert g.duration_s_high == g.duration_s_low
