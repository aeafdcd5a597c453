"""After the TUI the process ends at once (issue 44: on ``big`` the interpreter's teardown of
~170,000 objects made ``q`` take seconds on a loaded machine), and still does what an exit
must: waits for threads that are not daemons, runs the atexit handlers, flushes the streams."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import atexit, sys, threading, time
from pathlib import Path
from app.cli import exit_now

out = Path(sys.argv[1])

class Torn:
    def __del__(self):  # runs only if the interpreter tears its objects down one by one
        (out / "torn-down").write_text("yes")

keep = Torn()
atexit.register(lambda: (out / "atexit").write_text("ran"))

def step():
    time.sleep(0.3)
    (out / "thread").write_text("finished")

threading.Thread(target=step).start()
print("flushed", end="")
exit_now(3)
"""


def test_exit_now_skips_the_teardown_and_keeps_what_an_exit_does(tmp_path: Path) -> None:
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=30,
        check=False,
    )
    assert p.returncode == 3, p.stderr
    assert p.stdout == "flushed"  # a block-buffered stdout (a pipe) was flushed
    assert (tmp_path / "thread").read_text() == "finished"  # the thread was waited for
    assert (tmp_path / "atexit").read_text() == "ran"
    assert not (tmp_path / "torn-down").exists()  # no object-by-object teardown
