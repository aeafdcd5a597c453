"""Nothing from a capture or a demo is run or mailed, and what the monitor runs is root's
(issue 37 item 3, issue 41 item 1).

- ``monitor --replay CAP --test-alert`` ran the capture's mdadm.conf ``PROGRAM`` as root
  (argv ``[PROGRAM, TestMessage, /dev/md127]``) and mailed its ``MAILADDR``;
- ``monitor --test-alert --demo raid6-wd`` delivered "TestMessage event on /dev/md0" through
  the real /usr/sbin/sendmail (the simulated mdadm.conf's ``MAILADDR root``);
- an ``--alert-program`` of another user, mode 0777, ran as root without a word;
- on a machine without arrays ``--test-alert`` exited 1 with no reason.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from app.cli import main
from app.statefiles import StateFileError, check_trusted_path
from backends.linux.notify import run_notifier
from tests.corpus import FIXTURES

NOBODY = 65534  # an unprivileged uid (the tests run as root)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[tuple[str, ...]]:
    """Every argv the monitor hands to the notifier (the program, sendmail). A program of the
    test's own runs for real; anything else (the real sendmail) is only recorded: a regression
    must not mail this machine's root."""
    calls: list[tuple[str, ...]] = []

    def spy(
        argv: Sequence[str], *, env: Mapping[str, str], stdin: str | None, timeout: float
    ) -> tuple[int | None, str]:
        calls.append(tuple(argv))
        if not argv[0].startswith(str(tmp_path)):
            return 0, ""
        return run_notifier(argv, env=env, stdin=stdin, timeout=timeout)

    monkeypatch.setattr("app.commands.monitor.run_notifier", spy)
    return calls


@pytest.fixture(autouse=True)
def _no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "state"))


def _marker_program(path: Path, marker: Path) -> Path:
    path.write_text(f"#!{sys.executable}\nopen({str(marker)!r}, 'a').write('ran\\n')\n")
    path.chmod(0o755)
    return path


