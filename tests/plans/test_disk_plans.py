"""Issue 40: the disk plans — qualify, locate, retire, a SMART self-test that can start — as
``raidman plan`` and the TUI make them (``app.plans.disk_plans``), on the simulated scenarios."""

from __future__ import annotations

from itertools import pairwise

import pytest

from app.backend import CommandResult
from app.model.smart import SmartReading
from app.plans import ops
from app.plans.builders.qualify import zone_spans
from app.plans.disk_plans import locate_plan, qualify_plan, retire_plan, smart_test_plan
from app.plans.geometry import PlanError
from app.plans.guards.allowlist import plan_step_problems
from app.plans.guards.identity import identity_problems, record_disks
from app.plans.guards.plan_devices import plan_problems
from app.plans.ops.disk_tests import MIB
from app.plans.render import confirmation_matches, format_plan, preflight_for
from backends.simulated import SimClock, SimulatedBackend
from tests.plans.fakes import FakeBackend, blank_machine


def sim(name: str) -> SimulatedBackend:
    return SimulatedBackend.from_scenario(name, clock=SimClock.manual())


@pytest.fixture(autouse=True)
def _state(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "state"))


def test_qualify_on_blank_nvme_has_self_tests_a_surface_pass_and_a_forecast() -> None:
    be = sim("blank")
    m = be.probe()
    plan = qualify_plan(m, be, "nvme0n1")
    ops_ = [s.op for s in plan.steps]
    assert isinstance(ops_[0], ops.SmartReport) and isinstance(ops_[-1], ops.SmartReport)
    assert [o.test for o in ops_ if isinstance(o, ops.NvmeSelfTest)] == ["short", "long"]
    zones = [o for o in ops_ if isinstance(o, ops.SurfaceTest)]
    assert len(zones) == 10
    # the zones cover the disk in whole MiB, end to end, without overlap
    assert zones[0].offset == 0
    assert all(a.offset + a.size == b.offset for a, b in pairwise(zones))
    size = m.disk("nvme0n1").size_bytes  # type: ignore[union-attr]
    assert zones[-1].offset + zones[-1].size == size // MIB * MIB
    forecast = plan.notes[0]
    assert forecast.startswith("forecast: about ") and "writes 931.5 GiB" in forecast
    assert "of its rated 600 TBW" in forecast  # the SSD's endurance share
    assert plan.params["bytes_written"] == size // MIB * MIB
    assert any(n.startswith("extended self-test: about") for n in plan.notes)
    assert any("why fio and not badblocks -w" in n for n in plan.notes)
    assert plan_step_problems(plan) == [] and plan_problems(plan, m) == []
    recorded = record_disks(plan, m)
    assert recorded.disks is not None and [d.serial for d in recorded.disks] == ["S4EWNX0R512300K"]
    assert preflight_for(recorded, m, be).refusals == ()


@pytest.mark.parametrize(
    ("scenario", "disk", "why"),
    [
        ("raid6-wd", "sda", "sda1 is a member of the md array md0"),
        (
            "retire",
            "sdc",
            "only carrier of array oldhost:backup",
        ),  # a stray superblock: data that looks free
        ("raid10-evo", "sda", "is a member of the md array md127"),
    ],
)
def test_qualify_is_refused_on_a_disk_in_use(scenario: str, disk: str, why: str) -> None:
    be = sim(scenario)
    with pytest.raises(PlanError) as e:
        qualify_plan(be.probe(), be, disk)
    assert "in use" in str(e.value) and why in str(e.value)


def test_qualify_refuses_a_partition_and_a_disk_without_identity() -> None:
    be = sim("raid6-wd")
    with pytest.raises(PlanError, match="qualify tests a whole disk"):
        qualify_plan(be.probe(), be, "sda1")
    fb = FakeBackend(blank_machine())  # the fakes' NVMe disks report no serial or WWN
    with pytest.raises(PlanError, match="neither serial nor WWN"):
        qualify_plan(fb.machine, fb, "nvme0n1")


