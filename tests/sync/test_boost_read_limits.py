"""boost.json is read with bounds (issue 23, item 8): a deeply nested or huge-number file crashed
``monitor`` and the TUI at start (a crash loop under systemd); now it is refused with a note,
moved aside, and raidman carries on with no boost to restore."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.sync.boost import BoostStore


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        '[{"array": "md0", "started_at": 1' + "0" * 400 + "}]",
        '[{"array": "md0", "started_at": 1e999}]',
        '[{"array": "md0", "started_at": NaN}]',
        '[{"array": "md0", "previous": {"a": [[[[["x"]]]]]}}]',
    ],
    ids=["nested", "400 digits", "1e999", "NaN", "nested record"],
)
def test_hostile_boost_json_is_a_note_not_a_crash(tmp_path: Path, text: str) -> None:
    d = tmp_path / "state"
    d.mkdir(mode=0o700)
    f = d / "boost.json"
    f.write_text(text)
    f.chmod(0o600)
    store = BoostStore(f)
    assert store.records == ()
    assert store.notes and "boost.json" in store.notes[0]
    assert not f.exists()  # moved aside for the admin to look at, a fresh file can be written
