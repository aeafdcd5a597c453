"""Pre-flight from the kernel's own tables on a real kernel, with ``blkid`` and ``wipefs`` not on
PATH (issue 11): a mounted disk, a disk whose partition is only reachable through a bind mount
(the original mount gone: mountinfo's major:minor → /sys/dev/block → partition → disk), and a
disk under a device-mapper mapping that is mounted (holders) are refused — with the reason in
``raidman plan --json`` (``preflight.refusals``) and on the TUI's preview — and a blank disk is not.

The guest's "/" is the host's file system over 9p (major 0, no block device), so "the disk holding
/" cannot be staged here; it is covered by tests/plans/test_preflight.py over the real capture of
the development host (tests/fixtures/preflight/devhost-root-on-vda, vda 254:0 on "/", blkid
denied), and this test asserts what "/" is in the guest so that changes are noticed.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.vm.machine import VM

pytestmark = pytest.mark.vm

BIN = "/tmp/pf-bin"  # lsblk, lvm, mdadm, smartctl, dmsetup, udevadm — no blkid, no wipefs
TOOLS = ("lsblk", "lvm", "mdadm", "smartctl", "dmsetup", "udevadm", "sh")
GW = "tests.vm.guest_wizards"


def _stage(vm: VM, mounted: str, parted: str, dmdisk: str) -> None:
    vm.sh(
        f"""
        mkfs.ext4 -q -F /dev/{mounted}
        mkdir -p /tmp/pf-mnt /tmp/pf-src /tmp/pf-bind /tmp/pf-dm
        mount /dev/{mounted} /tmp/pf-mnt
        parted -s /dev/{parted} mklabel gpt mkpart p1 1MiB 100%
        partx -u /dev/{parted} || true
        udevadm settle || true
        mkfs.ext4 -q -F /dev/{parted}p1
        mount /dev/{parted}p1 /tmp/pf-src
        mkdir -p /tmp/pf-src/sub
        mount --bind /tmp/pf-src/sub /tmp/pf-bind
        umount /tmp/pf-src
        sz=$(blockdev --getsz /dev/{dmdisk})
        echo "0 $sz linear /dev/{dmdisk} 0" | dmsetup create pftest
        mkfs.ext4 -q -F /dev/mapper/pftest
        mount /dev/mapper/pftest /tmp/pf-dm
        rm -rf {BIN} && mkdir -p {BIN}
        for t in {" ".join(TOOLS)}; do p=$(command -v $t) && ln -s "$p" {BIN}/$t; done
        """
    )


def _unstage(vm: VM, parted: str) -> None:
    for mp in ("/tmp/pf-bind", "/tmp/pf-mnt", "/tmp/pf-dm", "/tmp/pf-src"):
        vm.run(["umount", mp])
    vm.run(["dmsetup", "remove", "pftest"])
    vm.run(["wipefs", "-a", f"/dev/{parted}"])


def test_preflight_refuses_from_the_kernel_tables_without_blkid_or_wipefs(blank_vm: VM) -> None:
    vm = blank_vm
    mounted, parted, dmdisk, blank = vm.disks(4)
    root = next(
        ln.split() for ln in vm.read("/proc/self/mountinfo").splitlines() if ln.split()[4] == "/"
    )
    # "/" here is the host's fs over 9p: major 0, no block device to refuse (see module doc)
    assert root[2].startswith("0:"), root
    vm.note(f"guest '/': {root[2]} {root[root.index('-') + 1]} {root[root.index('-') + 2]}")
    _stage(vm, mounted, parted, dmdisk)
    try:
        env = {"PATH": BIN}
        for tool in ("blkid", "wipefs"):
            assert vm.run(["sh", "-c", f"command -v {tool}"], env=env).returncode != 0, tool
        devs = [mounted, parted, dmdisk, blank]
        args = ["plan", "create-array", "--level", "5", "--devices", ",".join(devs), "--json"]
        res, rc = vm.call_result("app.cli:main", args, env=env, timeout=300)
        assert res.ok, res.stderr
        data = json.loads(res.stdout)
        holders = vm.glob(f"/sys/block/{dmdisk}/holders/*")
        # ---- TUI: the same reasons on the preview, Run disabled, nothing run
        failed = vm.preload(GW, "app.ui.app")
        assert not failed, failed
        t0 = time.monotonic()
        state = "/tmp/raidman-wizards/preflight"
        vm.sh(f"rm -rf {state} && mkdir -p {state} && chmod 700 {state}")
        tui: dict[str, Any] = vm.call(
            f"{GW}:create_array", state, devs, level="1", name="120", fs="none", lvm=False,
            confirm="120", force=True, bypass_picker=True, env=env, timeout=400,
        )  # fmt: skip
        vm.note(f"timing: TUI create_array without blkid/wipefs: {time.monotonic() - t0:.1f} s")
    finally:
        _unstage(vm, parted)
    assert rc == 3
    refusals = data["preflight"]["refusals"]
    by_dev: dict[str, list[str]] = {}
    for r in refusals:
        by_dev.setdefault(r["device"], []).append(f"{r['code']}: {r['message']}")
    assert "mounted: is mounted on /tmp/pf-mnt" in by_dev[mounted], refusals
    assert f"mounted: its partition {parted}p1 is mounted on /tmp/pf-bind" in by_dev[parted]
    (holder,) = [h.rsplit("/", 1)[-1] for h in holders]
    assert holder.startswith("dm-")
    assert f"mounted: holds {holder}, mounted on /tmp/pf-dm" in by_dev[dmdisk], refusals
    assert blank not in by_dev, refusals
    assert not any(r["code"] in ("unchecked", "boot") for r in refusals), refusals
    # wipefs is gone: signatures on the blank disk could not be checked — a warning, named
    warn = {(w["code"], w["device"]) for w in data["preflight"]["warnings"]}
    assert ("wipefs", blank) in warn
    # the TUI: the device picker greys out the three with the kernel's reason and does not take
    # them (space on their line), so no plan can be made with them ...
    rows = tui["picker"]
    assert rows[mounted]["disabled"] and "mounted on /tmp/pf-mnt" in rows[mounted]["label"], rows
    assert rows[parted]["disabled"], rows
    assert f"{parted}p1 mounted on /tmp/pf-bind" in rows[parted]["label"], rows
    assert rows[dmdisk]["disabled"] and f"{holder} on /tmp/pf-dm" in rows[dmdisk]["label"], rows
    assert not rows[blank]["disabled"] and "✗" not in rows[blank]["label"], rows
    assert tui["picked"] == [blank]
    assert "RAID-1 needs at least 2 devices" in tui["keys_wizard_error"], tui["keys_wizard_error"]
    # ... and ticked behind the picker's back, the preview refuses them (pre-flight again)
    p = tui["preview"]
    shown = "\n".join(p["refused"])
    assert f"REFUSED {mounted}: is mounted on /tmp/pf-mnt" in shown, shown
    assert f"REFUSED {parted}: its partition {parted}p1 is mounted on /tmp/pf-bind" in shown
    assert f"REFUSED {dmdisk}: holds {holder}, mounted on /tmp/pf-dm" in shown
    assert blank not in shown
    assert tui["run_disabled_before_run"] and tui["audit"] == []
