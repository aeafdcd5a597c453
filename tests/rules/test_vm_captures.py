"""The audit on real kernel states captured in the VM (tests/fixtures/vm), replayed: the odd
USB-bridge-like topology is found from the kernel's own numbers, and a healthy RAID-5 is quiet."""

from __future__ import annotations

import json
from pathlib import Path

from app.rules.engine import audit
from app.rules.inputs import gather
from backends.replay import ReplayBackend
from tests.vm.machine import FIXTURES_VM


def _audit(name: str) -> tuple[ReplayBackend, list[tuple[str, str, str]]]:
    b = ReplayBackend(str(FIXTURES_VM / name))
    m = b.probe()
    return b, [(f.severity, f.code, f.device) for f in audit(m, gather(b, m))]


def _lsblk_as_recorded(capture: Path) -> dict[str, dict[str, object]]:
    """The kernel's topology as the recorded ``lsblk --json`` printed it (name -> columns)."""
    (entry,) = [
        c for c in json.loads((capture / "commands.json").read_text()) if c["argv"][0] == "lsblk"
    ]
    out: dict[str, dict[str, object]] = {}

    def walk(devs: list[dict[str, object]]) -> None:
        for d in devs:
            out[str(d["name"])] = d
            walk(d.get("children") or [])  # type: ignore[arg-type]

    walk(json.loads(entry["stdout"])["blockdevices"])
    return out


def test_partitions_at_65535_sectors_on_the_4096_33553920_disk() -> None:
    lsblk = _lsblk_as_recorded(FIXTURES_VM / "virtio-usb-bridge-topology")
    assert lsblk["vda"]["opt-io"] == 33553920 and lsblk["vda"]["phy-sec"] == 4096
    misaligned = {n for n, d in lsblk.items() if d.get("pkname") == "vda" and d["alignment"] != 0}
    assert misaligned == {"vda1", "vda2", "vda3"}  # the kernel's offsets: 512, 1024, 1536
    _, found = _audit("virtio-usb-bridge-topology")
    errors = {d for s, c, d in found if s == "error" and c == "partition-misaligned"}
    assert errors == misaligned
    assert ("warning", "suspicious-io-topology", "vda") in found


def test_healthy_raid5_capture_has_no_alignment_or_geometry_errors() -> None:
    _, found = _audit("create-raid5-synced")
    # the NVMe members are used whole and aligned: nothing about alignment or geometry
    assert not [f for f in found if f[1] in ("partition-misaligned", "ext4-stride-mismatch")]
    # ... but a RAID-5 made without a bitmap, at the default stripe cache, is worth saying
    codes = {c for _, c, d in found if d == "md0"}
    assert {"md-no-bitmap", "md-stripe-cache"} <= codes, codes


def test_mdadm_conf_not_recorded_is_unknown_not_absent(tmp_path: Path) -> None:
    """This capture predates recording the audit's reads: mdadm.conf is not in it, so the
    replay cannot say the array is missing from it (it used to, for every replay)."""
    import shutil

    b, found = _audit("create-raid5-synced")
    assert not b.recorded("/etc/mdadm/mdadm.conf")
    assert not [f for f in found if f[1] == "md-not-in-mdadm-conf"]
    assert ("advice", "audit-incomplete", "") in found
    # the same capture with the guest's answer recorded (no mdadm.conf at either path)
    cap = tmp_path / "cap"
    shutil.copytree(FIXTURES_VM / "create-raid5-synced", cap)
    reads = json.loads((cap / "reads.json").read_text())
    reads.update({"/etc/mdadm/mdadm.conf": "absent", "/etc/mdadm.conf": "absent"})
    (cap / "reads.json").write_text(json.dumps(reads))
    b2 = ReplayBackend(str(cap))
    m = b2.probe()
    codes = {(f.code, f.device) for f in audit(m, gather(b2, m))}
    assert ("md-not-in-mdadm-conf", "md0") in codes


def test_replayed_capture_is_read_only(tmp_path: Path) -> None:
    b, _ = _audit("create-raid5-synced")
    assert b.read_only_reason and "read-only" in b.read_only_reason
