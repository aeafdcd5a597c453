"""``monitor --poll`` and ``--interval`` are finite numbers in a sane range (issue 23, item 10):
``--poll inf`` tracebacked and ``--poll 0`` spun a core at 99.8 %; now each is a usage error."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main


@pytest.mark.parametrize(
    "argv",
    [
        ["--poll", "inf"],
        ["--poll", "0"],
        ["--poll", "nan"],
        ["--poll", "-1"],
        ["--poll", "1e9"],
        ["--poll", "soon"],
        ["--interval", "inf"],
        ["--interval", "0"],
    ],
)
def test_out_of_range_seconds_are_a_usage_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as e:
        main(["monitor", "--once", "--demo", "raid6-wd", *argv])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {argv[0]}" in err and "Traceback" not in err


def test_a_sane_poll_is_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))
    assert main(["monitor", "--once", "--demo", "raid6-wd", "--poll", "0.5"]) == 0