def test_replay_runs_no_program_and_mails_no_one_from_the_capture(
    tmp_path: Path, sent: list[tuple[str, ...]], capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 37's bar: ``monitor --replay … --test-alert`` runs no PROGRAM from the capture."""
    marker = tmp_path / "ran"
    prog = _marker_program(tmp_path / "capture-program", marker)
    cap = tmp_path / "cap"
    shutil.copytree(FIXTURES / "captures" / "raid5-raid10-syncing", cap)
    conf = cap / "files" / "etc" / "mdadm" / "mdadm.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text(f"MAILADDR root\nPROGRAM {prog}\n")
    reads = json.loads((cap / "reads.json").read_text())
    reads["/etc/mdadm/mdadm.conf"] = "ok"
    (cap / "reads.json").write_text(json.dumps(reads))

    rc = main(["monitor", "--replay", str(cap), "--test-alert"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert sent == [] and not marker.exists()
    assert "alerts: the log only (--demo/--replay: nothing simulated leaves" in out
    assert "alert: TestMessage /dev/md127" in out  # the log still has it


def test_a_demo_mails_no_one_and_runs_no_program_but_the_command_lines(
    tmp_path: Path, sent: list[tuple[str, ...]], capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 41's bar: ``--test-alert --demo raid6-wd`` delivers no mail through the real
    sendmail (raid6-wd's simulated mdadm.conf has MAILADDR root); raidman.toml's program is not
    used either; the program named on the command line is."""
    conf = tmp_path / "cfg" / "raidman" / "raidman.toml"
    conf.parent.mkdir(parents=True)
    marker = tmp_path / "ran"
    conf_prog = _marker_program(tmp_path / "conf-program", tmp_path / "conf-ran")
    conf.write_text(f'[alerts]\nprogram = "{conf_prog}"\nmailaddr = "ops"\n')
    assert main(["monitor", "--test-alert", "--demo", "raid6-wd"]) == 0
    assert sent == [] and not (tmp_path / "conf-ran").exists()
    assert "the log only (--demo/--replay: nothing simulated leaves" in capsys.readouterr().out

    prog = _marker_program(tmp_path / "cli-program", marker)
    assert (
        main(["monitor", "--test-alert", "--demo", "raid6-wd", "--alert-program", str(prog)]) == 0
    )
    assert sent == [(str(prog), "TestMessage", "/dev/md0")]
    assert marker.read_text() == "ran\n" and not (tmp_path / "conf-ran").exists()


def test_another_users_alert_program_is_refused_at_each_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An --alert-program of another user (0777 or not), or in a directory another user can
    write, never runs; checked at each run, so a program made unsafe after the start is
    refused too."""
    marker = tmp_path / "ran"
    d = tmp_path / "bin"
    d.mkdir()
    prog = _marker_program(d / "alert", marker)
    os.chown(prog, NOBODY, NOBODY)
    prog.chmod(0o777)
    rc = main(["monitor", "--test-alert", "--demo", "raid6-wd", "--alert-program", str(prog)])
    out = capsys.readouterr().out
    assert rc == 1 and not marker.exists()
    assert f"refused alert program {prog}: owned by uid {NOBODY}" in out

    os.chown(prog, 0, 0)
    prog.chmod(0o755)
    os.chown(d, NOBODY, NOBODY)  # the program is root's, its directory another user's
    rc = main(["monitor", "--test-alert", "--demo", "raid6-wd", "--alert-program", str(prog)])
    out = capsys.readouterr().out
    assert rc == 1 and not marker.exists()
    assert f"{d} above it belongs to uid {NOBODY}" in out

    os.chown(d, 0, 0)
    d.chmod(0o777)  # writable by everyone: the program could be renamed over
    assert run_notifier([str(prog)], env={}, stdin=None, timeout=10)[0] is None
    d.chmod(0o755)
    assert run_notifier([str(prog)], env={}, stdin=None, timeout=10) == (0, "")
    assert marker.read_text() == "ran\n"


def test_a_symlink_on_the_way_is_followed_only_when_it_is_roots(tmp_path: Path) -> None:
    """/usr/sbin/sendmail is a symlink to the MTA on most systems: followed, with the same
    checks where it points; a symlink of another user is refused."""
    prog = _marker_program(tmp_path / "mta", tmp_path / "ran")
    link = tmp_path / "sendmail"
    link.symlink_to("mta")
    assert check_trusted_path(link, "x", executable=True) == str(prog)
    os.chown(link, NOBODY, NOBODY, follow_symlinks=False)
    with pytest.raises(StateFileError, match=f"uid {NOBODY}'s symlink"):
        check_trusted_path(link, "x")
    prog.chmod(0o644)
    with pytest.raises(StateFileError, match="not executable"):
        check_trusted_path(prog, "x", executable=True)
    with pytest.raises(StateFileError, match="not an absolute path"):
        check_trusted_path("mta", "x")


def test_test_alert_with_no_array_says_so(
    sent: list[tuple[str, ...]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A machine without md arrays: nothing to watch, said, exit 0 (it exited 1 silently)."""
    prog = _marker_program(tmp_path / "p", tmp_path / "ran")
    rc = main(["monitor", "--test-alert", "--demo", "blank", "--alert-program", str(prog)])
    err = capsys.readouterr().err
    assert rc == 0 and sent == []
    assert "no md arrays on demo: blank: nothing to watch, no test alert sent" in err


def test_a_replay_keeps_its_records_in_a_state_directory_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``monitor --replay`` recorded the capture's disks in this machine's wear database."""
    import argparse
    import tempfile

    from app.commands.backend_options import make_backend

    monkeypatch.delenv("RAIDMAN_STATE_DIR")
    make_backend(argparse.Namespace(replay=str(FIXTURES / "captures" / "raid5-recovering")))
    made = Path(os.environ["RAIDMAN_STATE_DIR"])
    assert made.parent == Path(tempfile.gettempdir()) and made.name.startswith("raidman-demo-")
