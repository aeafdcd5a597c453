"""No byte from a backend reaches the terminal raw (issue 37, item 1).

The mdstat tab wrote /proc/mdstat into a ``Log`` as read: a capture (``--replay``) or a
``--host`` set the terminal's title (OSC 0), cleared the screen (``ESC[2J``) and wrote the
clipboard (OSC 52). The App's line filter (app/ui/terminal_guard.py) is now the one boundary
every rendered line crosses before the terminal.

These tests look at the bytes Textual writes (a driver that records them instead of a
terminal), not at the widgets' text: a hostile capture carries the payload in /proc/mdstat,
every lsblk model/serial/label, the kernel log, SMART's model name and lvm's stderr (a note),
and the walk shows every tab for a disk, an array and a logical volume.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.drivers.headless_driver import HeadlessDriver
from textual.filter import LineFilter
from textual.widgets import Log, Static

from app.kernel_log import journal_argv
from app.ui.app import RaidmanApp
from app.ui.screens.main import MdstatView
from app.ui.terminal_guard import GUARD
from backends.replay import ReplayBackend
from tests.corpus import FIXTURES
from tests.ui.helpers import screen_lines, wait_for, wait_ready

# the sequences a hostile capture sends: the terminal's title, a cleared screen, the clipboard,
# a carriage return over the line, a right-to-left override, a C1 CSI
HOSTILE = "\x1b]0;PWNED\x07\x1b[2J\x1b]52;c;UFdORUQ=\x07\rEVIL\u202e\x9b6n"
RAW = ("\x1b]0;", "\x1b]2;", "\x1b]52;", "\x1b[2J", "\x1b[6n", "\u202e", "\x9b", "\rEVIL")


class RecordingDriver(HeadlessDriver):
    """A driver that keeps what Textual writes to the terminal (a headless one writes nothing)."""

    written: list[str]

    @property
    def is_headless(self) -> bool:
        return False

    def write(self, data: str) -> None:
        if not hasattr(self, "written"):
            self.written = []
        self.written.append(data)


def terminal_output(app: App[Any]) -> str:
    driver = app._driver
    assert isinstance(driver, RecordingDriver)
    return "".join(getattr(driver, "written", []))


def hostile_capture(tmp_path: Path) -> Path:
    cap = tmp_path / "cap"
    shutil.copytree(FIXTURES / "captures" / "raid5-raid10-syncing", cap)
    mdstat = cap / "files" / "proc" / "mdstat"
    mdstat.write_text(
        mdstat.read_text().replace("unused devices: <none>", f"unused devices: <none> MD{HOSTILE}")
    )
    cmds = json.loads((cap / "commands.json").read_text())

    def poison(devs: list[dict[str, object]]) -> None:
        for d in devs:
            if d.get("model") is not None or d.get("type") == "disk":
                d["model"] = f"MODEL{HOSTILE}"
                d["serial"] = f"SER{HOSTILE}"
            d["label"] = f"LBL{HOSTILE}"
            poison(d.get("children", []))  # type: ignore[arg-type]

    for c in cmds:
        if c["argv"][0] == "lsblk":
            doc = json.loads(c["stdout"])
            poison(doc["blockdevices"])
            c["stdout"] = json.dumps(doc)
        elif c["argv"][0] == "lvm":
            c["returncode"], c["stderr"] = 5, f"NOTE{HOSTILE}\n"
        elif c["argv"][:2] == ["smartctl", "-j"]:
            doc = json.loads(c["stdout"])
            doc["model_name"] = f"SMART{HOSTILE}"
            c["stdout"] = json.dumps(doc)
    klog = [
        {"MESSAGE": f"md/raid:md127: KLOG{HOSTILE} nvme0n1p1", "__REALTIME_TIMESTAMP": "1"},
        {"MESSAGE": f"nvme nvme0: KLOG{HOSTILE}", "__MONOTONIC_TIMESTAMP": "2000000"},
    ]
    cmds.append(
        {
            "argv": list(journal_argv()),
            "returncode": 0,
            "stdout": "".join(json.dumps(x) + "\n" for x in klog),
            "stderr": "",
        }
    )
    (cap / "commands.json").write_text(json.dumps(cmds))
    return cap


def assert_nothing_raw(out: str) -> None:
    for seq in RAW:
        assert seq not in out, f"{seq!r} reached the terminal"
    # what is left once Textual's own sequences are taken out (CSI: moves, colours, modes;
    # OSC 8 links and OSC 22 pointer shapes) holds no control character at all
    rest = re.sub(r"\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]", "", out)
    rest = re.sub(r"\x1b\](?:8|22);[^\x07\x1b]*(?:\x07|\x1b\\)", "", rest)
    left = sorted({f"U+{ord(c):04X}" for c in rest if c != "\n" and not c.isprintable()})
    assert left == [], left


async def test_a_hostile_capture_reaches_no_widget_raw(tmp_path: Path) -> None:
    """issue 37's bar: a capture's mdstat escape does not reach the terminal title."""
    backend = ReplayBackend(hostile_capture(tmp_path))
    app = RaidmanApp(backend, probe_interval=0, sample_interval=1.0)
    app.driver_class = RecordingDriver
    async with app.run_test(headless=False, size=(140, 45)) as pilot:
        await wait_ready(pilot)
        seen: list[str] = []

        async def look(tab: str, target: str | None = None, until: str | None = None) -> None:
            if target is not None:
                app.go_to(target)
            app.show_tab(tab)
            await pilot.pause()
            if until is not None:  # a tab read in its worker: until its text is on screen
                await wait_for(pilot, lambda: until in "\n".join(screen_lines(app)), 10.0)
            seen.extend(screen_lines(app))

        for target in ("nvme0n1", "md127", "dm-0"):
            await look("details", target)
        for tab in ("sync", "findings", "wear", "events"):
            await look(tab)
        # the mdstat tab reads /proc/mdstat again at each sample while it is shown
        await look("mdstat", until="MD\\x1b]0;")
        await wait_for(pilot, lambda: app.main.query_one(MdstatView)._text != 0, 10.0)
        app.refresh_sample()
        await pilot.pause(0.2)
        await look("live", "nvme0n1", until="KLOG\\x1b]0;")
        shown = "\n".join(seen)
        out = terminal_output(app)

    assert_nothing_raw(out)
    # every kind of backend text was on the screen, as its visible escape
    for tag in ("MD", "MODEL", "SER", "KLOG", "NOTE", "LBL"):
        assert f"{tag}\\x1b]0;" in shown, tag
    assert "\\x1b[2J" in shown and "\\u202e" in shown
    assert "<none> MD\\x1b]0;PWNED\\x07\\x1b[2J\\x1b]" in shown  # the mdstat tab, not cut


class Careless(App[None]):
    """A widget that forgets to escape (as the mdstat tab did): the boundary still holds."""

    def compose(self) -> ComposeResult:
        yield Static(f"static {HOSTILE} end", markup=False)
        log = Log()
        log.write_line(f"log {HOSTILE} end")
        yield log


class GuardedCareless(Careless):
    def get_line_filters(self) -> Sequence[LineFilter]:
        return [*super().get_line_filters(), GUARD]


async def test_the_boundary_holds_for_a_widget_that_forgot_to_escape() -> None:
    unguarded = Careless()
    unguarded.driver_class = RecordingDriver
    async with unguarded.run_test(headless=False, size=(100, 10)) as pilot:
        await pilot.pause()
        raw = terminal_output(unguarded)
    assert "\x1b]0;PWNED" in raw  # what Textual alone lets through (ESC is no C0 it replaces)
    app = GuardedCareless()
    app.driver_class = RecordingDriver
    async with app.run_test(headless=False, size=(100, 10)) as pilot:
        await pilot.pause()
        out = terminal_output(app)
        lines = screen_lines(app)
    assert_nothing_raw(out)
    assert any(ln.startswith("static \\x1b]0;PWNED") for ln in lines)
    # laid out at the width the control characters had (none): cut there, never wider
    assert all(len(ln) <= 100 for ln in lines)
