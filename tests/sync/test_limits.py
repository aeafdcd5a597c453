"""The Sync card's speed-limit facts, without a UI: md's limits bound the sync's *progress* rate,
the very figure sync_speed shows, for every level (md.c md_do_sync(): currspeed from io_sectors
against speed_min()/speed_max()). VM, issue 22: a 4-disk RAID-10 n2 resync held 4,401 KiB/s
under speed_limit_max 4,000. Seed 000 (/work/shared/seeds/000_d5848e1cef7805d7.txt: 4 SSDs in
RAID-10 n2) read 384214, 486124 and 525478 K/sec *after* ``echo 500000 > speed_limit_max``: the
last is held at that limit."""

from __future__ import annotations

from app.model.devices import MdArray
from app.sync.boost import BoostRecord
from app.sync.limits import sync_limits
from app.sync.tracker import SyncView


def view(action: str = "resync", speed: int | None = 384_214, hi: int | None = 200_000) -> SyncView:
    return SyncView(
        array="md127",
        action=action,
        done_sectors=1,
        total_sectors=10,
        speed_kib_s=speed,
        eta_s=60.0,
        elapsed_s=1.0,
        targets=(),
        speeds=(),
        min_speed_kib_s=1000,
        max_speed_kib_s=hi,
    )


def array(level: str = "raid10", n: int = 4, layout: str | None = "n2") -> MdArray:
    return MdArray(name="md127", level=level, raid_disks=n, layout=layout)


def boost() -> BoostRecord:
    return BoostRecord(
        "md127",
        "resync",
        0.0,
        previous={
            "sysctl:dev.raid.speed_limit_min": "1000",
            "sysctl:dev.raid.speed_limit_max": "200000",
        },
        applied={
            "sysctl:dev.raid.speed_limit_min": "200000",
            "sysctl:dev.raid.speed_limit_max": "500000",
        },
    )


def test_a_raid10_resync_is_compared_on_progress_not_per_member() -> None:
    """VM capture: 4401 KiB/s progress under a 4000 limit is at its ceiling (the old per-member
    reading halved it to 2.1 MiB/s against 3.9 MiB/s and offered no boost)."""
    lim = sync_limits(view(speed=4401, hi=4000), array(), None)
    assert lim.at_ceiling is True
    text = lim.limits_text()
    assert text == "limits 1000.0 KiB/s … 3.9 MiB/s; now 4.3 MiB/s"
    assert "per member" not in text
    assert "raising the limit (b: boost)" in lim.state_text()


def test_same_reading_on_raid1_and_raid10() -> None:
    """The level does not change what is compared: 150000 under 200000 is below the ceiling
    for both."""
    for lvl, n, layout in (("raid1", 2, None), ("raid10", 4, "n2")):
        lim = sync_limits(view(speed=150_000), array(lvl, n, layout), None)
        assert lim.at_ceiling is False
        assert lim.state_text() == ""
    # seed 000 before the raise read 384214 under the default 200000: never "below the limit"
    assert sync_limits(view(), array(), None).at_ceiling is True


def test_unknown_speed_or_limit_is_unknown_not_false() -> None:
    assert sync_limits(view(speed=None), array(), None).at_ceiling is None  # type: ignore[arg-type]
    lim = sync_limits(view(hi=None), array(), None)  # type: ignore[arg-type]
    assert lim.at_ceiling is None


def test_the_arrays_own_limit_is_named() -> None:
    a = MdArray(name="md127", level="raid10", raid_disks=4, layout="n2", speed_max_local=4000)
    lim = sync_limits(view(speed=4401, hi=4000), a, None)
    assert "3.9 MiB/s (md127's own)" in lim.limits_text()


def test_after_a_boost_the_card_says_boosted_not_raise_the_limit() -> None:
    # seed 000 on its way up after echo 500000: 384214 progress, well below 500000
    lim = sync_limits(view(speed=384_214, hi=500_000), array(), boost())
    assert lim.at_ceiling is False
    state = lim.state_text()
    assert "b: boost" not in state and "raising the limit" not in state
    assert state.startswith(
        "boosted (min 1000.0 KiB/s → 195.3 MiB/s, max 195.3 MiB/s → 488.3 MiB/s)"
    )
    assert "below its ceiling" in state
    assert "limits are restored when this resync of md127 ends" in state
    assert "limits 195.3 MiB/s" not in lim.limits_text()  # min in force is the view's 1000
    assert "… 488.3 MiB/s;" in lim.limits_text()


def test_boosted_and_still_held_back_says_so_without_offering_boost() -> None:
    # seed 000's 525478 under the raised 500000: held at the boosted ceiling
    lim = sync_limits(view(speed=525_478, hi=500_000), array(), boost())
    assert lim.at_ceiling
    assert "still at the boosted ceiling" in lim.state_text()
    assert "b: boost" not in lim.state_text()


def test_a_boost_record_of_another_sync_is_not_shown() -> None:
    lim = sync_limits(view(action="check"), array(), boost())
    assert lim.boost is None


def test_the_vm_capture_of_a_held_raid10_resync_is_at_its_ceiling() -> None:
    """tests/fixtures/vm/create-raid10-syncing: a 4-disk RAID-10 n2 resync captured at
    sync_speed 4401 under speed_limit_max 4000 "(system)". Issue 22: raidman showed it as
    "2.1 MiB/s per member" against "3.9 MiB/s" and offered no boost; md held it at the limit."""
    from pathlib import Path

    from app.sync.tracker import SyncTracker
    from backends.replay import ReplayBackend

    b = ReplayBackend(Path(__file__).parents[1] / "fixtures" / "vm" / "create-raid10-syncing")
    m = b.probe()
    tracker = SyncTracker()
    tracker.update(b.sample())
    (v,) = tracker.views()
    lim = sync_limits(v, m.array(v.array), None)
    assert (lim.progress_kib_s, lim.max_kib_s, lim.local) == (4401, 4000, False)
    assert lim.at_ceiling is True
    assert lim.limits_text() == "limits 1000.0 KiB/s … 3.9 MiB/s; now 4.3 MiB/s"
    assert "b: boost" in lim.state_text()


def test_a_raid_lvs_limits_say_whose_each_is() -> None:
    """An LV's --maxrecoveryrate may be below md's min, which then holds it (md.c md_do_sync
    throttles only above speed_min()): "1000 KiB/s … 256 KiB/s" read as a range running
    backwards (the LV Sync card, issue 42), so each limit is named."""
    from dataclasses import replace

    from app.model.devices import LogicalVolume
    from app.model.lvm_raid import RaidLv

    v = replace(view(speed=1035, hi=256), array="vgr/r1")
    lv = LogicalVolume("r1", "vgr", 1 << 30, "raid1", raid=RaidLv(max_rate_kib_s=256))
    lim = sync_limits(v, None, None, lv)
    assert lim.limits_text() == (
        "limits: md's min 1000.0 KiB/s, its --maxrecoveryrate 256.0 KiB/s; now 1.0 MiB/s"
    )
    own_min = replace(lv, raid=RaidLv(min_rate_kib_s=1000))
    lim = sync_limits(replace(v, max_speed_kib_s=None), None, None, own_min)
    assert lim.limits_text() == (
        "limits: its --minrecoveryrate 1000.0 KiB/s, md's max (no --maxrecoveryrate); now 1.0 MiB/s"
    )
