"""Issue 22's Done-when on a real kernel: a degraded RAID-6 x4 (one member failed): ``plan
member fail`` of a second member has confirm "typed" and redundancy after 0; of a third (after
the second really failed), refused; a re-add of the member md is rebuilding, refused with the
reason. The plans are made by ``raidman plan`` in the guest on the Linux backend."""

from __future__ import annotations

import json
import time

import pytest

from tests.vm.kernel import read_md
from tests.vm.machine import VM
from tests.vm.scenarios import FAST_KIB, HOLD_KIB, create_array, wait_sync_progress

pytestmark = pytest.mark.vm
MD = "md0"


def test_degraded_raid6_fail_typed_then_refused_and_rebuilding_re_add_refused(
    blank_vm: VM,
) -> None:
    vm = blank_vm
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    disks = vm.disks(5)
    create_array(vm, MD, "raid6", disks[:4], chunk_kib=64, size_kib=32 * 1024)
    vm.wait_idle(MD, timeout=300)
    vm.run(["mdadm", f"/dev/{MD}", "--fail", f"/dev/{disks[3]}"], check=True)
    assert read_md(vm, MD).degraded == 1

    # a second member: typed, nothing survives after it, every other member is then critical
    r = vm.raidman("plan", "member", "fail", "--array", MD, "--device", disks[0], "--json")
    assert r.returncode == 0, r.stderr
    c = json.loads(r.stdout)["consequences"]
    assert c["confirm"] == "typed"
    (red,) = c["redundancy"]
    assert (red["now"], red["during"], red["after"]) == (1, 0, 0), red
    assert sorted(red["lost_if"]) == sorted(disks[1:3])

    # the second really fails: a third is refused, it would stop the array
    vm.run(["mdadm", f"/dev/{MD}", "--fail", f"/dev/{disks[0]}"], check=True)
    r = vm.raidman("plan", "member", "fail", "--array", MD, "--device", disks[1])
    assert r.returncode == 3 and f"would stop {MD}" in r.stderr, (r.returncode, r.stderr)

    # a recovery onto a new member, held running: a re-add of it is refused with the reason
    vm.run(["mdadm", f"/dev/{MD}", "--remove", f"/dev/{disks[3]}"], check=True)
    vm.set_speed_limits(HOLD_KIB, HOLD_KIB)
    vm.run(["mdadm", f"/dev/{MD}", "--add", f"/dev/{disks[4]}"], check=True)
    k = wait_sync_progress(vm, MD, min_done=1)
    assert k.sync_action == "recover"
    r = vm.raidman("plan", "member", "re-add", "--array", MD, "--device", disks[4])
    vm.note(f"re-add of the rebuilding {disks[4]}: rc {r.returncode}: {r.stderr.strip()}")
    assert r.returncode == 3  # refused, as every refusal
    assert "being rebuilt" in r.stderr and "wait for the rebuild" in r.stderr
    vm.set_speed_limits(FAST_KIB, FAST_KIB)


def test_frozen_stops_a_degraded_rebuild_and_idle_lets_md_restart_it(blank_vm: VM) -> None:
    """The rules app/plans/outcome/arrays.py plays, on the real kernel (md.c action_store,
    md_check_recovery): ``frozen`` stops a recovery where it is and nothing restarts it;
    ``idle`` interrupts it and md starts it again at once, from where it was (the member's
    recovery_offset), not from the start. ``plan sync frozen`` on the degraded array forecasts
    no finishing recover, names the stop and asks for the array's name."""
    vm = blank_vm
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    disks = vm.disks(4)
    create_array(vm, MD, "raid5", disks[:3], chunk_kib=64, size_kib=64 * 1024)
    vm.wait_idle(MD, timeout=300)
    vm.run(["mdadm", f"/dev/{MD}", "--fail", f"/dev/{disks[2]}"], check=True)
    vm.run(["mdadm", f"/dev/{MD}", "--remove", f"/dev/{disks[2]}"], check=True)
    vm.set_speed_limits(HOLD_KIB, HOLD_KIB)
    vm.run(["mdadm", f"/dev/{MD}", "--add", f"/dev/{disks[3]}"], check=True)
    k = wait_sync_progress(vm, MD, min_done=1)
    assert k.sync_action == "recover" and k.degraded == 1

    r = vm.raidman("plan", "sync", "frozen", "--array", MD, "--json")
    assert r.returncode == 0, r.stderr
    c = json.loads(r.stdout)["consequences"]
    assert [s["action"] for s in c["syncs"]] == []
    assert [(s["array"], s["fate"], s["degraded"]) for s in c["stops"]] == [(MD, "stopped", True)]
    assert c["confirm"] == "typed" and c["at_risk"] == MD

    # idle: md interrupts the recovery and starts it again at once from where it was
    before = read_md(vm, MD).completed
    vm.write(f"/sys/block/{MD}/md/sync_action", "idle\n")
    vm.wait_action(MD, ["recover"], timeout=60)
    again = read_md(vm, MD).completed
    assert before is not None and again is not None and again[0] >= before[0] > 0, (before, again)

    # frozen: it stops, and stays stopped
    vm.write(f"/sys/block/{MD}/md/sync_action", "frozen\n")
    vm.wait_action(MD, ["frozen"], timeout=60)
    vm.set_speed_limits(FAST_KIB, FAST_KIB)  # nothing would hold it back now
    time.sleep(3)
    k = read_md(vm, MD)
    assert k.sync_action == "frozen" and k.degraded == 1
    vm.write(f"/sys/block/{MD}/md/sync_action", "idle\n")  # thawed: md finishes the rebuild
    vm.wait_idle(MD, timeout=300)
    assert read_md(vm, MD).degraded == 0
