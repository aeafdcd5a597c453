"""A machine whose root filesystem lsblk does not type (no udev data: FSTYPE empty): ext4 on the
whole of a virtio disk, mounted on /. The capture (tests/fixtures/machines/vda-root-untyped) was
made on such a VM; the filesystem comes from the kernel's mountinfo, the disk's missing model and
serial say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.model.usage import KernelUsage
from backends.linux.probe import mounted_untyped
from backends.replay import ReplayBackend
from tests.corpus import FIXTURES
from widgets.tree_spec import build_tree_spec

CAP = FIXTURES / "machines" / "vda-root-untyped"


def _lsblk_fstype(name: str) -> object:
    """What lsblk itself said about ``name`` in the capture (raw JSON, no raidman code)."""
    cmds = json.loads((CAP / "commands.json").read_text())
    out = next(c for c in cmds if c["argv"][0] == "lsblk")["stdout"]
    return next(d for d in json.loads(out)["blockdevices"] if d["name"] == name)["fstype"]


def test_root_filesystem_from_mountinfo() -> None:
    assert _lsblk_fstype("vda") is None  # the case: lsblk has nothing
    m = ReplayBackend(CAP).probe()
    assert [(f.device, f.fstype, f.mountpoints) for f in m.filesystems] == [("vda", "ext4", ("/",))]
    d = m.disk("vda")
    assert d is not None and d.model is None
    assert d.model_text == "virtio disk: no model reported"
    assert d.serial_text == "virtio disk: no serial set by the host"


def test_tree_shows_the_root_filesystem() -> None:
    m = ReplayBackend(CAP).probe()
    specs = build_tree_spec(m)
    under_vda = [s for s in specs if s.parent == "dev:vda"]
    assert any("ext4" in s.label.plain and "/" in s.label.plain for s in under_vda), [
        s.label.plain for s in specs
    ]


def test_report_json_and_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))
    assert main(["report", "--json", "--no-smart", "--replay", str(CAP)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(f["device"], f["fstype"], f["mountpoints"]) for f in data["filesystems"]] == [
        ("vda", "ext4", ["/"])
    ]
    assert main(["report", "--no-smart", "--replay", str(CAP)]) == 0
    text = capsys.readouterr().out
    assert "vda          ext4   /" in text
    assert "virtio disk: no model reported  virtio" in text and " ? " not in text


def test_lsblk_typed_filesystem_is_not_doubled() -> None:
    from app.model.devices import Filesystem

    usage = KernelUsage(mounts=(("sda1", "/"),), fstypes=(("sda1", "ext4"), ("sdb", "xfs")))
    have = (Filesystem("sda1", "ext4", mountpoints=("/",)),)
    assert mounted_untyped(usage, have, {"sda1"}) == ()  # sdb: not a device the probe knows
    assert mounted_untyped(usage, (), {"sda1"}) == (Filesystem("sda1", "ext4", mountpoints=("/",)),)
