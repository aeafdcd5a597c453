"""Issue 37's plan-file attacks, each refused: a mount point reached through another user's
symlink or directory (item 6), a saved wipe plan that records no disk (item 7), a plan file
another user owns or can change (apply), and what a mount point may be (item 5)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.backend import CommandResult
from app.cli import main
from app.plans.builders.lifecycle import build_wipe
from app.plans.guards.identity import record_disks
from app.plans.guards.mountpoints import mountpoint_refusals, prefixes
from app.plans.ops.storage import mountpoint_problem
from backends.simulated import SimClock, SimulatedBackend


class StatBackend:
    """Answers ``stat -c`` with the lines given (what a hostile machine's filesystem says)."""

    def __init__(self, lines: dict[str, str]) -> None:
        self.lines = lines
        self.calls: list[list[str]] = []

    def run(
        self, argv: list[str], stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        self.calls.append(argv)
        paths = [a for a in argv[4:]]
        out = "".join(self.lines[p] + "\n" for p in paths if p in self.lines)
        missing = [p for p in paths if p not in self.lines]
        err = "".join(f"stat: cannot statx '{p}': No such file or directory\n" for p in missing)
        return CommandResult(tuple(argv), 1 if missing else 0, out, err)


def test_prefixes_are_every_directory_on_the_way() -> None:
    assert prefixes("/srv/alice/data") == ["/", "/srv", "/srv/alice", "/srv/alice/data"]


def test_a_mount_point_through_another_user_s_symlink_is_refused() -> None:
    """Root created a directory inside a root-only 0700 directory through another user's
    symlink: ``mkdir -p /srv/alice/data`` with /srv/alice -> /root/private."""
    be = StatBackend(
        {
            "/": "directory|0|755|/",
            "/srv": "directory|0|755|/srv",
            "/srv/alice": "symbolic link|1000|777|/srv/alice",
        }
    )
    (issue,) = mountpoint_refusals(be, "/srv/alice/data")  # type: ignore[arg-type]
    assert issue.code == "mountpoint" and "symlink" in issue.message and "uid 1000" in issue.message


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("directory|1000|755|/srv/alice", "belongs to uid 1000"),
        ("directory|0|777|/srv/alice", "writable by group or others"),
        ("regular file|0|644|/srv/alice", "not a directory"),
    ],
)
def test_a_directory_another_user_can_change_is_refused(line: str, why: str) -> None:
    be = StatBackend({"/": "directory|0|755|/", "/srv": "directory|0|755|/srv", "/srv/alice": line})
    issues = mountpoint_refusals(be, "/srv/alice/data")  # type: ignore[arg-type]
    assert issues and why in issues[0].message


def test_root_s_directories_and_missing_ones_pass() -> None:
    be = StatBackend({"/": "directory|0|755|/", "/srv": "directory|0|755|/srv"})
    assert mountpoint_refusals(be, "/srv/data/x") == []  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "path", ["/root", "/root/x", "/home", "/home/alice", "/opt", "/opt/x", "/tmp/x", "/var/tmp/x",
             "/srv", "/mnt", "/media", "/var/lib/mysql", "/etc/x", "/usr/local"],
)  # fmt: skip
def test_a_data_filesystem_is_not_mounted_where_the_system_and_its_users_keep_theirs(
    path: str,
) -> None:
    """Issue 37 item 5: mountpoint_problem allowed /root, /home, /opt, /srv, /tmp, /var/tmp,
    /mnt and /media."""
    assert mountpoint_problem(path) is not None


@pytest.mark.parametrize("path", ["/srv/data", "/mnt/backup", "/media/usb1", "/data", "/raid/a"])
def test_where_a_data_filesystem_belongs(path: str) -> None:
    assert mountpoint_problem(path) is None


def test_a_saved_wipe_plan_records_the_disk_it_erases() -> None:
    """Issue 37 item 7: ``plan wipe`` recorded ``disks: []``: saved, it erased whatever disk
    had the name later."""
    be = SimulatedBackend.from_scenario("retire", clock=SimClock.manual())
    m = be.probe()
    plan = record_disks(build_wipe(m, "sdc1"), m)
    assert plan.disks is not None and [d.name for d in plan.disks] == ["sdc"]
    assert plan.disks[0].serial


def _plan_file(tmp_path: Path) -> Path:
    out = tmp_path / "plan.json"
    rc = main(
        ["plan", "sync", "limits", "--max", "400000", "--demo", "raid10-evo", "--out", str(out)]
    )
    assert rc == 0
    return out


def test_a_plan_file_another_user_owns_or_can_change_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37: ``apply`` never questioned a plan file owned by another user in a directory
    that user can write."""
    d = tmp_path / "plans"
    d.mkdir(mode=0o755)
    path = _plan_file(d)
    os.chmod(path, 0o600)
    capsys.readouterr()
    argv = ["apply", str(path), "--yes", "--dry-run", "--demo", "raid10-evo"]
    assert main(argv) == 0, capsys.readouterr().err  # ours, in a directory of ours: fine
    capsys.readouterr()
    real = os.geteuid()
    with monkeypatch.context() as mp:  # someone else runs it: the file is not theirs nor root's
        mp.setattr("app.statefiles._euid", lambda: real + 1 if real else 4242)
        if real == 0:
            os.chown(path, 1000, 1000)
        assert main(argv) == 3
        err = capsys.readouterr().err
        assert "owned by uid" in err and "nothing was run" in err
        if real == 0:
            os.chown(path, 0, 0)
    os.chmod(path, 0o666)
    assert main(argv) == 3
    assert "writable by group or others" in capsys.readouterr().err
    os.chmod(path, 0o600)
    os.chmod(d, 0o777)  # anyone may swap the file for another
    assert main(argv) == 3
    assert "above it is writable by group or others" in capsys.readouterr().err
    os.chmod(d, 0o755)
    assert json.loads(path.read_text())["kind"] == "sync-limits"
