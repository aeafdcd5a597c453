"""backends.linux.events: waiting for md events on /proc/mdstat (the real wake-up is exercised in
the VM by tests/vm/test_session_monitor.py: `raidman monitor` records syncs of a few seconds)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

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


def test_a_recording_or_replay_never_has_events() -> None:
    from backends.base import EventSource
    from backends.linux import LinuxBackend

    class Recorded:  # any source but the host's own /proc
        pass

    be = LinuxBackend(Recorded())  # type: ignore[arg-type]
    assert isinstance(be, EventSource)
    t0 = time.monotonic()
    assert be.wait_event(5.0) is None  # None: the caller stops watching, the timer stays
    assert time.monotonic() - t0 < 1.0


def test_no_wait_after_a_timeout_rereads_what_an_event_would_mark_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a timed-out wait the file is not read again (reading marks md's event count as
    seen: an event between two waits would be lost)."""
    f = tmp_path / "mdstat"
    f.write_text("Personalities :\n")
    ev = MdEvents(str(f))
    reads: list[int] = []
    real = os.read

    def counting(fd: int, n: int) -> bytes:
        reads.append(fd)
        return real(fd, n)

    monkeypatch.setattr(os, "read", counting)
    ev.wait(0.01)
    first = len(reads)
    ev.wait(0.01)
    ev.wait(0.01)
    ev.close()
    assert first > 0 and len(reads) == first
