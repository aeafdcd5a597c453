"""The command line is read with the parser of the one subcommand it names: the same result as
the whole parser's, without importing the code of the commands that will not run."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.cli import _demo_before_subcommand, build_parser, named_command, parse_command_line

LINES = [
    [],
    ["--demo"],
    ["--demo", "big"],
    ["--demo", "report"],
    ["--demo=big", "report", "--json", "--no-smart"],
    ["report", "--demo", "raid10-evo", "--json"],
    ["--host", "report", "report"],  # a host named like a subcommand: its value first
    ["--demo", "raid10-evo", "monitor", "--once"],
    ["--demo", "plan", "create", "--level", "1", "--devices", "/dev/sdb", "/dev/sdc"],
    ["capture", "--demo", "raid10-evo"],
    ["metrics", "--demo"],
]


@pytest.mark.parametrize("argv", LINES, ids=[" ".join(a) or "(none)" for a in LINES])
def test_one_subcommands_parser_reads_a_line_as_the_whole_one_does(argv: list[str]) -> None:
    try:
        whole = vars(build_parser().parse_args(_demo_before_subcommand(argv)))
    except SystemExit:
        with pytest.raises(SystemExit):
            parse_command_line(argv)
        return
    assert vars(parse_command_line(argv)) == whole


def test_the_subcommand_is_found_after_the_top_levels_values() -> None:
    assert named_command(["--host", "report", "plan", "create"]) == "plan"
    assert named_command(["--demo", "raid10-evo"]) is None
    assert named_command(["report", "--help"]) is False  # help: the whole parser says it
    assert named_command(["--host"]) is False  # an error: the whole parser reports it


def test_errors_are_the_whole_parsers(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        parse_command_line(["report", "--no-such-option"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --no-such-option" in err
    assert err.count("usage:") == 1  # the probe said nothing of its own


def test_report_does_not_import_the_other_commands() -> None:
    code = (
        "import sys; from app.cli import parse_command_line;"
        "parse_command_line(['--demo', 'report', '--json']);"
        "print(sorted(m for m in sys.modules if m.startswith('app.commands.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = out.stdout.strip()
    assert "app.commands.report" in loaded
    for other in ("plan", "apply", "monitor", "metrics"):
        assert f"app.commands.{other}'" not in loaded
