"""The Sync card's speed-limit facts, without a UI: md's limits are per member, sync_speed is the
progress of the sync position; a RAID-10 resync's progress counts array sectors (seed 000,
/work/shared/seeds/000_d5848e1cef7805d7.txt: 4 SSDs in RAID-10 n2, ``speed=384214K/sec`` under
``speed_limit_max`` 200000, 486124 and 525478 after ``echo 500000 > speed_limit_max``)."""

from __future__ import annotations

from app.model import levels
from app.model.devices import MdArray
from app.sync.boost import BoostRecord
from app.sync.limits import sync_limits
from app.sync.tracker import SyncView


def view(action: str = "resync", speed: int = 384_214, hi: int = 200_000) -> SyncView:
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


def test_progress_factor_comes_from_the_level_table() -> None:
    assert levels.progress_per_member("raid10", 4, "n2", "resync") == 2
    assert levels.progress_per_member("raid10", 4, "n2", "check") == 2
    assert levels.progress_per_member("raid10", 3, "n2", "resync") == 1.5
    assert levels.progress_per_member("raid10", 6, "n3", "repair") == 2
    assert levels.progress_per_member("raid10", 4, "n2", "recover") == 1  # member sectors
    assert levels.progress_per_member("raid1", 2, None, "resync") == 1
    assert levels.progress_per_member("raid6", 5, "left-symmetric", "resync") == 1
    assert levels.progress_per_member(None, None, None, "resync") == 1


def test_raid10_resync_compares_per_member_speed_with_the_per_member_limit() -> None:
    # seed 000 before the boost: 384214 progress = 192107 per member, 96 % of 200000: held back
    lim = sync_limits(view(), array(), None)
    assert lim.factor == 2
    assert lim.member_kib_s == 192_107
    assert lim.at_ceiling
    text = lim.limits_text()
    assert "limits 1000.0 KiB/s … 195.3 MiB/s per member" in text
    assert "now 187.6 MiB/s per member" in text
    assert "375.2 MiB/s progress ÷ 2" in text
    assert "RAID-10 n2 resync of 4 counts array sectors" in text
    assert "raising the limit (b: boost)" in lim.state_text()


def test_same_speed_on_raid1_is_not_doubled() -> None:
    lim = sync_limits(view(speed=150_000), array("raid1", 2, None), None)
    assert lim.factor == 1 and lim.member_kib_s == 150_000
    assert not lim.at_ceiling  # 150000 < 95 % of 200000
    assert "progress" not in lim.limits_text()
    assert lim.state_text() == ""


def test_after_a_boost_the_card_says_boosted_not_raise_the_limit() -> None:
    # seed 000 after echo 500000: 525478 progress = 262739 per member, far below 500000
    lim = sync_limits(view(speed=525_478, hi=500_000), array(), boost())
    assert not lim.at_ceiling
    state = lim.state_text()
    assert "b: boost" not in state and "raising the limit" not in state
    assert state.startswith(
        "boosted (min 1000.0 KiB/s → 195.3 MiB/s, max 195.3 MiB/s → 488.3 MiB/s)"
    )
    assert "below its ceiling" in state
    assert "limits are restored when this resync of md127 ends" in state
    assert "limits 195.3 MiB/s" not in lim.limits_text()  # min in force is the view's 1000
    assert "… 488.3 MiB/s per member" in lim.limits_text()


def test_boosted_and_still_held_back_says_so_without_offering_boost() -> None:
    lim = sync_limits(view(speed=990_000, hi=500_000), array(), boost())
    assert lim.at_ceiling
    assert "still at the boosted ceiling" in lim.state_text()
    assert "b: boost" not in lim.state_text()


def test_a_boost_record_of_another_sync_is_not_shown() -> None:
    lim = sync_limits(view(action="check"), array(), boost())
    assert lim.boost is None
