"""`plan lv-sync` and `plan lv-repair` (app/plans/builders/lv_raid.py) on the VM's captures:
the typed step, its consequences through the one sync model, and the repair's PV-space rule
(Cockpit's LV Repair: enough free space on PVs that hold no surviving image, else refused with
the numbers)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.plans import ops
from app.plans.builders.lv_raid import build_lv_repair, build_lv_sync
from app.plans.geometry import PlanError
from app.plans.guards.allowlist import plan_step_problems
from app.plans.outcome.consequence_types import Limits
from app.plans.outcome.consequences import with_consequences
from app.plans.plan import Step
from tests.lvm_raid_machine import raid_machine


def test_lv_sync_check_is_lvchange_with_its_consequences() -> None:
    m = raid_machine("e_r1_checked")
    plan = build_lv_sync(m, "vgr/r1", "check")
    (step,) = plan.steps
    assert step.argv == ("lvchange", "--syncaction", "check", "vgr/r1")
    assert step.op == ops.LvSyncAction("vgr", "r1", "check")
    assert plan.kind == "lv-sync" and plan_step_problems(plan) == []
    c = plan.consequences
    assert c is not None and c.confirm == "yes" and c.lost == ()
    (sync,) = c.syncs
    assert (sync.array, sync.action) == ("vgr/r1", "check")
    assert sync.progress_sectors == 131072  # dm-raid's total: one 64 MiB image
    assert [(w.device, w.bytes_high) for w in sync.members] == [("nvme0n1", 0), ("nvme1n1", 0)]
    (red,) = c.redundancy
    assert (red.array, red.now, red.during, red.after) == ("vgr/r1", 1, 1, 1)
    assert any("writes nothing (reads only)" in line for line in c.lines())
    assert Step.decode(step.argv, step.why).op == step.op


def test_the_lvs_own_max_rate_or_md_s_min_sets_the_forecast() -> None:
    m = raid_machine("e_r1_checked")
    r1 = next(lv for lv in m.lvs if lv.name == "r1")
    assert r1.raid is not None
    slow = replace(r1, raid=replace(r1.raid, max_rate_kib_s=256))
    m2 = replace(m, lvs=tuple(slow if lv is r1 else lv for lv in m.lvs))
    plan = build_lv_sync(m2, "vgr/r1", "check")
    (sync,) = with_consequences(plan, m2, Limits((100, 200000))).consequences.syncs  # type: ignore[union-attr]
    assert sync.speed_why == "the LV's --maxrecoveryrate" and sync.limit_kib_s == 256
    (sync,) = with_consequences(plan, m2, Limits((1000, 200000))).consequences.syncs  # type: ignore[union-attr]
    # md throttles only above its min (md.c md_do_sync): the VM's 256K LV synced at ~1.6 MiB/s
    assert sync.speed_why == "md's min, above the LV's --maxrecoveryrate"
    assert sync.limit_kib_s == 1000


@pytest.mark.parametrize(
    ("look", "lv", "words"),
    [
        ("a_r1_syncing", "vgr/r1", "is running a resync: md refuses a check until it ends"),
        ("f_pv_lost", "vgr/r1", "has a failed image (1): a check cannot compare what is lost"),
        ("e_r1_checked", "vgr/r9", "no logical volume vgr/r9 on this machine"),
        ("e_r1_checked", "vgr/r1_rimage_0", "is a linear LV, not a RAID LV"),
        ("e_r1_checked", "vgr", "'vgr' is not VG/LV"),
    ],
)
def test_lv_sync_is_refused_with_the_reason(look: str, lv: str, words: str) -> None:
    with pytest.raises(PlanError) as e:
        build_lv_sync(raid_machine(look), lv, "check")
    assert words in str(e.value)


def test_lv_repair_goes_to_pvs_holding_no_surviving_image() -> None:
    m = raid_machine("f_pv_lost", lost="nvme1n1")
    plan = build_lv_repair(m, "vgr/r1")
    (step,) = plan.steps
    assert step.argv == ("lvconvert", "--yes", "--repair", "vgr/r1")
    c = plan.consequences
    assert c is not None
    (red,) = c.redundancy
    # raid1 with one image lost: no further failure now, one after the repair
    assert (red.now, red.during, red.after, red.lost_if) == (0, 0, 1, ("nvme0n1",))
    (sync,) = c.syncs
    assert sync.action == "recover"
    assert [(w.device, w.bytes_high) for w in sync.members] == [
        ("image 1's new PV (free space in vgr)", 64 * 1024 * 1024)
    ]
    named = build_lv_repair(m, "vgr/r1", ["nvme2n1"])
    assert named.steps[0].argv == ("lvconvert", "--yes", "--repair", "vgr/r1", "/dev/nvme2n1")


def test_lv_repair_without_room_is_refused_with_the_numbers() -> None:
    m = raid_machine("f_pv_lost", lost="nvme1n1")
    # only nvme0n1 (holding the surviving image 0) has free space
    m = replace(
        m, pvs=tuple(pv if pv.device == "nvme0n1" else replace(pv, free_bytes=0) for pv in m.pvs)
    )
    with pytest.raises(PlanError) as e:
        build_lv_repair(m, "vgr/r1")
    assert str(e.value) == (
        "vgr/r1: repairing 1 failed image needs 68.0 MiB free on PVs that hold no surviving "
        "image of it; there is none — add a PV to the VG (vgextend) first"
    )
    with pytest.raises(PlanError, match="nvme0n1 holds a surviving image of vgr/r1"):
        build_lv_repair(raid_machine("f_pv_lost", lost="nvme1n1"), "vgr/r1", ["nvme0n1"])
    small = replace(
        m, pvs=tuple(replace(pv, free_bytes=32 * 1024 * 1024) if pv.device == "nvme3n1" else pv
                     for pv in m.pvs),
    )  # fmt: skip
    with pytest.raises(PlanError, match=r"there is only 32.0 MiB \(nvme3n1 32.0 MiB\)"):
        build_lv_repair(small, "vgr/r1")


def test_nothing_to_repair_on_a_healthy_lv() -> None:
    with pytest.raises(PlanError, match="every image is there and alive"):
        build_lv_repair(raid_machine("g_after_repair"), "vgr/r1")
