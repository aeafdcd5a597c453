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


def test_an_arrays_own_speed_limit_only_where_md_says_local() -> None:
    """md.c sync_min_show/sync_max_show: "(local)" where the array has its own value."""
    from app.parsers.md_sysfs import parse_local_speed_limit

    assert parse_local_speed_limit("4000 (local)\n") == 4000
    assert parse_local_speed_limit("200000 (system)\n") is None
