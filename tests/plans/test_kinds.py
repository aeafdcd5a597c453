"""Every kind of plan raidman builds is one `apply` accepts: a saved bitmap or alerts-fix plan
was refused as "unknown kind" because its kind was missing from KNOWN_KINDS."""

from __future__ import annotations

import re
from pathlib import Path

from app.plans.kinds import KNOWN_KINDS

ROOT = Path(__file__).resolve().parents[2]


def test_every_kind_a_builder_writes_is_known() -> None:
    written: set[str] = set()
    for path in (ROOT / "app").rglob("*.py"):
        written.update(re.findall(r'\bkind="([a-z0-9-]+)"', path.read_text()))
    assert written, "no plan builder found"
    assert written - KNOWN_KINDS == set()
