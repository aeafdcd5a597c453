"""Words on screen (issue 24 item 10): the empty Events tab says no events came yet, H with one
machine says why nothing happens, an ssh host that could not be reached is said so (not "not
root", not "Findings: none")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from app.ui.app import RaidmanApp
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_ready
from widgets.sync_pane import EventLog

ROOT = Path(__file__).resolve().parents[2]


async def test_events_tab_says_no_events_yet() -> None:
    app = RaidmanApp(
        SimulatedBackend.from_scenario("blank", clock=SimClock.manual()),
        probe_interval=0,
        sample_interval=0,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.show_tab("events")
        await pilot.pause()
        log = app.main.query_one(EventLog)
        assert log.entries == []
        assert any("No events yet" in line.text for line in log.lines)


async def test_h_with_one_machine_says_why() -> None:
    app = RaidmanApp(
        SimulatedBackend.from_scenario("blank", clock=SimClock.manual()),
        probe_interval=0,
        sample_interval=0,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        screen = app.screen
        await pilot.press("H")
        await pilot.pause()
        assert app.screen is screen
        assert any("one machine is shown" in str(n.message) for n in app._notifications)


def test_unreached_host_is_one_line_and_status_1(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "app.cli", "report", "--no-smart", "--host", "nosuchhost.invalid"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path),
             "RAIDMAN_STATE_DIR": str(tmp_path)},
    )  # fmt: skip
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("nosuchhost.invalid: not reached: ")
    assert "not root" not in r.stdout and "Findings" not in r.stdout
