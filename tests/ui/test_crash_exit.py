"""An IMSM container under the cursor opens the member and sync wizards on its first volume
(a container is no target of member or sync actions; ``a``/``t`` on it killed the TUI with
InvalidSelectValueError), and an uncaught error in the TUI ends with a non-zero status and a
line on stderr after the terminal is restored."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Select

from app.cli import tui_exit_status
from app.ui.app import RaidmanApp
from app.ui.screens.wizards import MemberWizard, SyncWizard
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_ready

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("key", "wizard", "field"), [("a", MemberWizard, "#mb-array"), ("t", SyncWizard, "#sy-array")]
)
@pytest.mark.parametrize("node", ["dev:md127", "member:md127:sda", "memberof:sda>md127"])
async def test_container_opens_wizard_on_its_volume(
    key: str, wizard: type, field: str, node: str
) -> None:
    be = SimulatedBackend.from_scenario("imsm", clock=SimClock.manual())
    app = RaidmanApp(be, probe_interval=0, sample_interval=0)
    said: list[str] = []  # every note, as said (a note shown 5 s may be gone on a loaded machine)
    notify = app.notify

    def noting(message: str, *args: Any, **kwargs: Any) -> None:
        said.append(str(message))
        notify(message, *args, **kwargs)

    app.notify = noting  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        assert app.go_to(node)
        await pilot.pause()
        assert app.selected is not None and app.selected.key == node
        await pilot.press(key)
        await pilot.pause()
        assert app._exception is None and app.is_running
        assert isinstance(app.screen, wizard)
        assert app.screen.query_one(field, Select).value == "md126"  # md127's first volume
        assert any("md127 is a container" in m for m in said), said


async def test_uncaught_error_sets_a_nonzero_return_code() -> None:
    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    app = RaidmanApp(be, probe_interval=0, sample_interval=0)

    def boom() -> None:
        raise RuntimeError("forced for the test")

    app.action_audit_log = boom  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="forced"):
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_ready(pilot)
            await pilot.press("L")
            await pilot.pause()
    assert app.return_code == 1
    assert tui_exit_status(app.return_code) == 1
    assert tui_exit_status(0) == 0 and tui_exit_status(None) == 0


FORCED = """
import sys
from app.ui.app import RaidmanApp
def boom(self):
    raise RuntimeError("forced for the test")
RaidmanApp.on_ready = boom
from app.cli import entry
sys.argv = ["raidman", "--demo", "blank"]
sys.exit(entry())
"""


def _in_a_pty(code: str, env: dict[str, str], err: Path, keys: bytes = b"") -> tuple[int, str]:
    """Run ``python -c code`` with a terminal (an 80x24 pty) as stdin, stdout and stderr (where
    Textual draws: without a terminal there the TUI refuses to start); what the terminal got is
    kept in the file ``err``. ``keys`` are typed after 5 s and every 3 s until it ends.
    (exit status, the terminal's text without the screen's escape sequences)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=slave, stdout=slave, stderr=slave,
        env=env, cwd=ROOT,
    )  # fmt: skip
    os.close(slave)
    start = time.monotonic()
    deadline, typed = start + 60, start + 2.0
    seen = bytearray()

    def drain(wait: float) -> str:
        """ "data", "idle" (nothing within ``wait``) or "closed" (all read)."""
        ready, _, _ = select.select([master], [], [], wait)
        if not ready:
            return "idle"
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the pty's other side is closed: all read
            return "closed"
        seen.extend(chunk)
        return "data" if chunk else "closed"

    while proc.poll() is None and time.monotonic() < deadline:
        if drain(0.2) == "closed":
            break
        if keys and time.monotonic() - typed > 3.0:
            os.write(master, keys)
            typed = time.monotonic()
    try:
        rc = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        while drain(0.5) == "data":  # what it wrote before it ended
            pass
    finally:
        os.close(master)
    err.write_bytes(bytes(seen))
    text = err.read_text(errors="replace")
    return rc, re.sub(r"\x1b(\[[0-9;?<>=$]*[A-Za-z~]|\][^\x07]*\x07|[()][A-Z0-9]|.)", "", text)


def _env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "TMPDIR": str(tmp_path)}
    env.pop("RAIDMAN_STATE_DIR", None)
    return env


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a pty")
def test_cli_exit_status_after_uncaught_error(tmp_path: Path) -> None:
    """The console script in a terminal (a pty): status 1 and the line on stderr."""
    rc, err = _in_a_pty(FORCED, _env(tmp_path), tmp_path / "stderr")
    assert rc == 1, err
    assert "RuntimeError" in err and "forced for the test" in err
    assert "raidman: the TUI stopped on an unexpected error (exit status 1)" in err


RUN = """
import sys
from app.cli import entry
sys.argv = ["raidman", *sys.argv[1:]] if len(sys.argv) > 1 else ["raidman", "--demo", "blank"]
sys.exit(entry())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a pty")
def test_demo_leaves_no_temp_dir(tmp_path: Path) -> None:
    """``raidman --demo blank`` (quit with q) and ``report --demo blank`` make their own state
    directory in the temp folder and remove it when they end."""
    temp = tmp_path / "temp"
    temp.mkdir()
    rc, err = _in_a_pty(RUN, _env(temp), tmp_path / "stderr", keys=b"q")
    assert rc == 0, err
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "report", "--demo", "blank"],
        env=_env(temp), cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Disks" in done.stdout
    assert list(temp.iterdir()) == []
