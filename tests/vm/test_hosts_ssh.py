"""``raidman report --json --host fleet1`` against the VM guest's own sshd (an alias for
127.0.0.1 in the guest) equals the guest's local report, with an md array and LVM on it
(issue 14, "Done when")."""

from __future__ import annotations

from typing import Any

import pytest

from tests import tools
from tests.vm.machine import VM
from tests.vm.scenarios import create_array

pytestmark = pytest.mark.vm


def _without_times(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "taken_at"}


def test_report_over_the_guests_sshd_equals_the_local_report(blank_vm: VM) -> None:
    tools.sshd()
    vm = blank_vm
    disks = vm.disks(2)
    create_array(vm, "md0", "raid1", disks)
    vm.wait_idle("md0")
    vm.sh("pvcreate -q /dev/md0 && vgcreate -q vgssh /dev/md0 && lvcreate -q -y -L 64M -n lv vgssh")
    vm.sh("mkfs.ext4 -q /dev/vgssh/lv")
    out = vm.call("tests.hosts.guest_ssh:reports", timeout=900)
    local, remote = out["local"], out["remote"]
    assert local["rc"] == 0, local["stderr"]
    assert remote["rc"] == 0, (remote["report"].get("notes"), out["diagnosis"])
    assert remote["report"]["arrays"] and remote["report"]["lvm"]["lvs"]
    assert _without_times(remote["report"]) == _without_times(local["report"])
