"""Filesystem geometry in the Linux backend: one tune2fs -l / xfs_info reading per probe fills
``filesystems[].block_size/stride/stripe_width/sunit/swidth`` and is the audit's input too.

Capture: tests/fixtures/vm/lvm-ext4-xfs-on-raid10 (ext4 on dm-0, XFS on dm-1, real 6.1 kernel),
with tune2fs/xfs_info outputs from tests/rules/samples (real tools) added to its commands."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from app.rules import gather
from backends.replay import ReplayBackend
from tests.corpus import FIXTURES

CAPTURE = FIXTURES / "vm" / "lvm-ext4-xfs-on-raid10"
SAMPLES = Path(__file__).resolve().parents[1] / "rules" / "samples"


def _capture(tmp: Path, tune2fs: str | None, xfs_info: str | None) -> Path:
    dest = tmp / "cap"
    shutil.copytree(CAPTURE, dest)
    cmds = json.loads((dest / "commands.json").read_text())
    for argv, sample in (
        (["tune2fs", "-l", "/dev/dm-0"], tune2fs),
        (["xfs_info", "/tmp/mnt/xfs"], xfs_info),
    ):
        if sample is not None:
            out = (SAMPLES / sample).read_text()
            cmds.append({"argv": argv, "stdin": None, "returncode": 0, "stdout": out, "stderr": ""})
    (dest / "commands.json").write_text(json.dumps(cmds))
    return dest


def test_probe_fills_geometry_and_the_audit_reuses_the_reading(tmp_path: Path) -> None:
    b = ReplayBackend(_capture(tmp_path, "tune2fs-stride8-sw16.txt", "xfs_info-su32k-sw2.txt"))
    m = b.probe()
    fs = {f.device: f for f in m.filesystems}
    # tune2fs-stride8-sw16.txt: Block size 4096, RAID stride 8, RAID stripe width 16
    assert (fs["dm-0"].block_size, fs["dm-0"].stride, fs["dm-0"].stripe_width) == (4096, 8, 16)
    # xfs_info-su32k-sw2.txt: bsize=4096 sunit=8 swidth=16 blks
    assert (fs["dm-1"].block_size, fs["dm-1"].sunit_bytes, fs["dm-1"].swidth_bytes) == (
        4096,
        32 * 1024,
        64 * 1024,
    )
    readings = b.fs_info(m)
    assert readings is not None
    inputs = gather(b, m)
    # the very objects the probe parsed: read once, parsed once
    assert inputs.ext4["dm-0"] is readings["dm-0"] and inputs.xfs["dm-1"] is readings["dm-1"]
    assert "tune2fs:dm-0" not in inputs.unknown and "xfs_info:dm-1" not in inputs.unknown


def test_failed_or_unreadable_reading_stays_unknown(tmp_path: Path) -> None:
    cap = _capture(tmp_path, None, "tune2fs-no-raid.txt")  # xfs_info answered with ext4 text
    b = ReplayBackend(cap)
    m = b.probe()
    fs = {f.device: f for f in m.filesystems}
    assert fs["dm-0"].block_size is None and fs["dm-1"].block_size is None
    inputs = gather(b, m)
    assert "not recorded" in inputs.unknown["tune2fs:dm-0"]
    assert inputs.unknown["xfs_info:dm-1"].startswith("unreadable output")
    assert inputs.ext4 == {} and inputs.xfs == {}


def test_another_machine_is_read_again(tmp_path: Path) -> None:
    from dataclasses import replace

    b = ReplayBackend(_capture(tmp_path, "tune2fs-stride16-sw64.txt", None))
    m = b.probe()
    other = replace(m)  # not the probe's machine: the backend's readings do not apply
    assert b.fs_info(other) is None
    assert gather(b, other).ext4["dm-0"].stride == 16
