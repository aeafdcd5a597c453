"""The metrics textfile is written the one safe way (issue 23, items 1 and 6): never through a
symlink or over another user's file, and a lone surrogate in a label does not crash the write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.metrics import TextfileError, write_textfile

NOBODY = 65534


def test_a_lone_surrogate_in_a_label_is_written_as_replacement(tmp_path: Path) -> None:
    p = write_textfile(tmp_path, 'raidman_disk_info{model="WD\udcff"} 1\n')
    assert p.read_text(encoding="utf-8") == 'raidman_disk_info{model="WD\ufffd"} 1\n'


def test_a_symlink_at_the_prom_file_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / "raidman.prom").symlink_to(victim)
    with pytest.raises(TextfileError, match="symlink"):
        write_textfile(tmp_path, "x 1\n")
    assert victim.read_text() == "keep"


def test_a_fifo_at_the_prom_file_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "raidman.prom")
    with pytest.raises(TextfileError, match="FIFO"):
        write_textfile(tmp_path, "x 1\n")


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_another_users_prom_file_is_not_replaced(tmp_path: Path) -> None:
    f = tmp_path / "raidman.prom"
    f.write_text("theirs")
    os.chown(f, NOBODY, NOBODY)
    with pytest.raises(TextfileError, match="owned by uid 65534"):
        write_textfile(tmp_path, "x 1\n")
    assert f.read_text() == "theirs"
    # node_exporter's directory belongs to prometheus on Debian: writing into it is fine
    d = tmp_path / "collector"
    d.mkdir()
    os.chown(d, NOBODY, NOBODY)
    assert write_textfile(d, "x 1\n").read_text() == "x 1\n"
