"""``plan --out`` and ``apply`` open their file the one safe way (issue 23, items 1 and 10):
``--out`` never writes through a symlink or over another user's file; ``apply FIFO`` is refused
at once instead of hanging."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from tests.plans.test_cli import KEY, fake  # noqa: F401 - the fixture

NOBODY = 65534
pytestmark = pytest.mark.usefixtures("fake")  # plan and apply on a fake machine


def test_plan_out_does_not_write_through_a_symlink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "shadow"
    victim.write_text("root:x:0:\n")
    out = tmp_path / "plan.json"
    out.symlink_to(victim)
    assert main([*KEY, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "symlink" in err and "Traceback" not in err
    assert victim.read_text() == "root:x:0:\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_plan_out_does_not_replace_another_users_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "plan.json"
    out.write_text("theirs")
    os.chown(out, NOBODY, NOBODY)
    assert main([*KEY, "--out", str(out)]) == 1
    assert "owned by uid 65534" in capsys.readouterr().err
    assert out.read_text() == "theirs"


def test_plan_out_then_apply_still_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "plan.json"
    assert main([*KEY, "--out", str(out)]) == 0
    assert json.loads(out.read_text())["steps"]
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    assert main(["apply", str(out), "--dry-run"]) == 0


def test_apply_of_a_fifo_is_refused_not_hung(tmp_path: Path) -> None:
    fifo = tmp_path / "plan.json"
    os.mkfifo(fifo)
    env = {**os.environ, "RAIDMAN_STATE_DIR": str(tmp_path / "state")}
    r = subprocess.run(
        [sys.executable, "-m", "app.cli", "apply", str(fifo), "--demo", "blank", "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert r.returncode == 2, r.stderr
    assert "FIFO" in r.stderr and "Traceback" not in r.stderr
