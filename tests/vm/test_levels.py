"""RAID-0/1/5/6/10: create, watch the initial sync, compare raidman's model with sysfs."""

from __future__ import annotations

import re

import pytest

from tests.vm.kernel import read_md
from tests.vm.machine import VM
from tests.vm.scenarios import (
    FAST_KIB,
    SLOW_KIB,
    create_array,
    finish_or_skip_model,
    hold_sync,
    model_check,
    timed_idle,
    wait_sync_progress,
)

pytestmark = pytest.mark.vm

# level, members, data disks, the kernel's initial activity (mdadm builds RAID-5 degraded + spare
# and *recovers* it; RAID-1/6/10 resync; RAID-0 has nothing to sync)
LEVELS = [
    ("raid0", 4, 4, None),
    ("raid1", 2, 1, "resync"),
    ("raid5", 4, 3, "recover"),
    ("raid6", 4, 2, "resync"),
    ("raid10", 4, 2, "resync"),
]


@pytest.mark.parametrize(
    ("level", "n", "data_disks", "initial"), LEVELS, ids=[x[0] for x in LEVELS]
)
def test_create_and_initial_sync(
    blank_vm: VM, level: str, n: int, data_disks: int, initial: str | None
) -> None:
    vm = blank_vm
    md = "md0"
    vm.set_speed_limits(min_kib=1000, max_kib=SLOW_KIB)  # slow: the sync must be observable
    k = create_array(vm, md, level, vm.disks(n), chunk_kib=64)

    assert k.level == level
    assert k.num("raid_disks") == n
    assert set(k.members) == set(vm.disks(n))
    block = k.mdstat_block
    assert re.search(rf"^{md} : active (\(auto-read-only\) )?{level} ", block, re.M), block
    component_kib = k.num("component_size")
    assert component_kib is not None
    # the array's size is the data disks' share of the components (RAID-0 has no component_size)
    if level != "raid0":
        assert k.size_bytes == component_kib * 1024 * data_disks

    if initial is None:
        assert k.sync_action in (None, "idle")
        assert k.in_sync() == set(k.members)
        b = model_check(vm, md)
        vm.capture(f"create-{level}")
        finish_or_skip_model(b)
        return

    # mid-sync: the kernel's own activity, and raidman's model of it at the same moment
    k = wait_sync_progress(vm, md, min_done=2048)
    hold_sync(vm)  # held running while it is looked at; released below
    assert k.sync_action == initial
    done, total = k.completed or (0, 0)
    assert 0 < done < total
    assert re.search(
        rf"{'recovery' if initial == 'recover' else 'resync'} =\s*[\d.]+%", vm.read("/proc/mdstat")
    )
    if initial == "recover":  # the last member is the one being rebuilt
        rebuilding = {d for d, m in k.members.items() if "in_sync" not in m.state}
        assert len(rebuilding) == 1 and k.degraded == 1
    mid = model_check(vm, md)
    if mid is not None:
        sync = mid.array(md)["sync"]
        assert sync is not None and sync["action"] == initial
        assert sync["total_sectors"] == total
    if level in ("raid5", "raid10"):
        vm.capture(f"create-{level}-syncing", smart=False)

    vm.set_speed_limits(min_kib=FAST_KIB, max_kib=FAST_KIB)
    secs = timed_idle(vm, md, timeout=600)
    vm.note(f"timing: {level} initial sync finished {secs:.1f} s after the boost")

    k = read_md(vm, md)
    assert k.sync_action == "idle"
    assert k.degraded == 0
    assert k.in_sync() == set(k.members)
    # the kernel names a finished recovery "recovery" here, not sync_action's "recover"
    assert k.get("last_sync_action") == {"recover": "recovery"}.get(initial, initial)
    assert "[" + "U" * n + "]" in k.mdstat_block
    b = model_check(vm, md)
    if b is not None:
        assert b.array(md)["sync"] is None
    vm.capture(f"create-{level}-synced")
    finish_or_skip_model(b)
