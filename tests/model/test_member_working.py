"""MdMember.working: the one "does this member take part in the array's I/O" test."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.model.devices import MdMember

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("slot", "state", "working"),
    [
        (0, ("in_sync",), True),
        (1, ("spare",), True),  # being rebuilt into slot 1 (role "rebuilding")
        (None, ("spare",), False),  # an idle spare
        (2, ("faulty",), False),
        (None, ("faulty", "in_sync"), False),
        (0, ("in_sync", "write_mostly"), True),
        (3, ("replacement",), True),
        (None, ("journal",), True),
    ],
)
def test_working(slot: int | None, state: tuple[str, ...], working: bool) -> None:
    assert MdMember("sda", slot, state).working is working


def test_the_working_test_is_written_once() -> None:
    found = [
        p.relative_to(ROOT).as_posix()
        for top in ("app", "widgets", "backends")
        for p in (ROOT / top).rglob("*.py")
        if '("faulty", "spare")' in p.read_text(encoding="utf-8")
    ]
    assert found == ["app/model/devices.py"]
