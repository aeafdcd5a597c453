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
    real = escape._walk_fields

    def counting(obj: Label, names: tuple[str, ...]) -> dict[str, object]:
        looked.append(obj.text)
        return real(obj, names)

    monkeypatch.setattr(escape, "_walk_fields", counting)
    assert escape_strings(clean) is clean
    assert looked == []  # found clean: its strings are not looked at again
    assert escape_strings(Label("sdb")).text == "sdb" and looked == ["sdb"]
    dirty = Label("\x1b]0;owned\x07")
    shown = escape_strings(dirty)
    assert shown.text == "\\x1b]0;owned\\x07" and escape.clean_kept() == 2


def test_a_long_tuple_found_clean_is_not_walked_again_unless_it_holds_what_can_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The simulator's probe hands out the same tuples of disks, partitions and edges: a
    long tuple of strings, numbers and frozen objects found clean is returned at once the next
    time; one holding a list is walked each time (the list may have changed)."""
    monkeypatch.setattr(escape, "_CLEAN", {})
    monkeypatch.setattr(escape, "_CLEAN_OLD", {})
    disks = tuple(Label(f"sd{i}") for i in range(escape.LONG_TUPLE + 1))
    edges = tuple((f"sd{i}", f"md{i}") for i in range(escape.LONG_TUPLE + 1))
    holds_list = (*disks, ["sda"])
    for t in (disks, edges, holds_list):
        assert escape_strings(t) is t
    looked: list[object] = []
    real = escape._walk_fields

    def counting(obj: Label, names: tuple[str, ...]) -> dict[str, object]:
        looked.append(obj)
        return real(obj, names)

    monkeypatch.setattr(escape, "_walk_fields", counting)
    walked_items: list[object] = []
    real_esc = escape._esc

    def esc(obj: object, keep: bool) -> object:
        walked_items.append(obj)
        return real_esc(obj, keep)

    monkeypatch.setattr(escape, "_esc", esc)
    assert escape_strings(disks) is disks and escape_strings(edges) is edges
    assert walked_items == [disks, edges] and looked == []  # each found whole, not walked
    holds_list[-1].append("\x1b[2J")  # type: ignore[union-attr]
    shown = escape_strings(holds_list)
    assert shown[-1] == ["sda", "\\x1b[2J"]  # walked again: the list changed
