"""Issue 22's Done-when on a real kernel: a degraded RAID-6 x4 (one member failed): ``plan
member fail`` of a second member has confirm "typed" and redundancy after 0; of a third (after
the second really failed), refused; a re-add of the member md is rebuilding, refused with the
reason. The plans are made by ``raidman plan`` in the guest on the Linux backend."""

from __future__ import annotations

import json

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
