"""`raidman plan` and `raidman apply` end to end on a recording backend (and --demo blank when the
simulated backend is available)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import app.commands.apply as apply_cmd
import app.commands.plan as plan_cmd
from app.cli import main
from app.plans.audit_log import read_entries
from tests.plans.fakes import FakeBackend, array_machine, blank_machine

KEY = [
    "plan",
    "create-array",
    "--level",
    "10",
    "--devices",
    "nvme0n1,nvme1n1,nvme2n1,nvme3n1",
    "--chunk",
    "32K",
    "--layout",
    "n2",
    "--bitmap",
    "none",
    "--name",
    "127",
    "--fs",
    "ext4",
    "--lvm",
]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeBackend:
    be = FakeBackend(blank_machine())
    monkeypatch.setattr(plan_cmd, "make_backend", lambda args: be)
    monkeypatch.setattr(apply_cmd, "make_backend", lambda args: be)
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "state"))
    return be


def test_plan_prints_numbered_commands_and_runs_nothing(
    fake: FakeBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(KEY) == 0
    out = capsys.readouterr().out
    assert (
        " 1. mdadm --create /dev/md/127 --level=10 --raid-devices=4 --chunk=32K --layout=n2 "
        "--bitmap=none --metadata=1.2 --name=127 --run /dev/nvme0n1 /dev/nvme1n1 /dev/nvme2n1 /dev/nvme3n1"
    ) in out
    assert " 2. pvcreate --dataalignment 64K /dev/md/127" in out
    assert "mkfs.ext4 -b 4096 -E stride=8,stripe_width=16 /dev/vg127/data" in out
    assert "type the target's name: 127" in out
    assert "nothing was run." in out
    # only the read-only pre-flight probe ran
    assert fake.ran == []


def test_plan_json_then_apply_runs_exactly_the_previewed_argv(
    fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "plan.json"
    assert main([*KEY, "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads(out.read_text())
    assert printed == saved and saved["preflight"] == {"refusals": [], "warnings": []}
    fake.calls.clear()
    assert main(["apply", str(out), "--confirm", "127"]) == 0
    ran = fake.ran
    assert ran == [tuple(s["argv"]) for s in saved["steps"]]
    entries = read_entries()
    assert [e.argv for e in entries if e.event == "started"] == ran  # audit log = preview
    assert [e.argv for e in entries if e.event == "executed"] == ran
    assert "all 5 steps ran successfully" in capsys.readouterr().out


def test_apply_destructive_needs_the_target_name(
    fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "plan.json"
    main([*KEY, "--out", str(out)])
    fake.calls.clear()
    assert main(["apply", str(out), "--yes"]) == 3  # --yes alone never confirms a destructive plan
    assert main(["apply", str(out), "--confirm", "126"]) == 3
    assert fake.ran == []
    assert read_entries() == []
    assert "does not match" in capsys.readouterr().err


def test_apply_dry_run_and_read_only_execute_nothing(
    fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "plan.json"
    main([*KEY, "--out", str(out)])
    fake.calls.clear()
    capsys.readouterr()
    assert main(["apply", str(out), "--dry-run"]) == 0  # a dry run that finds nothing wrong
    res = capsys.readouterr()
    assert res.out.count("dry run") == 1 and res.err == ""
    assert res.out.splitlines()[-1] == "dry run: the plan passed its checks; nothing was executed"
    fake.read_only = "not root"
    assert main(["apply", str(out), "--confirm", "127"]) == 3
    assert fake.ran == []
    entries = read_entries()
    assert [e.event for e in entries] == ["refused"]


def test_apply_rechecks_preflight_on_the_current_machine(
    fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "plan.json"
    main([*KEY, "--out", str(out)])
    fake.machine = array_machine()  # meanwhile the disks became members of md127
    fake.calls.clear()
    assert main(["apply", str(out), "--confirm", "127"]) == 3
    res = capsys.readouterr()
    assert "REFUSED nvme0n1: is a member of the md array md127" in res.out
    assert fake.ran == []


def test_apply_warning_needs_force_and_force_is_audited(
    fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "plan.json"
    main(
        [
            "plan",
            "create-array",
            "--level",
            "5",
            "--devices",
            "nvme0n1,nvme1n1",
            "--name",
            "120",
            "--out",
            str(out),
        ]
    )
    assert "too-few" in capsys.readouterr().out
    assert main(["apply", str(out), "--confirm", "120"]) == 3
    assert "--force too-few" in capsys.readouterr().err
    assert main(["apply", str(out), "--confirm", "120", "--force", "too-few"]) == 0
    started, entry = read_entries()
    assert started.event == "started" and started.forced == ("too-few",)
    assert entry.forced == ("too-few",) and entry.argv[:2] == ("mdadm", "--create")


def test_apply_failing_step_stops_and_shows_stderr(
    fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "plan.json"
    main([*KEY, "--out", str(out)])
    fake.fail_when("mdadm", 1, stderr="mdadm: /dev/nvme3n1 is smaller than given size")
    capsys.readouterr()
    assert main(["apply", str(out), "--confirm", "127"]) == 1
    o = capsys.readouterr().out
    assert "✗ mdadm exited with 1: mdadm: /dev/nvme3n1 is smaller than given size" in o
    assert "not run: pvcreate --dataalignment 64K /dev/md/127" in o
    assert "step 1 of 5 failed" in o


def test_plan_member_and_sync_and_errors(
    fake: FakeBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.machine = array_machine()
    assert main(["plan", "member", "fail", "--array", "md127", "--device", "nvme1n1"]) == 0
    assert "mdadm /dev/md127 --fail /dev/nvme1n1" in capsys.readouterr().out
    assert (
        main(["plan", "sync", "stripe-cache", "--array", "md126", "--entries", "8192", "--json"])
        == 0
    )
    d = json.loads(capsys.readouterr().out)
    assert d["steps"][0]["stdin"] == "8192\n"
    assert main(["plan", "member", "remove", "--array", "md127", "--device", "nvme0n1"]) == 3
    assert "fail it first" in capsys.readouterr().err
    assert main(["plan", "filesystem", "--array", "md127"]) == 3  # md127 is an LVM PV
    assert "REFUSED md127: is an LVM physical volume" in capsys.readouterr().out


def test_demo_blank_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sim = pytest.importorskip("backends.simulated")
    if "blank" not in getattr(sim, "scenario_names", lambda: [])():
        pytest.skip("simulated backend without the blank scenario")
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "state"))
    out = tmp_path / "plan.json"
    assert main([*KEY, "--demo", "blank", "--out", str(out)]) == 0
    assert "mdadm --create /dev/md/127" in capsys.readouterr().out


@pytest.fixture
def fake_arrays(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeBackend:
    be = FakeBackend(array_machine())  # md127: RAID-10 without a bitmap; nvme4n1 free
    monkeypatch.setattr(plan_cmd, "make_backend", lambda args: be)
    monkeypatch.setattr(apply_cmd, "make_backend", lambda args: be)
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "state"))
    return be


@pytest.mark.parametrize(
    ("args", "confirm", "want"),
    [
        # issue 16: re-add this member, one plan; no bitmap → --add (a full recovery)
        (
            ["re-add", "--device", "nvme2n1"],
            "nvme2n1",
            [("--fail", "/dev/nvme2n1"), ("--remove", "/dev/nvme2n1"), ("--add", "/dev/nvme2n1")],
        ),
        # replace this member by fail + remove + add, when asked for
        (
            [
                "replace",
                "--device",
                "nvme2n1",
                "--with",
                "nvme4n1",
                "--method",
                "fail-remove-add",
                "--unqualified",
                "nvme4n1",
            ],
            "nvme4n1",
            [("--fail", "/dev/nvme2n1"), ("--remove", "/dev/nvme2n1"), ("--add", "/dev/nvme4n1")],
        ),
        # replace a working member: hot (--replace keeps the redundancy)
        (
            ["replace", "--device", "nvme2n1", "--with", "nvme4n1", "--unqualified", "nvme4n1"],
            "nvme4n1",
            [
                ("--add-spare", "/dev/nvme4n1"),
                ("--replace", "/dev/nvme2n1", "--with", "/dev/nvme4n1"),
            ],
        ),
    ],
)
def test_replace_and_re_add_plans_pass_apply_and_run_as_previewed(
    fake_arrays: FakeBackend,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    confirm: str,
    want: list[tuple[str, ...]],
) -> None:
    out = tmp_path / "plan.json"
    assert main(["plan", "member", *args, "--array", "md127", "--json", "--out", str(out)]) == 0
    saved = json.loads(out.read_text())
    assert saved["preflight"]["refusals"] == []
    assert [tuple(s["argv"][2:]) for s in saved["steps"]] == want
    fake_arrays.calls.clear()
    # apply re-checks the allowlist, argv/params agreement and pre-flight, then runs exactly this
    assert main(["apply", str(out), "--confirm", confirm]) == 0, capsys.readouterr()
    ran = [a for a in fake_arrays.ran if a[0] == "mdadm"]
    assert ran == [tuple(s["argv"]) for s in saved["steps"]]


def test_plan_refuses_an_xfs_under_300_mib_with_the_size_and_the_limit(
    fake: FakeBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    """mkfs.xfs refuses under 300 MiB ("Filesystem must be larger than 300MB"): `raidman plan`
    says so itself, and writes no plan."""
    argv = [*KEY[: KEY.index("--fs")], "--fs", "xfs", "--lvm", "--vg", "small", "--json"]
    assert main([*argv, "--lv-size", "256M"]) == 3  # refused, as every refusal (issue 39)
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == (
        "raidman plan: refused: XFS needs at least 300 MiB: /dev/small/data would hold at most "
        "256 MiB (mkfs.xfs refuses it: 'Filesystem must be larger than 300MB'); choose ext4 or a "
        "bigger device\nraidman plan: nothing was run\n"
    )
    assert main([*argv, "--lv-size", "300M"]) == 0
    assert json.loads(capsys.readouterr().out)["steps"][-1]["argv"][0] == "mkfs.xfs"


def test_every_refusal_is_said_last_in_one_shape_with_one_code(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39: refusals printed in two orders with exit 2 or 3 — the plan's builder said it
    first on stderr (2), pre-flight only inside the plan on stdout (3). Now every refusal ends
    on stderr: "raidman plan: refused: …" then "nothing was run", exit 3."""
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))
    built = ["plan", "mount", "--device", "dm-0", "--mountpoint", "/mnt/x", "--demo", "raid10-evo"]
    preflight = ["plan", "create-array", "--level", "1", "--devices", "sda1,sdc1",
                 "--demo", "raid10-evo"]  # fmt: skip
    for argv in (built, preflight):
        assert main(argv) == 3, argv
        out, err = capsys.readouterr()
        lines = err.splitlines()
        assert lines[-1] == "raidman plan: nothing was run", err
        assert lines[:-1] and all(x.startswith("raidman plan: refused: ") for x in lines[:-1])
    assert "REFUSED sda1: is mounted on /boot/efi [mounted]" in out  # the plan, above it
    assert lines[0] == "raidman plan: refused: sda1: is mounted on /boot/efi [mounted] (pre-flight)"
