"""Issue 40's Done-when through the command line, on the simulated scenarios: ``plan qualify``
on blank's nvme0n1 (SMART long test, surface write/verify, duration and bytes forecast), refused
on raid6-wd's sda; ``plan locate`` and ``plan retire`` on raid6-wd's sdb; a self-test that
cannot start is refused (exit 2, the reason), not planned; a replace needs a qualified disk or
its serial typed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "state"))


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(["plan", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_qualify_on_blank_has_a_long_self_test_a_surface_pass_and_a_forecast(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc, out, _ = _plan(capsys, "qualify", "--device", "nvme0n1", "--demo", "blank")
    assert rc == 0, out
    assert "nvme device-self-test /dev/nvme0n1 --self-test-code=2 --wait" in out
    assert "--verify=crc32c --do_verify=1" in out
    assert "note: forecast: about " in out and "writes 931.5 GiB" in out
    assert "DESTROYS DATA — to confirm, type the target's name: nvme0n1" in out
    rc, text, _ = _plan(capsys, "qualify", "--device", "nvme0n1", "--demo", "blank", "--json")
    plan = json.loads(text)
    assert plan["kind"] == "qualify" and plan["disks"][0]["serial"] == "S4EWNX0R512300K"
    assert plan["preflight"]["refusals"] == []


def test_qualify_is_refused_on_a_member(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _plan(capsys, "qualify", "--device", "sda", "--demo", "raid6-wd")
    assert rc == 2 and out == ""
    assert "sda is in use" in err and "member of the md array md0" in err


def test_locate_and_retire_on_raid6_wd(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _plan(capsys, "locate", "--device", "sdb", "--demo", "raid6-wd")
    assert rc == 0 and "bay 1 of enclosure 0:0:6:0" in out
    assert "tee '/sys/class/enclosure/0:0:6:0/Slot 01/locate'" in out
    rc, out, _ = _plan(capsys, "retire", "--device", "sdb", "--demo", "raid6-wd")
    assert rc == 0, out
    assert "mdadm --zero-superblock /dev/sdb1" in out and "wipefs -a /dev/sdb" in out
    assert "ERASES THE DISK — to confirm, type its serial: WD-WCC4J4177919" in out


def test_a_self_test_that_cannot_start_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # the usb-bridge's SSD behind a JMicron bridge: smartctl reads nothing through it
    rc, out, err = _plan(capsys, "smart-test", "--device", "sdh", "--demo", "usb-bridge")
    assert rc == 2 and out == "", out
    assert "SMART cannot be read" in err and "no self-test can be started" in err


def test_replace_needs_a_qualified_disk_or_its_serial(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("member", "replace", "--array", "md0", "--device", "sdb1", "--with", "sdc")
    rc, _, err = _plan(capsys, *args, "--demo", "spare")
    assert rc == 2 and "sdc (S3Z9NB0K400123W) was never qualified" in err
    assert "--unqualified S3Z9NB0K400123W" in err
    rc, out, _ = _plan(capsys, *args, "--unqualified", "sdc", "--demo", "spare")
    assert rc == 2  # the kernel name is no override where the disk has a serial
    rc, out, _ = _plan(capsys, *args, "--unqualified", "S3Z9NB0K400123W", "--demo", "spare")
    assert rc == 0 and "mdadm /dev/md0 --replace /dev/sdb1 --with /dev/sdc" in out
    assert "warning: sdc (S3Z9NB0K400123W) was never qualified; used anyway" in out
    assert "tee '/sys/class/enclosure/0:0:8:0/Slot 01/fault'" in out
    assert "once the rebuild has finished, check md0" in out
