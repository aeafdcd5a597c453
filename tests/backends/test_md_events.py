"""backends.linux.events: waiting for md events on /proc/mdstat (the real wake-up is exercised in
the VM by tests/vm/test_session_monitor.py: `raidman monitor` records syncs of a few seconds)."""

from __future__ import annotations

import time
from pathlib import Path

from backends.linux.events import MdEvents


def test_no_mdstat_is_no_event(tmp_path: Path) -> None:
    t0 = time.monotonic()
    assert MdEvents(str(tmp_path / "absent")).wait(5.0) is False
    assert time.monotonic() - t0 < 1.0  # no md: the caller's timer takes over at once


def test_a_file_without_events_waits_for_the_timeout(tmp_path: Path) -> None:
    f = tmp_path / "mdstat"
    f.write_text("Personalities : [raid1]\nunused devices: <none>\n")
    ev = MdEvents(str(f))
    t0 = time.monotonic()
    assert ev.wait(0.2) is False
    assert time.monotonic() - t0 >= 0.15
    ev.close()