def test_qualify_without_self_tests_or_smart_says_so_and_keeps_the_surface_pass() -> None:
    be = sim("blank")
    m = be.probe()
    be.state.disks["nvme1n1"].smart.available = False
    be.state.disks["nvme1n1"].smart.reason = "simulated: no SMART"
    plan = qualify_plan(m, be, "nvme1n1", zones=4)
    kinds = {s.op.KIND for s in plan.steps}
    assert kinds == {"surface-test"} and len(plan.steps) == 4
    assert any("SMART cannot be read" in n for n in plan.notes)


def test_locate_lights_the_enclosure_slot_and_off_clears_locate_and_fault() -> None:
    be = sim("raid6-wd")
    m = be.probe()
    plan = locate_plan(m, be, "sdb")
    assert "bay 1 of enclosure 0:0:6:0" in plan.title
    assert [s.argv for s in plan.steps] == [("tee", "/sys/class/enclosure/0:0:6:0/Slot 01/locate")]
    assert plan.steps[0].stdin == "1\n"
    off = locate_plan(m, be, "sdb1", off=True)  # a member's name finds its disk
    assert [(s.op.led, s.op.on) for s in off.steps] == [("locate", False), ("fault", False)]  # type: ignore[attr-defined]


def test_locate_without_enclosure_uses_ledctl_else_a_bounded_blink() -> None:
    be = sim("blank")
    m = be.probe()
    plan = locate_plan(m, be, "nvme2n1")
    (step,) = plan.steps
    assert isinstance(step.op, ops.LocateBlink) and step.op.seconds == 30
    assert "--readonly" in step.argv and "--time_based" in step.argv
    assert "no enclosure: blinking the activity LED for 30 s" in plan.title
    assert not plan.destructive and record_disks(plan, m).disks  # the disk's identity recorded
    with pytest.raises(PlanError, match="nothing to turn off"):
        locate_plan(m, be, "nvme2n1", off=True)
    be.state.ledctl = True
    plan = locate_plan(m, be, "nvme2n1")
    assert [s.argv for s in plan.steps] == [("ledctl", "locate=/dev/nvme2n1")]


def test_a_locate_blink_never_reaches_a_renamed_disk() -> None:
    be = sim("blank")
    m = be.probe()
    plan = record_disks(locate_plan(m, be, "nvme2n1"), m)
    be.state.disks["nvme2n1"].serial = "ANOTHER-DISK"
    be.state.touch()
    problems = identity_problems(plan, be.probe())
    assert problems and "another disk has that name now" in problems[0]


def test_retire_on_raid6_wd_removes_zeroes_wipes_and_types_the_serial() -> None:
    be = sim("raid6-wd")
    m = be.probe()
    plan = record_disks(retire_plan(m, be, "sdb"), m)
    assert [s.argv for s in plan.steps] == [
        ("mdadm", "/dev/md0", "--remove", "/dev/sdb1"),
        ("mdadm", "--zero-superblock", "/dev/sdb1"),
        ("wipefs", "-a", "/dev/sdb1"),
        ("wipefs", "-a", "/dev/sdb"),
    ]
    assert plan.needs_typed and plan.confirm_word == "WD-WCC4J4177919"
    assert confirmation_matches(plan, "WD-WCC4J4177919") and not confirmation_matches(plan, "sdb")
    assert "ERASES THE DISK — to confirm, type its serial: WD-WCC4J4177919" in format_plan(plan)
    # the faulty member is held by md0 until the plan's own --remove: pre-flight sees that
    assert preflight_for(plan, m, be).refusals == ()
    assert any("offered: --sanitize" in n and "hdparm" in n for n in plan.notes)
    assert any(n.startswith("once the rebuild has finished, check md0") for n in plan.notes)


def test_retire_refuses_an_active_member() -> None:
    be = sim("spare")
    with pytest.raises(PlanError, match=r"sdb1 is an active member of md0.*replace it first"):
        retire_plan(be.probe(), be, "sdb")


