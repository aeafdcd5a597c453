"""Sources: the host (real files and processes), recording and replaying them."""

from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any

import pytest

from backends.linux.source import (
    NOT_FOUND,
    TIMED_OUT,
    CaptureError,
    HostSource,
    RecordingSource,
    ReplaySource,
)


def test_host_run_missing_program_is_127() -> None:
    r = HostSource().run(["raidman-no-such-program-xyz", "--help"])
    assert r.returncode == NOT_FOUND
    assert "not found" in r.stderr


def test_host_run_timeout_is_a_result_not_an_exception() -> None:
    r = HostSource().run(["sleep", "5"], timeout=0.2)
    assert r.returncode == TIMED_OUT
    assert "timed out" in r.stderr
    assert r.duration_s < 4


def test_host_run_passes_stdin_and_captures_output() -> None:
    r = HostSource().run(["cat"], stdin="8192\n")
    assert r.ok and r.stdout == "8192\n"


def test_host_read_text_absent_and_present(tmp_path: Path) -> None:
    src = HostSource()
    assert src.read_text(str(tmp_path / "absent")) is None
    (tmp_path / "level").write_text("raid5\n")
    assert src.read_text(str(tmp_path / "level")) == "raid5\n"
    assert src.listdir(str(tmp_path)) == ("level",)
    assert src.listdir(str(tmp_path / "nodir")) == ()
    assert src.take_notes() == ()


def test_host_permission_denied_becomes_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """We run as root in CI, so EACCES is injected at open() for one path."""
    target = tmp_path / "secret"
    target.write_text("x")
    real_open = builtins.open

    def fake_open(file: Any, *a: Any, **k: Any) -> Any:
        if str(file) == str(target):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr(builtins, "open", fake_open)
    src = HostSource()
    assert src.read_text(str(target)) is None
    notes = src.take_notes()
    assert len(notes) == 1 and "permission denied" in notes[0].message
    assert str(target) in notes[0].message
    assert src.take_notes() == ()  # drained


def test_record_then_replay_round_trip(tmp_path: Path) -> None:
    sysdir = tmp_path / "sys"
    sysdir.mkdir()
    (sysdir / "a").write_text("1\n")
    (sysdir / "link").symlink_to("a")
    cap = tmp_path / "cap"
    rec = RecordingSource(HostSource(), cap)
    assert rec.read_text(str(sysdir / "a")) == "1\n"
    assert rec.read_text(str(sysdir / "gone")) is None
    assert rec.listdir(str(sysdir)) == ("a", "link")
    assert rec.readlink(str(sysdir / "link")) == "a"
    r = rec.run(["echo", "hello"])
    missing = rec.run(["raidman-no-such-program-xyz"])
    rec.disk_io()
    rec.flush()

    rep = ReplaySource(cap)
    assert rep.read_text(str(sysdir / "a")) == "1\n"
    assert rep.read_text(str(sysdir / "gone")) is None
    assert rep.listdir(str(sysdir)) == ("a", "link")
    assert rep.readlink(str(sysdir / "link")) == "a"
    assert rep.run(["echo", "hello"]).stdout == r.stdout == "hello\n"
    assert rep.run(["raidman-no-such-program-xyz"]).returncode == missing.returncode == NOT_FOUND
    other = rep.run(["echo", "other"])
    assert other.returncode == NOT_FOUND and "not in capture" in other.stderr
    meta = json.loads((cap / "meta.json").read_text())
    assert (rep.uname(), rep.now()) == ((meta["host"], meta["kernel"]), meta["time"])
    # the file really is stored under files/<absolute path>
    assert (cap / "files" / str(sysdir / "a").lstrip("/")).read_text() == "1\n"


def test_replay_serves_recorded_permission_denied_as_note(tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "meta.json").write_text('{"host": "h", "kernel": "k", "time": 5.0, "euid": 1000}')
    (cap / "reads.json").write_text('{"/sys/block/md0/md/level": "EACCES"}')
    rep = ReplaySource(cap)
    assert rep.read_text("/sys/block/md0/md/level") is None
    notes = rep.take_notes()
    assert [n.source for n in notes] == ["sysfs"]
    assert "permission denied" in notes[0].message


def test_replay_of_non_capture_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CaptureError):
        ReplaySource(tmp_path)


def test_replay_matches_lsblk_with_other_columns(tmp_path: Path) -> None:
    """A capture made with an older column list still answers today's lsblk call."""
    cap = tmp_path / "cap"
    rec = RecordingSource(HostSource(), cap)
    rec.run(["echo", "-o", "A,B"])
    rec.flush()
    rep = ReplaySource(cap)
    assert rep.run(["echo", "-o", "A,B,C"]).stdout == "-o A,B\n"
    assert rep.run(["echo", "-x", "A,B,C"]).returncode == NOT_FOUND
