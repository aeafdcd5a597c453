"""`plan lv-sync limits` (lvchange --min/--maxrecoveryrate) and `plan lv-replace` (lvconvert
--replace) on the VM's captures (tests/lvm_raid_machine.py): the typed step, its decoding, and
the consequences from the one staged machine — the lvm2#184 trap (a rate changed while a check
runs ends the check) and a replace's redundancy during and after."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.model.lvm_raid import DmRaidStatus
from app.plans import ops
from app.plans.builders.lv_raid import build_lv_limits, build_lv_replace
from app.plans.geometry import PlanError
from app.plans.guards.allowlist import plan_step_problems
from app.plans.plan import Step
from tests.lvm_raid_machine import raid_machine


def _checking(fraction: float):  # type: ignore[no-untyped-def]
    """e_r1_checked with vgr/r1's check running at ``fraction``."""
    m = raid_machine("e_r1_checked")
    r1 = next(lv for lv in m.lvs if lv.name == "r1")
    assert r1.raid is not None and r1.raid.dm is not None
    dm: DmRaidStatus = replace(
        r1.raid.dm, sync_action="check", done_sectors=int(fraction * r1.raid.dm.total_sectors)
    )
    r1 = replace(r1, raid=replace(r1.raid, dm=dm, sync_action="check"))
    return replace(m, lvs=tuple(r1 if lv.name == "r1" else lv for lv in m.lvs))


def test_limits_is_lvchange_with_the_rates_and_decodes_back() -> None:
    plan = build_lv_limits(raid_machine("e_r1_checked"), "vgr/r1", max_kib_s=512)
    (step,) = plan.steps
    assert step.argv == ("lvchange", "--maxrecoveryrate", "512K", "vgr/r1")
    assert step.op == ops.LvRecoveryRate("vgr", "r1", None, 512)
    assert Step.decode(step.argv, step.why).op == step.op
    assert plan.kind == "lv-sync-limits" and plan_step_problems(plan) == []
    assert any("speed_limit_min" in n for n in plan.notes)  # no --min: md's own holds
    c = plan.consequences
    assert c is not None and c.stops == () and c.confirm == "yes"
    both = build_lv_limits(raid_machine("e_r1_checked"), "vgr/r1", 0, 0).steps[0].argv
    assert both == ("lvchange", "--minrecoveryrate", "0", "--maxrecoveryrate", "0", "vgr/r1")


def test_limits_during_a_check_names_the_trap() -> None:
    # lvm2 issue 184: changing --maxrecoveryrate while a scrub runs stops the scrub
    plan = build_lv_limits(_checking(0.25), "vgr/r1", max_kib_s=1024)
    c = plan.consequences
    assert c is not None
    (stop,) = c.stops
    assert (stop.array, stop.action, stop.fate) == ("vgr/r1", "check", "ended")
    assert stop.line.startswith("the check of vgr/r1 running now ends at 25.0%")
    assert "lvm2 issue 184" in stop.line and "plan lv-sync check --lv vgr/r1" in stop.line
    assert any("lvm2 issue 184" in line for line in c.lines())


@pytest.mark.parametrize(
    ("lo", "hi", "words"),
    [
        (None, None, "give --min, --max or both"),
        (2000, 1000, "--min 2000 KiB/s would be above --max 1000 KiB/s"),
        (-1, None, "--min -1: a rate in KiB/s"),
    ],
)
def test_limits_refused(lo: int | None, hi: int | None, words: str) -> None:
    with pytest.raises(PlanError, match=words):
        build_lv_limits(raid_machine("e_r1_checked"), "vgr/r1", lo, hi)


def test_replace_moves_an_image_with_redundancy_during_and_after() -> None:
    m = raid_machine("e_r1_checked")
    plan = build_lv_replace(m, "vgr/r1", "/dev/nvme1n1", ["nvme2n1"])
    (step,) = plan.steps
    assert step.argv == ("lvconvert", "--yes", "--replace", "/dev/nvme1n1", "vgr/r1",
                         "/dev/nvme2n1")  # fmt: skip
    assert Step.decode(step.argv, step.why).op == step.op
    assert plan.kind == "lv-replace" and plan_step_problems(plan) == []
    c = plan.consequences
    assert c is not None
    (red,) = c.redundancy
    # raid1 of two: the old image leaves first, the new one recovers from image 0 alone
    assert (red.now, red.during, red.after, red.lost_if) == (1, 0, 1, ("nvme0n1",))
    assert c.confirm == "typed" and c.at_risk == "vgr/r1"
    (sync,) = c.syncs
    assert sync.action == "recover"
    assert [(w.device, w.bytes_high) for w in sync.members] == [
        ("nvme0n1", 0),
        ("image 1's new PV (nvme2n1)", 64 * 1024 * 1024),
    ]


@pytest.mark.parametrize(
    ("look", "old", "to", "words"),
    [
        ("e_r1_checked", "nvme3n1", (), "nvme3n1 holds no image of vgr/r1"),
        ("e_r1_checked", "nvme1n1", ("nvme0n1",), "nvme0n1 already holds an image of vgr/r1"),
        ("a_r1_syncing", "nvme1n1", (), "is running a resync: lvm replaces an image only in sync"),
        ("f_pv_lost", "nvme0n1", (), "has a failed image: repair it first"),
    ],
)
def test_replace_refused(look: str, old: str, to: tuple[str, ...], words: str) -> None:
    lost = "nvme1n1" if look == "f_pv_lost" else None
    with pytest.raises(PlanError, match=words):
        build_lv_replace(raid_machine(look, lost=lost), "vgr/r1", old, to)


def test_replace_without_room_is_refused_with_the_numbers() -> None:
    m = raid_machine("e_r1_checked", free=0)
    with pytest.raises(PlanError) as e:
        build_lv_replace(m, "vgr/r1", "nvme1n1")
    assert str(e.value) == (
        "vgr/r1: a new image needs 68.0 MiB free on PVs that hold no image of it; there is "
        "none — add a PV to the VG (vgextend) first"
    )