def test_retire_sanitize_by_transport() -> None:
    be = sim("raid6-wd")
    m = be.probe()
    plan = retire_plan(m, be, "sdb", sanitize=True)
    tail = [s.op.KIND for s in plan.steps][-3:]
    assert tail == ["hdparm-set-pass", "hdparm-erase", "hdparm-identify"]
    be.state.disks["sdb"].ata_frozen = True
    with pytest.raises(PlanError, match="security is frozen"):
        retire_plan(m, be, "sdb", sanitize=True)
    nv = sim("blank")
    plan = retire_plan(nv.probe(), nv, "nvme0n1", sanitize=True)
    assert [s.argv for s in plan.steps][-2:] == [
        ("nvme", "sanitize", "/dev/nvme0n1", "--sanact=4"),
        ("nvme", "sanitize-log", "/dev/nvme0n1", "--output-format=json"),
    ]
    nv.state.disks["nvme0n1"].nvme_sanicap = 0
    plan = retire_plan(nv.probe(), nv, "nvme0n1", sanitize=True)
    assert plan.steps[-1].argv == ("nvme", "format", "/dev/nvme0n1", "--ses=2", "--force")


def test_retire_takes_the_old_device_out_of_mdadm_conf_as_a_checked_edit() -> None:
    be = sim("spare")
    be.run(["mdadm", "/dev/md0", "--fail", "/dev/sdb1"])
    m = be.probe()
    plan = retire_plan(m, be, "sdb")
    assert isinstance(plan.steps[0].op, ops.RemoveMember)
    assert any(isinstance(s.op, ops.CompareFile) for s in plan.steps)
    new = next(s.op.text for s in plan.steps if isinstance(s.op, ops.WriteFile))
    assert "devices=/dev/sda1" in new and "/dev/sdb1" not in new
    assert isinstance(plan.steps[-1].op, ops.UpdateInitramfs)
    assert plan_step_problems(plan) == []
    # the guard takes only the old text less those paths: another change is refused
    bad = [
        s
        if not isinstance(s.op, ops.WriteFile)
        else type(s)(ops.WriteFile(s.op.path, s.op.text + "PROGRAM /tmp/x\n"), s.why)
        for s in plan.steps
    ]
    from dataclasses import replace

    problems = plan_step_problems(replace(plan, steps=tuple(bad)))
    assert problems and "less the device paths of a retired disk" in problems[0]


def test_smart_test_is_refused_when_nothing_can_start() -> None:
    be = sim("blank")
    be.state.disks["nvme3n1"].smart.available = False
    be.state.disks["nvme3n1"].smart.reason = "simulated: SMART unreadable"
    with pytest.raises(PlanError, match=r"SMART cannot be read .*no self-test can be started"):
        smart_test_plan(be.probe(), be, "nvme3n1", "short")
    fb = FakeBackend(blank_machine())
    fb.smart_readings["nvme0n1"] = SmartReading(device="nvme0n1", available=True, protocol="NVMe")

    def no_self_tests(argv: tuple[str, ...], stdin: str | None) -> CommandResult | None:
        if argv[:3] == ("smartctl", "-j", "-c"):
            doc = '{"nvme_optional_admin_commands": {"self_test": false}}'
            return CommandResult(argv, 0, doc, "")
        return None

    fb.responders.append(no_self_tests)
    with pytest.raises(PlanError, match="does not support SMART self-tests"):
        smart_test_plan(fb.machine, fb, "nvme0n1", "short")
    # a drive that can: planned
    plan = smart_test_plan(be.probe(), be, "nvme0n1", "long")
    assert plan.steps[0].argv == ("smartctl", "-t", "long", "/dev/nvme0n1")


def test_zone_spans_are_whole_mib_and_cover_what_is_whole() -> None:
    spans = zone_spans(10 * MIB + 4096, 3)
    assert spans == [(0, 3 * MIB), (3 * MIB, 3 * MIB), (6 * MIB, 4 * MIB)]
    assert zone_spans(MIB, 10) == [(0, MIB)]
    with pytest.raises(PlanError):
        zone_spans(4096, 1)


def test_a_small_disk_s_forecast_never_says_about_0s() -> None:
    """The VM's 256 MiB NVMe forecast "about 0s in all" at 1000 MB/s: a pass takes time."""
    be = sim("blank")
    be.state.disks["nvme0n1"].size_bytes = 256 * MIB
    be.state.touch()
    plan = qualify_plan(be.probe(), be, "nvme0n1", zones=2)
    assert not any("about 0s" in n for n in plan.notes), plan.notes
    assert any(n.startswith("surface pass: about 1s (write 256.0 MiB") for n in plan.notes)
