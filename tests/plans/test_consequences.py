"""Consequences of plans (issue 22 items 2 and 3): redundancy now/during/after and the members
whose next failure loses the array, derived from the level's layout; typed confirmation where
redundancy drops; refusals the model calls for (a fail that stops the array, a re-add of a
member being rebuilt); and the syncs a plan starts, from the sync model."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.cli import main
from app.model import Machine, MdArray, MdMember, levels
from app.plans.builders.members import build_fail, build_re_add, build_remove
from app.plans.builders.sync_actions import build_sync_action
from app.plans.geometry import PlanError
from app.plans.outcome.consequences import consequences_of, limits_from_texts
from app.plans.plan import Plan, Step, load_plan_file
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock
from tests.plans.fakes import array_machine


def _raid6_wd() -> Machine:
    """The simulated raid6-wd: md0 RAID-6 of 5, sdb1 faulty, sdf1 rebuilding in slot 0."""
    return SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual()).probe()


def _degraded_raid6_x4() -> Machine:
    """A RAID-6 of 4 with one member failed and nothing rebuilding (the issue's VM case)."""
    m = _raid6_wd()
    a = m.array("md0")
    assert a is not None
    members = (
        MdMember("sda1", 0, ("in_sync",), size_kib=a.members[1].size_kib),
        MdMember("sdc1", 1, ("in_sync",), size_kib=a.members[1].size_kib),
        MdMember("sdd1", 2, ("in_sync",), size_kib=a.members[1].size_kib),
        MdMember("sdb1", None, ("faulty",), size_kib=a.members[1].size_kib),
    )
    arr = replace(a, raid_disks=4, degraded=1, members=members, sync=None)
    return replace(m, arrays=(arr,))


# ---- the level model ---------------------------------------------------------------------------


def test_raid10_copy_sets_follow_the_layout_by_slot() -> None:
    """raid10.c __raid10_find_phys: near copies on consecutive slots, far copies near slots on."""
    assert levels.raid10_copy_sets(4, "n2") == (frozenset({0, 1}), frozenset({2, 3}))
    assert set(levels.raid10_copy_sets(3, "n2")) == {
        frozenset({0, 1}),
        frozenset({0, 2}),
        frozenset({1, 2}),
    }
    assert set(levels.raid10_copy_sets(4, "f2")) == {
        frozenset({0, 1}),
        frozenset({1, 2}),
        frozenset({2, 3}),
        frozenset({0, 3}),
    }


def test_failures_left_and_lost_if_per_level() -> None:
    # RAID-10 n2 x4 missing slot 0: slot 1 is the only copy of its pair; slots 2, 3 still pair
    assert levels.failures_left("raid10", 4, "n2", {1, 2, 3}) == 0
    assert levels.lost_if("raid10", 4, "n2", {1: "b", 2: "c", 3: "d"}) == ("b",)
    # losing one of each pair is survived; two of one pair is not
    assert levels.failures_left("raid10", 4, "n2", {1, 3}) == 0
    assert levels.failures_left("raid10", 4, "n2", {2, 3}) == -1
    # RAID-1: the last mirror
    assert levels.lost_if("raid1", 3, None, {2: "c"}) == ("c",)
    assert levels.lost_if("raid1", 3, None, {1: "b", 2: "c"}) == ()
    # RAID-6 by count
    assert levels.failures_left("raid6", 4, None, {0, 1, 2}) == 1
    assert levels.lost_if("raid6", 4, None, {0: "a", 1: "b"}) == ("a", "b")
    assert levels.failures_left("raid5", 4, None, {0, 1}) == -1


# ---- the Done-when on a degraded RAID-6 ----------------------------------------------


def test_degraded_raid6_second_fail_is_typed_with_nothing_left_after() -> None:
    plan = build_fail(_degraded_raid6_x4(), "md0", "sda1")
    c = plan.consequences
    assert c is not None and c.confirm == "typed" and plan.needs_typed
    (r,) = c.redundancy
    assert (r.array, r.now, r.during, r.after) == ("md0", 1, 0, 0)
    assert r.lost_if == ("sdc1", "sdd1")
    assert plan.target == "md0"
    assert "md0 survives no further failure: sdc1, sdd1" in "\n".join(c.lines())


def test_degraded_raid6_third_fail_is_refused() -> None:
    m = _degraded_raid6_x4()
    a = m.array("md0")
    assert a is not None
    members = tuple(
        replace(x, state=("faulty",), slot=None) if x.device == "sda1" else x for x in a.members
    )
    m2 = replace(m, arrays=(replace(a, members=members, degraded=2),))
    with pytest.raises(PlanError, match="failing sdc1 would stop md0"):
        build_fail(m2, "md0", "sdc1")


def test_raid6_wd_fail_with_a_rebuild_running() -> None:
    """sdf1 rebuilds: failing sda1 leaves no redundancy until the rebuild ends, then one."""
    plan = build_fail(_raid6_wd(), "md0", "sda1")
    c = plan.consequences
    assert c is not None and c.confirm == "typed"
    (r,) = c.redundancy
    assert (r.now, r.during, r.after) == (1, 0, 1)
    assert set(r.lost_if) == {"sdc1", "sdd1", "sde1"}  # sdf1 is not in sync yet
    (sync,) = c.syncs
    assert sync.action == "recover"
    written = {w.device: w.bytes_high for w in sync.members if w.bytes_high}
    assert list(written) == ["sdf1"]


def test_re_add_of_a_rebuilding_member_is_refused_with_the_reason() -> None:
    with pytest.raises(PlanError) as e:
        build_re_add(_raid6_wd(), "md0", "sdf1")
    msg = str(e.value)
    assert "being rebuilt" in msg and "nothing to re-add" in msg
    assert "wait for the rebuild" in msg and "replace" in msg


def test_raid10_fail_of_a_partner_is_refused_the_other_pair_is_typed() -> None:
    m = array_machine(degraded_member="nvme0n1")  # RAID-10 n2 x4 without slot 0
    with pytest.raises(PlanError, match="failing nvme1n1 would stop md127"):
        build_fail(m, "md127", "nvme1n1")
    plan = build_fail(m, "md127", "nvme2n1")  # slot 2: its pair (3) still holds the data
    c = plan.consequences
    assert c is not None and c.confirm == "typed"
    (r,) = c.redundancy
    assert (r.now, r.during, r.after) == (0, 0, 0)
    assert r.lost_if == ("nvme1n1", "nvme3n1")


def test_remove_of_a_faulty_member_and_a_check_are_not_typed() -> None:
    m = _degraded_raid6_x4()
    plan = build_remove(m, "md0", "sdb1")
    assert plan.consequences is not None and plan.consequences.confirm == "yes"
    assert not plan.needs_typed
    chk = build_sync_action(array_machine(), "md127", "check")
    assert chk.consequences is not None and chk.consequences.confirm == "yes"
    (s,) = chk.consequences.syncs
    assert s.action == "check" and all(w.bytes_high == 0 for w in s.members)


def test_limits_in_force_drive_the_duration_and_a_limit_step_changes_them() -> None:
    m = array_machine()
    plan = build_sync_action(m, "md127", "check")
    lim = limits_from_texts("1000\n", "200000\n", {"md127": ("1000 (system)", "100000 (local)")})
    c = consequences_of(plan, m, lim)
    assert c.syncs[0].speed_kib_s is not None and c.syncs[0].speed_why == "the array's own limit"
    # the same check after a step raising the array's own max runs at the new limit
    up = Plan(
        "t",
        (
            Step.decode(("tee", "/sys/block/md127/md/sync_speed_max"), "w", stdin="400000\n"),
            *plan.steps,
        ),
    )
    c2 = consequences_of(up, m, lim)
    assert c2.syncs[0].speed_kib_s is not None
    assert c2.syncs[0].speed_kib_s > 3.9 * c.syncs[0].speed_kib_s


# ---- CLI and apply ---------------------------------------------------------------------------


def test_cli_plan_json_carries_the_consequences(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "member", "fail", "--array", "md0", "--device", "sda1", "--demo", "raid6-wd"]
    assert main([*args, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    c = d["consequences"]
    assert c["confirm"] == "typed"
    assert c["redundancy"][0] == {
        "array": "md0",
        "now": 1,
        "during": 0,
        "after": 1,
        "lost_if": ["sde1", "sdd1", "sdc1"],
    }
    sync = c["syncs"][0]
    assert {
        "array",
        "action",
        "speed_kib_s",
        "duration_s_low",
        "duration_s_high",
        "members",
    } <= set(sync)
    assert main(args) == 0
    text = capsys.readouterr().out
    first = text.splitlines()[1]
    assert (
        first.startswith("consequences: md0 recover:") and "to sdf1 = 0.9 × its size" in first
    )  # 8.2 % done
    assert "until then md0 survives no further failure: sde1, sdd1, sdc1" in text
    assert "type the target's name: md0" in text


def test_cli_re_add_of_the_rebuilding_member_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "member", "re-add", "--array", "md0", "--device", "sdf1", "--demo", "raid6-wd"]
    assert main(args) == 3
    err = capsys.readouterr().err
    assert "being rebuilt" in err and "--re-add" not in err


def test_apply_never_takes_confirm_from_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plan file saying 'confirm: yes' (or nothing) for a fail that leaves md0 without
    redundancy still needs the typed name: apply recomputes the consequences on the machine."""
    out = tmp_path / "fail.json"
    args = ["plan", "member", "fail", "--array", "md0", "--device", "sda1", "--demo", "raid6-wd"]
    assert main([*args, "--out", str(out)]) == 0
    d = json.loads(out.read_text())
    d["consequences"] = {"syncs": [], "redundancy": [], "confirm": "yes"}
    out.write_text(json.dumps(d))
    plan, _ = load_plan_file(out)
    assert plan.consequences is None  # never read from the file
    capsys.readouterr()
    assert main(["apply", str(out), "--yes", "--demo", "raid6-wd"]) == 3
    err = capsys.readouterr().err
    assert "pass --confirm md0" in err
    assert main(["apply", str(out), "--confirm", "md0", "--demo", "raid6-wd"]) == 0


def test_md_array_fixture_shapes() -> None:
    """The degraded RAID-6 x4 fixture is what the test names claim."""
    a = _degraded_raid6_x4().array("md0")
    assert isinstance(a, MdArray) and a.raid_disks == 4 and a.degraded == 1
    assert levels.failures_left("raid6", 4, None, {0, 1, 2}) == 1


def test_boost_plan_forecasts_the_running_sync_at_the_raised_limits() -> None:
    """Boost (sysctl dev.raid.speed_limit_* and the array's own limits) changes no redundancy
    and needs no typed name; the running sync's forecast uses the limits the plan sets."""
    from app.plans.render import read_limits
    from app.sync.boost import BoostStore, plan_boost_for

    be = SimulatedBackend.from_scenario("raid5-cable", clock=SimClock.manual())
    m = be.probe()
    a = m.array("md127")
    assert a is not None and a.sync is not None
    lim = read_limits(be, m)
    base = consequences_of(Plan("nothing", ()), m, lim)
    assert base.syncs == ()
    plan, _ = plan_boost_for(m, be.read_text, a, BoostStore(Path("/nonexistent-boost-store")))
    c = consequences_of(plan, m, lim)
    assert c.confirm == "yes"
    (r,) = c.redundancy
    assert (r.now, r.during, r.after) == (0, 0, 1)  # sdd1 rebuilds: no redundancy until then
    (s,) = c.syncs
    assert s.array == "md127" and s.action == "recover" and s.speed_kib_s
    before = a.sync.speed_kib_s or 0
    assert s.speed_kib_s >= before  # never slower than it runs now
    # the sync runs near md's max (186,547 of 200,000 KiB/s): the limit holds it, so the
    # boosted forecast is what the members are rated to do (SATA SSDs), well above it
    assert s.speed_why == "the members' speed" and s.speed_kib_s > 2 * before
    assert s.duration_s_low is not None and s.duration_s_low == s.duration_s_high


def test_consequences_that_cannot_be_worked_out_ask_for_the_typed_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import app.plans.render as render

    def boom(*_a: object, **_k: object) -> None:
        raise ValueError("odd machine")

    plan = build_sync_action(array_machine(), "md127", "check")
    assert not plan.needs_typed
    monkeypatch.setattr(render, "with_consequences", boom)
    again = render.current_consequences(plan, array_machine(), None)
    assert again.needs_typed and again.steps == plan.steps
