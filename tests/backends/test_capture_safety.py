"""``raidman capture DIR`` writes the one safe way, and the replay loader never blocks (issue 23,
items 1 and 10): no file written through a symlink planted in DIR, no DIR another user can
write into, and a FIFO in a capture refused instead of hanging the replay."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli import main
from backends.linux.source import CaptureError, ReplaySource

NOBODY = 65534


def test_planted_symlinks_in_the_capture_are_not_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cap = tmp_path / "cap"
    cap.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (cap / "meta.json").symlink_to(victim)
    assert main(["capture", str(cap), "--no-smart"]) == 1
    err = capsys.readouterr().err
    assert "symlink" in err and "Traceback" not in err
    assert victim.read_text() == "keep"


def test_a_symlinked_files_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cap = tmp_path / "cap"
    cap.mkdir(mode=0o700)
    elsewhere = tmp_path / "etc"
    elsewhere.mkdir()
    (cap / "files").symlink_to(elsewhere)
    assert main(["capture", str(cap), "--no-smart"]) == 1
    assert "symlink" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == []


def test_a_world_writable_capture_dir_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cap = tmp_path / "cap"
    cap.mkdir()
    os.chmod(cap, 0o777)
    assert main(["capture", str(cap), "--no-smart"]) == 1
    assert "writable by group or others" in capsys.readouterr().err
    assert list(cap.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_capture_dir_of_another_user_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cap = tmp_path / "cap"
    cap.mkdir(mode=0o755)
    os.chown(cap, NOBODY, NOBODY)
    assert main(["capture", str(cap), "--no-smart"]) == 1
    assert "owned by uid 65534" in capsys.readouterr().err
    assert list(cap.iterdir()) == []


def _in_time(fn: Callable[[], object]) -> object:
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(_catch(fn)), daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "the replay blocked on a FIFO"
    return out[0]


def _catch(fn: Callable[[], object]) -> object:
    try:
        return fn()
    except Exception as e:
        return e


def test_fifos_in_a_capture_are_refused_not_waited_on(tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    assert main(["capture", str(cap), "--no-smart"]) == 0
    (cap / "files" / "proc" / "mdstat").unlink(missing_ok=True)
    (cap / "files" / "proc").mkdir(parents=True, exist_ok=True)
    os.mkfifo(cap / "files" / "proc" / "mdstat")
    src = ReplaySource(cap)
    assert _in_time(lambda: src.read_text("/proc/mdstat")) is None
    assert any("FIFO" in n.message for n in src.take_notes())
    (cap / "commands.json").unlink()
    os.mkfifo(cap / "commands.json")
    err = _in_time(lambda: ReplaySource(cap))
    assert isinstance(err, CaptureError) and "FIFO" in str(err)


@pytest.mark.parametrize("link", ["files/proc", "files/proc/self"])
def test_a_symlinked_directory_inside_a_replayed_capture_is_not_followed(
    tmp_path: Path, link: str
) -> None:
    """Only the last component was opened O_NOFOLLOW (issue 37): a capture whose
    ``files/proc`` (or any directory below ``files``) is a symlink read what it points at, here
    another tree, on a real machine /proc or /etc. Each directory is opened O_NOFOLLOW now:
    refused with a note, the file not read."""
    import shutil

    from tests.corpus import FIXTURES

    cap = tmp_path / "cap"
    shutil.copytree(FIXTURES / "captures" / "raid5-raid10-syncing", cap)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(cap / link, elsewhere)
    for f in elsewhere.rglob("*"):
        if f.is_file():
            f.write_text("SECRET\n")
    shutil.rmtree(cap / link)
    (cap / link).symlink_to(elsewhere)
    src = ReplaySource(cap)
    assert src.read_text("/proc/self/mountinfo") is None
    notes = [n.message for n in src.take_notes()]
    assert any("is not a directory (a symlink is never followed)" in n for n in notes), notes
    assert src.read_text("/sys/block/md127/md/level") == "raid5\n"  # the rest of it still read
