"""An unmounted filesystem lsblk does not type (no udev data: FSTYPE empty) is read from its
superblock with ``blkid -p`` through the backend (issue 24 item 4): replay of the VM capture
tests/fixtures/machines/vda-root-untyped with a second virtio disk vdb holding an unmounted
ext4, the simulator's blkid, and the parser's bounds."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from app.parsers.blkid import parse_blkid_export
from backends.replay import ReplayBackend
from backends.simulated import SimClock, SimulatedBackend
from tests.corpus import FIXTURES

CAP = FIXTURES / "machines" / "vda-root-untyped"
EXPORT = "DEVNAME=/dev/vdb\nUUID=0b6c3e2a-1f0e-4c1e-9a57-3f1d2c4b5a69\nLABEL=backup\nTYPE=ext4\nUSAGE=filesystem\n\n"


def _with_vdb(tmp_path: Path, blkid: dict[str, object] | None) -> Path:
    cap = tmp_path / "cap"
    shutil.copytree(CAP, cap)
    cmds = json.loads((cap / "commands.json").read_text())
    lsblk = next(c for c in cmds if c["argv"][0] == "lsblk")
    tree = json.loads(lsblk["stdout"])
    vda = next(d for d in tree["blockdevices"] if d["name"] == "vda")
    vdb = copy.deepcopy(vda)
    vdb.update(name="vdb", kname="vdb", mountpoints=[None], fstype=None, uuid=None)
    vdb["maj:min"] = "253:16"
    tree["blockdevices"].append(vdb)
    lsblk["stdout"] = json.dumps(tree)
    if blkid is not None:
        cmds.append({"argv": ["blkid", "-p", "-o", "export", "/dev/vdb"], "duration_s": 0.01,
                     "stdin": None, **blkid})  # fmt: skip
    (cap / "commands.json").write_text(json.dumps(cmds))
    return cap


def test_unmounted_untyped_filesystem_from_blkid(tmp_path: Path) -> None:
    cap = _with_vdb(tmp_path, {"returncode": 0, "stdout": EXPORT, "stderr": ""})
    m = ReplayBackend(cap).probe()
    got = {f.device: (f.fstype, f.uuid, f.label, f.mountpoints) for f in m.filesystems}
    assert got["vda"] == ("ext4", got["vda"][1], got["vda"][2], ("/",))  # mountinfo's, as before
    assert got["vdb"] == ("ext4", "0b6c3e2a-1f0e-4c1e-9a57-3f1d2c4b5a69", "backup", ())


def test_blkid_not_recorded_or_finding_nothing_adds_nothing(tmp_path: Path) -> None:
    old = ReplayBackend(_with_vdb(tmp_path / "a", None)).probe()  # a capture without blkid
    assert [f.device for f in old.filesystems] == ["vda"]
    assert not any(n.source == "blkid" for n in old.notes)
    empty = ReplayBackend(
        _with_vdb(tmp_path / "b", {"returncode": 2, "stdout": "", "stderr": ""})
    ).probe()
    assert [f.device for f in empty.filesystems] == ["vda"]
    denied = ReplayBackend(
        _with_vdb(
            tmp_path / "c",
            {"returncode": 4, "stdout": "", "stderr": "blkid: /dev/vdb: Permission denied\n"},
        )
    ).probe()
    assert any(n.source == "blkid" and "Permission denied" in n.message for n in denied.notes)


def test_simulated_blkid_reads_the_superblock() -> None:
    be = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    r = be.run(["blkid", "-p", "-o", "export", "/dev/md0", "/dev/sda1"])
    by = {e.device: e for e in parse_blkid_export(r.stdout)}
    assert by["md0"].type == "ext4" and by["md0"].usage == "filesystem"
    assert by["sda1"].type == "linux_raid_member" and by["sda1"].usage == "raid"
    assert be.run(["blkid", "-p", "-s", "TYPE", "-o", "value", "/dev/md0"]).stdout == "ext4\n"
    assert be.run(["blkid", "-p", "-o", "export", "/dev/nope"]).returncode == 2


def test_parser_bounds() -> None:
    text = (
        "DEVNAME=/dev/vdb\nTYPE=ext4\nLABEL=" + "x" * 300 + "\n"  # an overlong label: dropped
        "garbage line\n"
        "DEVNAME=/dev/../etc\nTYPE=ext4\n\n"  # not a kernel name: the block goes
        "DEVNAME=/dev/vdc\nTYPE=xfs\nLABEL=a\x1bb\n"  # a control character: the field goes
    )
    got = parse_blkid_export(text)
    assert [(e.device, e.type, e.label) for e in got] == [
        ("vdb", "ext4", None),
        ("vdc", "xfs", None),
    ]


def test_blkid_asks_a_device_once_per_recheck_period(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """blkid -p reads the device: a blank disk is not asked at every probe (it would keep a
    spun-down disk awake), only again after BLKID_RECHECK_S."""
    from backends.linux import probe as linux_probe

    be = ReplayBackend(_with_vdb(tmp_path, {"returncode": 0, "stdout": EXPORT, "stderr": ""}))
    calls: list[tuple[str, ...]] = []
    run = be.source.run

    def counting(argv, **kw):  # type: ignore[no-untyped-def]
        if argv[0] == "blkid":
            calls.append(tuple(argv))
        return run(argv, **kw)

    monkeypatch.setattr(be.source, "run", counting)
    for _ in range(3):
        assert "vdb" in {f.device for f in be.probe().filesystems}
    assert len(calls) == 1
    monkeypatch.setattr(linux_probe, "BLKID_RECHECK_S", 0.0)
    be.probe()
    assert len(calls) == 2
