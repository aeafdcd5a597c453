"""SMART in a replay: smartctl's JSON serves when pySMART's ``-d test`` was not recorded, and
"not installed" is said only when smartctl is missing, not when a capture lacks the call.

Captures: tests/fixtures/captures/raid5-raid10-clean (a `raidman capture` inside a QEMU VM)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from app.backend import CommandResult
from backends.linux.smart import NOT_INSTALLED, NOT_RECORDED, read_smart
from backends.replay import ReplayBackend
from tests.corpus import FIXTURES

CAPTURE = FIXTURES / "captures" / "raid5-raid10-clean"


def _copy_keeping(tmp: Path, keep: Sequence[str]) -> Path:
    """The capture with only the smartctl calls whose argv contains one of ``keep``."""
    dest = tmp / "cap"
    shutil.copytree(CAPTURE, dest)
    cmds = json.loads((dest / "commands.json").read_text())
    cmds = [c for c in cmds if c["argv"][0] != "smartctl" or any(k in c["argv"] for k in keep)]
    (dest / "commands.json").write_text(json.dumps(cmds))
    return dest


def test_replay_without_pysmart_calls_uses_recorded_json(tmp_path: Path) -> None:
    raw = next(
        c
        for c in json.loads((CAPTURE / "commands.json").read_text())
        if c["argv"] == ["smartctl", "-j", "-a", "/dev/nvme0n1"]
    )
    doc = json.loads(raw["stdout"])
    b = ReplayBackend(_copy_keeping(tmp_path, ["-j"]))
    b.probe()
    r = b.smart("nvme0n1")
    assert r.available and r.source == "smartctl -j" and r.reason is None
    assert r.serial == doc["serial_number"] and r.model == doc["model_name"]
    log = doc["nvme_smart_health_information_log"]
    assert r.nvme["data_units_written"] == log["data_units_written"]


def test_replay_without_any_smartctl_says_not_recorded(tmp_path: Path) -> None:
    b = ReplayBackend(_copy_keeping(tmp_path, []))
    r = b.smart("nvme0n1")
    assert not r.available and r.reason == NOT_RECORDED


def test_full_capture_still_reads_through_pysmart() -> None:
    r = ReplayBackend(CAPTURE).smart("nvme0n1")
    assert r.available and r.source == "pySMART"


def test_not_installed_only_when_smartctl_is_missing() -> None:
    calls: list[tuple[str, ...]] = []

    def run(argv: Sequence[str], **_: object) -> CommandResult:
        calls.append(tuple(argv))
        return CommandResult(tuple(argv), 127, "", "smartctl: program not found")

    r = read_smart(run, "sda")
    assert not r.available and r.reason == NOT_INSTALLED
    assert ("smartctl", "-j", "-a", "/dev/sda") in calls  # the JSON call was tried too
