"""The one byte formatter (issue 25: there were two ``human_bytes``, an IEC one in app.format
and an SI one in app.model.smart_units, each with its own unit loop)."""

from __future__ import annotations

import re
from pathlib import Path

from app import format as fmt
from app.model.sizes import human_bytes

ROOT = Path(__file__).resolve().parents[2]


def test_iec_and_si_styles_of_the_one_formatter() -> None:
    assert human_bytes(500107862016) == "465.8 GiB"
    assert human_bytes(256 << 20, trim=True) == "256 MiB"
    assert human_bytes(512) == "512 B"
    assert human_bytes(None) == "?"
    assert human_bytes(512 * 10**9, decimal=True) == "512 GB"  # as disk vendors count
    assert human_bytes(33_200_000_000_000, decimal=True) == "33.2 TB"
    assert human_bytes(999, decimal=True) == "999 B"


def test_app_format_hands_out_the_same_function() -> None:
    assert fmt.human_bytes is human_bytes


def test_no_second_byte_formatter_is_defined() -> None:
    defs = [
        p.relative_to(ROOT).as_posix()
        for top in ("app", "widgets", "backends")
        for p in sorted((ROOT / top).rglob("*.py"))
        if re.search(r"^\s*def human_bytes\(", p.read_text(encoding="utf-8"), re.M)
    ]
    assert defs == ["app/model/sizes.py"]
