"""escape_strings keeps the frozen objects it found clean, so that the same objects handed out
again (a backend's cached disks) are not walked again; what it keeps is bounded, and an object
seen once is let go. (Kept in one generation of 100,000, cleared only when full, every probe's
new Machine and arrays stayed: `raidman --demo big` grew 84 -> 116 MB in 10 minutes.)"""

from __future__ import annotations

import gc
import weakref
from dataclasses import dataclass

import pytest

from app import escape
from app.escape import escape_strings


@dataclass(frozen=True)  # not slotted: a weak reference tells whether it was let go
class Label:
    text: str


def test_an_object_seen_once_is_let_go_and_the_cache_stays_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(escape, "CLEAN_KEPT", 100)
    monkeypatch.setattr(escape, "_CLEAN", {})
    monkeypatch.setattr(escape, "_CLEAN_OLD", {})
    once = Label("seen once")
    assert escape_strings(once) is once
    gone = weakref.ref(once)
    del once
    kept = Label("handed out again and again")
    for i in range(1_000):
        assert escape_strings(Label(f"fresh {i}")).text == f"fresh {i}"
        assert escape_strings(kept) is kept  # the same object each time: found clean
        assert escape.clean_kept() <= 2 * 100
    gc.collect()
    assert gone() is None  # not kept for ever
    assert escape._CLEAN.get(id(kept)) is kept  # what comes back stays in the cache


def test_a_hit_skips_the_walk_and_a_dirty_object_is_never_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(escape, "_CLEAN", {})
    monkeypatch.setattr(escape, "_CLEAN_OLD", {})
    clean = Label("sda")
    escape_strings(clean)
    looked: list[str] = []
    real = escape.escape_controls

    def counting(text: str, **kw: bool) -> str:
        looked.append(text)
        return real(text, **kw)

    monkeypatch.setattr(escape, "escape_controls", counting)
    assert escape_strings(clean) is clean
    assert looked == []  # found clean: its strings are not looked at again
    assert escape_strings(Label("sdb")).text == "sdb" and looked == ["sdb"]
    dirty = Label("\x1b]0;owned\x07")
    shown = escape_strings(dirty)
    assert shown.text == "\\x1b]0;owned\\x07" and escape.clean_kept() == 2
