"""A bitmap-driven recovery (re-add of a RAID-1 member with an internal bitmap), held while it is
looked at: what md/sync_completed, /proc/mdstat and mdadm --detail say in the same moment, and
what raidman reports. Captured as tests/fixtures/vm/raid1-bitmap-recovering.
"""

from __future__ import annotations

import re

import pytest

from tests.vm.kernel import read_md
from tests.vm.machine import VM
from tests.vm.scenarios import FAST_KIB, HOLD_KIB, create_array

pytestmark = pytest.mark.vm
MD = "md0"


@pytest.mark.vm
def test_bitmap_recovery_progress_in_sysfs_and_mdstat(blank_vm: VM) -> None:
    vm = blank_vm
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    a, b = vm.disks(2)
    create_array(
        vm, MD, "raid1", [a, b], bitmap="internal", extra=["--bitmap-chunk=16M", "--assume-clean"]
    )
    vm.wait_idle(MD, timeout=120)

    def clean() -> bool:
        return ", 0 dirty" in vm.run(["mdadm", "-X", f"/dev/{a}"]).stdout

    vm.wait_for(clean, timeout=120)
    vm.run(["mdadm", f"/dev/{MD}", "--fail", f"/dev/{b}"], check=True)
    vm.run(["mdadm", f"/dev/{MD}", "--remove", f"/dev/{b}"], check=True)
    # dirty two bitmap chunks in the second half: the recovery skips the clean first half
    vm.run(
        ["dd", "if=/dev/urandom", f"of=/dev/{MD}", "bs=1M", "seek=160", "count=20",
         "oflag=direct", "status=none"],
        check=True,
    )  # fmt: skip
    vm.set_speed_limits(HOLD_KIB, HOLD_KIB)
    vm.run(["mdadm", f"/dev/{MD}", "--re-add", f"/dev/{b}"], check=True)

    def recovering() -> bool:
        k = read_md(vm, MD)
        return k.sync_action == "recover" and bool(k.completed and k.completed[0] > 0)

    vm.wait_for(recovering, timeout=60)
    snap = vm.read_many(["/proc/mdstat", f"/sys/block/{MD}/md/sync_completed"])
    detail = vm.run(["mdadm", "--detail", f"/dev/{MD}"]).stdout
    mdstat = snap["/proc/mdstat"] or ""
    completed = (snap[f"/sys/block/{MD}/md/sync_completed"] or "").strip()
    pct = re.search(r"recovery =\s*([\d.]+)%", mdstat)
    rebuild = re.search(r"Rebuild Status : (\d+)% complete", detail)
    done, total = (int(x) for x in completed.split(" / "))
    vm.note(
        f"bitmap recovery: sync_completed {completed} = {100 * done / total:.1f} %; mdstat "
        f"{pct.group(1) if pct else None} %; mdadm --detail {rebuild.group(1) if rebuild else None} %"
    )
    vm.capture("raid1-bitmap-recovering", smart=False)
    assert pct is not None
    # raidman shows the fresher of the two (backends/linux/md.py fresher_progress), never less
    # than sysfs' lazily moved checkpoint
    (arr,) = [x for x in vm.report()["arrays"] if x["name"] == MD]
    assert arr["sync"]["action"] == "recover" and arr["sync"]["done_sectors"] >= done
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    vm.wait_idle(MD, timeout=300)
