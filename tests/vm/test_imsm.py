"""An IMSM (Intel firmware RAID) container and its RAID-1 volume on the real kernel.

mdadm makes IMSM metadata on any disk with ``IMSM_NO_PLATFORM=1`` (no Intel option ROM in QEMU);
mdmon then manages the volume. What the kernel shows for the container (md/raid_disks empty,
no degraded file, level empty) is what raidman must read as a container, not as an array that
could take a filesystem. Captured as tests/fixtures/vm/imsm-container-raid1.
"""

from __future__ import annotations

import json

import pytest

from tests.vm.machine import VM

pytestmark = pytest.mark.vm

ENV = "IMSM_NO_PLATFORM=1 IMSM_DEVNAME_AS_SERIAL=1"


@pytest.mark.vm
def test_imsm_container_is_not_a_filesystem_target(blank_vm: VM) -> None:
    vm = blank_vm
    a, b = vm.disks(2)
    vm.sh(
        f"{ENV} mdadm --create /dev/md/imsm0 --run --metadata=imsm --raid-devices=2 "
        f"/dev/{a} /dev/{b}"
    )
    vm.sh(
        f"{ENV} mdadm --create /dev/md/vol0 --run --level=1 --raid-devices=2 --size=65536 "
        "/dev/md/imsm0"
    )
    vm.run(["udevadm", "settle"], timeout=60)
    container = vm.sh("basename $(readlink -f /dev/md/imsm0)").stdout.strip()
    volume = vm.sh("basename $(readlink -f /dev/md/vol0)").stdout.strip()
    vm.capture("imsm-container-raid1", smart=False)
    assert vm.read(f"/sys/block/{container}/md/metadata_version").strip() == "external:imsm"
    vm.note(f"imsm container raid_disks: {vm.read(f'/sys/block/{container}/md/raid_disks')!r}")
    assert vm.read(f"/sys/block/{volume}/md/metadata_version").strip().startswith("external:/")
    report = json.loads(vm.raidman("report", "--json", check=True).stdout)
    arrays = {x["name"]: x for x in report["arrays"]}
    assert arrays[container]["raid_disks"] is None and arrays[container]["degraded"] is None
    r = vm.raidman("plan", "filesystem", "--array", container, "--fs", "ext4")
    assert r.returncode != 0 and "container" in (r.stdout + r.stderr)
