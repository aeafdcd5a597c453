"""Safe state-file I/O (issue 11, deliverable 7): owner and mode checked, no symlink followed,
atomic writes, aside copies that never overwrite one another."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from app import statefiles
from app.statefiles import StateFileError


def test_ensure_dir_creates_0700(tmp_path: Path) -> None:
    d = tmp_path / "a" / "state"
    statefiles.ensure_dir(d)
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700


def test_group_or_other_writable_dir_refused(tmp_path: Path) -> None:
    d = tmp_path / "s"
    d.mkdir()
    os.chmod(d, 0o777)
    with pytest.raises(StateFileError, match="writable by group or others"):
        statefiles.write_text(d / "boost.json", "[]")
    assert not (d / "boost.json").exists()
    os.chmod(d, 0o770)
    with pytest.raises(StateFileError, match="writable by group or others"):
        statefiles.check_dir(d)


def test_group_writable_file_refused(tmp_path: Path) -> None:
    f = tmp_path / "boost.json"
    f.write_text("[]")
    os.chmod(f, 0o662)
    with pytest.raises(StateFileError, match="writable by group or others"):
        statefiles.read_text(f)
    with pytest.raises(StateFileError, match="writable by group or others"):
        statefiles.write_text(f, "[1]")
    assert f.read_text() == "[]"


def test_foreign_owner_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "boost.json"
    f.write_text("[]")
    monkeypatch.setattr(statefiles, "_euid", lambda: os.geteuid() + 1)
    with pytest.raises(StateFileError, match="not by the running user"):
        statefiles.read_text(f)


def test_symlinked_file_is_never_followed(tmp_path: Path) -> None:
    target = tmp_path / "victim"
    target.write_text("secret")
    link = tmp_path / "boost.json"
    link.symlink_to(target)
    with pytest.raises(StateFileError, match="symlink"):
        statefiles.read_text(link)
    with pytest.raises(StateFileError, match="symlink"):
        statefiles.write_text(link, "[]")
    assert target.read_text() == "secret"
    assert link.is_symlink()


def test_symlinked_dir_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "state"
    link.symlink_to(real)
    with pytest.raises(StateFileError, match="symlink"):
        statefiles.write_text(link / "boost.json", "[]")
    assert list(real.iterdir()) == []


def test_write_is_atomic_and_private(tmp_path: Path) -> None:
    f = tmp_path / "boost.json"
    statefiles.write_text(f, "one")
    statefiles.write_text(f, "two")
    assert statefiles.read_text(f) == "two"
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["boost.json"]  # no temp file left


def test_missing_file_reads_none(tmp_path: Path) -> None:
    assert statefiles.read_text(tmp_path / "nope") is None


def test_move_aside_never_overwrites(tmp_path: Path) -> None:
    """Two moves in the same second get two names (issue 11: two starts in one second collided)."""
    f = tmp_path / "state.db"
    f.write_text("first")
    a = statefiles.move_aside(f, "corrupt", now=1000)
    f.write_text("second")
    b = statefiles.move_aside(f, "corrupt", now=1000)
    assert a != b
    assert a.read_text() == "first" and b.read_text() == "second"
    assert not f.exists()
    assert a.name == "state.db.corrupt-1000" and b.name == "state.db.corrupt-1000-2"


def test_state_dir_under_a_world_writable_parent_refused(tmp_path: Path) -> None:
    """Another user could rename the state dir away and put their own in its place."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.raises(StateFileError, match="above it is writable by group or others"):
        statefiles.ensure_dir(shared / "raidman")
    os.chmod(shared, 0o1777)  # sticky, like /tmp: others cannot rename our directory
    statefiles.ensure_dir(shared / "raidman")


def test_unsafe_dir_refused_even_without_the_file(tmp_path: Path) -> None:
    d = tmp_path / "s"
    d.mkdir()
    os.chmod(d, 0o757)
    with pytest.raises(StateFileError, match="writable by group or others"):
        statefiles.read_text(d / "boost.json")
