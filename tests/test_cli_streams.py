"""The command line's one boundary to the terminal (issue 37, item 1): whatever a command
prints, to stdout or stderr, reaches the terminal with its control characters escaped
(app.escape.guard_streams, installed by the console script), as the TUI's every rendered line
does (tests/ui/test_terminal_guard.py)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from app.escape import EscapingStream

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = "a\x1b]0;PWNED\x07\x1b[2J\x9b6n\u202eb\rc"


def test_the_stream_escapes_controls_and_keeps_lines_and_tabs() -> None:
    buf = io.StringIO()
    s = EscapingStream(buf)
    assert s.write(f"x\t{HOSTILE}\n") == len(HOSTILE) + 3
    assert buf.getvalue() == "x\ta\\x1b]0;PWNED\\x07\\x1b[2J\\x9b6n\\u202eb\\x0dc\n"
    s.write("plain é 中\n")
    assert buf.getvalue().endswith("plain é 中\n")


def test_a_command_that_prints_raw_text_reaches_the_terminal_escaped() -> None:
    """A command that forgot to escape (here one replaced by a print of raw bytes, on both
    streams): the console script's streams escape it."""
    code = (
        "import sys\n"
        "import app.commands.report as r\n"
        f"r.run = lambda args: print({HOSTILE!r}) or print({HOSTILE!r}, file=sys.stderr) or 0\n"
        "from app.cli import entry\n"
        "sys.argv = ['raidman', 'report', '--demo']\n"
        "sys.exit(entry())\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, timeout=60, check=False
    )
    assert p.returncode == 0, p.stderr
    for stream in (p.stdout, p.stderr):
        text = stream.decode()
        assert text == "a\\x1b]0;PWNED\\x07\\x1b[2J\\x9b6n\\u202eb\\x0dc\n", text
