"""A plan saved on one backend is not applied on another (issue 24 item 9: a plan saved in a
demo said "passed its checks" under apply --dry-run on a real machine). The plan file records
the backend it was made on; apply refuses it elsewhere; without that record (an older file)
pre-flight still refuses an array or member that is not on the machine. And the CLI's
create-array refuses devices that do not exist before printing a plan, and says which of the
TUI's defaults (mdadm.conf, initramfs) it leaves out."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.cli import main
from app.plans.builders.members import build_fail
from app.plans.guards.targets import missing_targets
from backends.simulated import SimClock, SimulatedBackend


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(state))
    work = tmp_path / "work"
    work.mkdir(mode=0o700)
    monkeypatch.chdir(work)
    return work


def _fail_plan(here: Path) -> Path:
    out = here / "fail.json"
    args = ["plan", "member", "fail", "--array", "md0", "--device", "sda1"]
    assert main([*args, "--demo", "raid6-wd", "--out", str(out)]) == 0
    return out


def test_plan_records_its_backend_and_apply_refuses_another(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = _fail_plan(here)
    assert json.loads(saved.read_text())["backend"] == "demo: raid6-wd"
    capsys.readouterr()
    assert main(["apply", str(saved), "--dry-run", "--demo", "raid10-evo"]) == 3
    err = capsys.readouterr().err
    assert "made on demo: raid6-wd, not on demo: raid10-evo" in err
    assert main(["apply", str(saved), "--dry-run", "--demo", "raid6-wd"]) == 0


def test_a_file_without_the_record_is_checked_against_the_machine(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = _fail_plan(here)
    data = json.loads(saved.read_text())
    del data["backend"]
    older = here / "older.json"
    older.write_text(json.dumps(data))
    older.chmod(0o600)
    capsys.readouterr()
    assert main(["apply", str(older), "--dry-run", "--demo", "raid10-evo"]) == 3
    out = capsys.readouterr().out
    assert "REFUSED md0: no such md array on this machine" in out


def test_member_must_be_the_arrays() -> None:
    m6 = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual()).probe()
    plan = build_fail(m6, "md0", "sda1")
    assert missing_targets(plan, m6) == []
    m10 = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual()).probe()
    assert [(i.device, i.message) for i in missing_targets(plan, m10)] == [
        ("md0", "no such md array on this machine")
    ]
    # same array name, a device that is not its member
    other = build_fail(m6, "md0", "sdc1")
    gone = m6.array("md0")
    assert gone is not None
    without = replace(gone, members=tuple(x for x in gone.members if x.device != "sdc1"))
    m6b = replace(m6, arrays=(without,))
    assert [(i.device, i.message) for i in missing_targets(other, m6b)] == [
        ("sdc1", "is not a member of md0 on this machine")
    ]


def test_create_refuses_unknown_devices_before_the_plan(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["plan", "create-array", "--level", "5", "--devices", "a,b,nvme9n1"]
    assert main([*args, "--demo", "blank"]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert "no such block device on this machine: a, b, nvme9n1" in err


def test_cli_says_which_tui_defaults_it_leaves_out(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "create-array", "--level", "1", "--devices", "nvme0n1,nvme1n1"]
    assert main([*args, "--demo", "blank"]) == 0
    out = capsys.readouterr().out
    assert "not in this plan: append the ARRAY line to mdadm.conf and update the initramfs" in out
    assert main([*args, "--conf", "--initramfs", "--demo", "blank"]) == 0
    assert "not in this plan" not in capsys.readouterr().out
