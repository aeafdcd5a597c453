"""The one way raidman writes, appends to and reads a file it trusts (issue 23, items 1, 2, 5
and 10): no symlink followed, no FIFO or device opened to block, owner and mode checked, every
write relative to one descriptor of its directory."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from app import statefiles
from app.statefiles import StateFileError

NOBODY = 65534
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def _done_in_time(fn: Callable[[], object], seconds: float = 5.0) -> None:
    """Run ``fn`` in a thread; fail (instead of hanging the suite) if it does not return."""
    err: list[BaseException] = []

    def go() -> None:
        try:
            fn()
        except BaseException as e:  # handed back to the test
            err.append(e)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "blocked (a FIFO was opened and waited on)"
    if err:
        raise err[0]


def test_output_write_replaces_a_planted_symlink_never_writes_through_it(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("root's file")
    out = tmp_path / "plan.json"
    out.symlink_to(victim)
    with pytest.raises(StateFileError, match="symlink"):
        statefiles.write_text(out, "{}", output=True, what="plan file")
    assert victim.read_text() == "root's file"


@root_only
def test_output_write_refuses_another_users_file(tmp_path: Path) -> None:
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, 0o1777)
    f = d / "plan.json"
    f.write_text("theirs")
    os.chown(f, NOBODY, NOBODY)
    with pytest.raises(StateFileError, match="owned by uid 65534"):
        statefiles.write_text(f, "{}", output=True, what="plan file")
    assert f.read_text() == "theirs"


def test_output_write_in_a_sticky_shared_dir_and_mode(tmp_path: Path) -> None:
    d = tmp_path / "tmp"
    d.mkdir()
    os.chmod(d, 0o1777)
    statefiles.write_text(d / "a.prom", "x 1\n", output=True, mode=0o644, what="metrics file")
    assert (d / "a.prom").read_text() == "x 1\n"
    assert stat.S_IMODE(os.stat(d / "a.prom").st_mode) == 0o644
    assert [p.name for p in d.iterdir()] == ["a.prom"]
    os.chmod(d, 0o777)  # world-writable, not sticky: anyone could swap our file
    with pytest.raises(StateFileError, match="writable by everyone"):
        statefiles.write_text(d / "a.prom", "x 2\n", output=True, what="metrics file")


def test_output_write_over_a_fifo_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "out.json")
    with pytest.raises(StateFileError, match="FIFO"):
        statefiles.write_text(tmp_path / "out.json", "{}", output=True)


def test_append_refuses_fifo_without_blocking(tmp_path: Path) -> None:
    d = tmp_path / "state"
    statefiles.ensure_dir(d)
    os.mkfifo(d / "audit.log")

    def go() -> None:
        with pytest.raises(StateFileError, match="FIFO"):
            statefiles.open_append(d / "audit.log", what="audit log")

    _done_in_time(go)


def test_append_refuses_symlink_hardlink_and_writable_file(tmp_path: Path) -> None:
    d = tmp_path / "state"
    statefiles.ensure_dir(d)
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (d / "audit.log").symlink_to(victim)
    with pytest.raises(StateFileError, match="symlink"):
        statefiles.open_append(d / "audit.log", what="audit log")
    (d / "audit.log").unlink()
    os.link(victim, d / "audit.log")
    with pytest.raises(StateFileError, match="hard links"):
        statefiles.open_append(d / "audit.log", what="audit log")
    (d / "audit.log").unlink()
    (d / "audit.log").write_text("")
    os.chmod(d / "audit.log", 0o666)
    with pytest.raises(StateFileError, match="writable by group or others"):
        statefiles.open_append(d / "audit.log", what="audit log")
    assert victim.read_text() == "keep"


def test_append_in_an_unsafe_directory_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "state"
    d.mkdir()
    os.chmod(d, 0o777)
    with pytest.raises(StateFileError, match="writable by group or others"):
        statefiles.open_append(d / "audit.log", what="audit log")
    assert not (d / "audit.log").exists()


def test_append_creates_0600_and_appends(tmp_path: Path) -> None:
    f = tmp_path / "state" / "audit.log"
    for line in (b"one\n", b"two\n"):
        fd = statefiles.open_append(f, what="audit log")
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    assert f.read_bytes() == b"one\ntwo\n"
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o600


def test_read_trusted_refuses_fifo_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "hosts.toml")

    def go() -> None:
        with pytest.raises(StateFileError, match="FIFO"):
            statefiles.read_trusted(tmp_path / "hosts.toml", what="hosts file")

    _done_in_time(go)


def test_read_trusted_refuses_writable_and_foreign(tmp_path: Path) -> None:
    f = tmp_path / "hosts.toml"
    f.write_text("hosts = []\n")
    os.chmod(f, 0o666)
    with pytest.raises(StateFileError, match="writable by group or others"):
        statefiles.read_trusted(f, what="hosts file")
    os.chmod(f, 0o644)
    assert statefiles.read_trusted(f, what="hosts file") == "hosts = []\n"
    assert statefiles.read_trusted(tmp_path / "none", what="hosts file") is None
    if os.geteuid() == 0:
        os.chown(f, NOBODY, NOBODY)
        with pytest.raises(StateFileError, match="owned by uid 65534"):
            statefiles.read_trusted(f, what="hosts file")


def test_read_trusted_bounds_size(tmp_path: Path) -> None:
    f = tmp_path / "hosts.toml"
    f.write_bytes(b"#" * 2000)
    with pytest.raises(StateFileError, match="larger than 1000 bytes"):
        statefiles.read_trusted(f, what="hosts file", max_bytes=1000)


def test_read_regular_never_blocks_on_a_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "plan.json")

    def go() -> None:
        with pytest.raises(StateFileError, match="FIFO"):
            statefiles.read_regular(tmp_path / "plan.json", what="plan file", max_bytes=100)

    _done_in_time(go)
    (tmp_path / "p").write_bytes(b"x" * 500)
    assert len(statefiles.read_regular(tmp_path / "p", max_bytes=100)) == 101
