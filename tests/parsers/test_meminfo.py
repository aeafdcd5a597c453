"""/proc/meminfo's MemAvailable (fs/proc/meminfo.c): bytes, or None for anything else."""

from __future__ import annotations

from app.parsers.meminfo import mem_available_bytes


def test_memavailable_in_bytes() -> None:
    text = "MemTotal:       16318976 kB\nMemFree:         1234567 kB\nMemAvailable:   12239232 kB\n"
    assert mem_available_bytes(text) == 12239232 * 1024


def test_absent_or_malformed_is_none() -> None:
    assert mem_available_bytes(None) is None
    assert mem_available_bytes("") is None
    assert mem_available_bytes("MemTotal: 1 kB\n") is None
    assert mem_available_bytes("MemAvailable: 12 MB\n") is None
    assert mem_available_bytes("MemAvailable: -5 kB\n") is None
    assert mem_available_bytes("MemAvailable: ² kB\n") is None
    assert mem_available_bytes("x\n" * 300 + "MemAvailable: 1 kB\n") is None  # bounded
