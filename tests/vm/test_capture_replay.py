"""`raidman capture` then `--replay` of a real-kernel state gives the live report's findings
(issue 12): the capture records everything the audit reads (tune2fs, mdadm.conf, lvmconfig,
queue files, ...), and the replay — run on the host, away from the guest — tells "not recorded"
from "absent", so it neither invents nor loses a finding."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.vm.machine import VM
from tests.vm.test_audit import ext4_hints, ext4_on_lvm_on_raid10

pytestmark = pytest.mark.vm
REPO = Path(__file__).resolve().parents[2]


def _findings(report: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    return sorted(
        (f["severity"], f["code"], f["device"], f["title"], f["detail"]) for f in report["findings"]
    )


def _replayed_report(cap: Path) -> dict[str, Any]:
    """``raidman report --json --replay CAP`` on the host, as a user would run it."""
    r = subprocess.run(
        [sys.executable, "-m", "app.cli", "report", "--json", "--replay", str(cap)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    out: dict[str, Any] = json.loads(r.stdout)
    return out


def test_capture_replay_gives_the_live_findings(blank_vm: VM) -> None:
    vm = blank_vm
    # ext4 with the wrong RAID hints on LVM on RAID-10 (the kernel's 32 KiB chunk wants 8/16),
    # and no mdadm.conf line for the array: findings that need tune2fs, mdadm.conf, lvmconfig
    path, dm = ext4_on_lvm_on_raid10(vm, 16, 64)
    assert ext4_hints(vm, path) == (16, 64)
    live = json.loads(vm.raidman("report", "--json", check=True).stdout)
    cap = vm.capture("capture-replay-ext4-on-lvm-on-raid10", needed=True)
    assert cap is not None
    replayed = _replayed_report(cap)

    live_found, replay_found = _findings(live), _findings(replayed)
    vm.note(f"capture/replay: {len(live_found)} live findings: {[f[1] for f in live_found]}")
    assert replay_found == live_found
    codes = {(f[1], f[2]) for f in live_found}
    assert ("ext4-stride-mismatch", dm) in codes  # read from the recorded tune2fs -l
    assert not [f for f in replay_found if "not recorded" in f[4]]

    # the filesystem's geometry is in the model, live and replayed, as tune2fs says
    def fs_of(report: dict[str, Any]) -> dict[str, Any]:
        (fs,) = [f for f in report["filesystems"] if f["device"] == dm]
        return dict(fs)

    for rep in (live, replayed):
        fs = fs_of(rep)
        assert (fs["block_size"], fs["stride"], fs["stripe_width"]) == (4096, 16, 64)

    # SMART: the replay reads the recorded smartctl output; it never claims smartctl is missing
    def smart(report: dict[str, Any]) -> dict[str, tuple[bool, str | None]]:
        return {
            d["name"]: (bool(d["smart"]["available"]), d["smart"].get("reason"))
            for d in report["disks"]
            if d.get("smart")
        }

    assert smart(replayed) == smart(live)
    assert any(ok for ok, _ in smart(replayed).values())
    assert not [r for _, r in smart(replayed).values() if r and "not installed" in r]
