"""A re-add's forecast where the array has a write-intent bitmap (issue 22, item 1): the chunks
its bitmap holds dirty (``mdadm -X`` on an in-sync member: dirty bits × chunk), not a range
from nothing to the whole member; without a bitmap, a full recovery. On the simulator, which
answers ``mdadm -X`` from its own model (backends/simulated/bitmap.py), the plan's forecast and
what the re-add then wrote agree within one bitmap chunk."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import app.commands.apply as apply_cmd
import app.commands.plan as plan_cmd
from app.cli import main
from app.monitor import WearMonitor
from app.plans.outcome.bitmap_dirty import read_bitmap_dirty
from app.plans.plan import Plan, Step
from app.plans.render import current_consequences
from app.wear.report import syncs_json
from app.wear.snapshots import SnapshotStore
from backends.base import CommandResult
from backends.simulated import SimClock, SimulatedBackend
from backends.simulated.bitmap import BITMAP_CHUNK_KIB
from tests.parsers.test_mdadm_bitmap import SAMPLE  # 64 bits of 4 MiB, 5 dirty
from tests.plans.fakes import FakeBackend, array_machine
from tests.wear.test_forecast import finish

MIB = 1 << 20
RE_ADD = Plan(
    "re-add nvme2n1",
    (Step.decode(("mdadm", "/dev/md127", "--re-add", "/dev/nvme2n1"), "re-add"),),
    target="nvme2n1",
    kind="member-re-add",
    params={"array": "md127", "device": "nvme2n1"},
)


def _answer_x(be: FakeBackend) -> None:
    def r(argv: tuple[str, ...], stdin: str | None) -> CommandResult | None:
        if argv[:2] == ("mdadm", "-X"):
            return CommandResult(argv, 0, SAMPLE, "")
        return None

    be.responders.append(r)


def test_a_raid10_re_add_writes_the_dirty_chunks_share_of_the_member() -> None:
    """20 MiB of the array dirty (5 × 4 MiB); RAID-10's bitmap counts array sectors, of which
    each member of an n2 × 4 holds half: 10 MiB to the re-added member."""
    machine = array_machine(bitmap="internal", degraded_member="nvme2n1")
    be = FakeBackend(machine)
    _answer_x(be)
    assert read_bitmap_dirty(RE_ADD, machine, be) == {"md127": 20 * MIB}
    # asked of an in-sync member, never of the member being re-added (its bitmap is stale)
    (asked,) = [a for a in be.argvs if a[:2] == ("mdadm", "-X")]
    assert asked[2] != "/dev/nvme2n1"
    plan = current_consequences(RE_ADD, machine, be)
    assert plan.consequences is not None
    (fc,) = plan.consequences.syncs
    (w,) = [m for m in fc.members if m.device == "nvme2n1"]
    assert (w.bytes_low, w.bytes_high) == (10 * MIB, 10 * MIB)
    assert "bitmap marks dirty" in fc.why


def test_unreadable_bitmap_keeps_the_range_and_no_bitmap_is_a_full_recovery() -> None:
    machine = array_machine(bitmap="internal", degraded_member="nvme2n1")
    be = FakeBackend(machine)
    be.fail_when("mdadm", 1, "mdadm: invalid bitmap magic")
    plan = current_consequences(RE_ADD, machine, be)
    assert plan.consequences is not None and plan.consequences.confirm == "yes"
    (fc,) = plan.consequences.syncs
    (w,) = [m for m in fc.members if m.device == "nvme2n1"]
    assert w.bytes_low == 0 and w.bytes_high == w.member_bytes
    # without a bitmap md rebuilds the whole member; nothing is asked
    bare = array_machine(degraded_member="nvme2n1")
    be2 = FakeBackend(bare)
    add = Plan(
        "add nvme2n1",
        (Step.decode(("mdadm", "/dev/md127", "--add", "/dev/nvme2n1"), "add"),),
        target="nvme2n1",
        kind="member-add",
        params={"array": "md127", "device": "nvme2n1"},
    )
    plan = current_consequences(add, bare, be2)
    assert plan.consequences is not None
    (fc,) = plan.consequences.syncs
    (w,) = [m for m in fc.members if m.device == "nvme2n1"]
    assert w.bytes_low == w.bytes_high == w.member_bytes
    assert not [a for a in be2.argvs if a[:2] == ("mdadm", "-X")]


def test_simulated_re_add_forecast_and_record_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A RAID-10 n2 × 4 with an internal bitmap, nvme2n1 out for an hour: the plan's forecast
    (from the simulator's ``mdadm -X``) is what the recorded re-add wrote, within one chunk, and
    far below the member's size; the record keeps the plan's forecast."""
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("blank", clock=clock)
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(state))
    monkeypatch.setattr(plan_cmd, "make_backend", lambda args: backend)
    monkeypatch.setattr(apply_cmd, "make_backend", lambda args: backend)
    disks = [f"/dev/nvme{i}n1" for i in range(4)]
    create = ["mdadm", "--create", "/dev/md127", "--level=10", "--raid-devices=4", "--layout=n2"]
    r = backend.run([*create, "--bitmap=internal", "--assume-clean", "--run", *disks])
    assert r.ok, r.stderr
    store = SnapshotStore.open(state / "state.db")
    mon = WearMonitor(backend, store, interval_s=3600)
    mon.tick()
    x = backend.run(["mdadm", "-X", "/dev/nvme0n1"])
    assert x.ok and ", 0 dirty" in x.stdout  # nothing written while every member is in
    for op in ("--fail", "--remove"):
        assert backend.run(["mdadm", "/dev/md127", op, "/dev/nvme2n1"]).ok
    clock.advance(3600)
    mon.tick()
    out = tmp_path / "re-add.json"
    args = ["plan", "member", "re-add", "--array", "md127", "--device", "nvme2n1"]
    assert main([*args, "--json", "--out", str(out)]) == 0
    capsys.readouterr()
    saved = json.loads(out.read_text())
    (sync,) = saved["consequences"]["syncs"]
    (w,) = [m for m in sync["members"] if m["device"] == "nvme2n1"]
    forecast = w["bytes_written_high"]
    assert w["bytes_written_low"] == forecast  # one figure, not a range
    assert forecast <= 0.1 * w["member_bytes"]
    assert main(["apply", str(out), "--yes"]) == 0, capsys.readouterr()
    finish(backend, clock, mon, "md127")
    (js,) = syncs_json(store, "md127")
    assert js["forecast"]["source"] == "plan"
    (rec,) = [m for m in js["members"] if m["device"] == "nvme2n1"]
    wrote = rec["kernel_bytes_written"]
    assert wrote > 0 and abs(forecast - wrote) <= BITMAP_CHUNK_KIB * 1024


def test_a_member_of_an_array_made_with_size_is_rebuilt_to_the_arrays_component_size() -> None:
    """md/dev-*/size is what the device offers; md rebuilds the component (the array's size
    over its copies). VM: --size=131072 on 255 MiB members, a re-add without a bitmap wrote
    128 MiB (tests/vm/test_readd_forecast.py)."""
    machine = array_machine(degraded_member="nvme2n1")
    a = machine.array("md127")
    assert a is not None
    small = replace(a, size_bytes=256 * MIB)  # RAID-10 n2 x 4: 128 MiB per member
    machine = replace(machine, arrays=tuple(small if x is a else x for x in machine.arrays))
    add = Plan(
        "add nvme2n1",
        (Step.decode(("mdadm", "/dev/md127", "--add", "/dev/nvme2n1"), "add"),),
        target="nvme2n1",
        kind="member-add",
        params={"array": "md127", "device": "nvme2n1"},
    )
    plan = current_consequences(add, machine, FakeBackend(machine))
    assert plan.consequences is not None
    (fc,) = plan.consequences.syncs
    (w,) = [m for m in fc.members if m.device == "nvme2n1"]
    assert w.bytes_low == w.bytes_high == w.member_bytes == 128 * MIB
