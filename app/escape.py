r"""Machine data shown safely: control and format characters as visible escapes.

Labels, models, serials, LV names, mount points, the host name and the kernel release come from
the machine (a USB stick's label, a disk's firmware, another admin's ``lvcreate``) and reach a
terminal in the TUI, ``report``, logs and alerts. An ``ESC]0;...`` in a label set the terminal's
title, an ``ESC[2J`` in a disk model blanked the TUI, a ``\u202e`` turns text around. Every such
character (Unicode categories Cc, Cf, Cs, Zl, Zp) is shown as ``\x1b`` / ``\u202e`` instead.

The boundary is the model: each backend's ``probe()`` and ``smart()`` return their strings
through ``escape_strings``, so everything downstream (widgets, reports, plans' titles, alerts)
holds clean text. Text that never passes through the model (a tool's stderr, a file's name)
goes through ``escape_controls`` where it is shown.
"""

from __future__ import annotations

import dataclasses
import io
import sys
import unicodedata
from typing import Any, TextIO, TypeVar

T = TypeVar("T")

CONTROL_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))


def is_control(ch: str) -> bool:
    """Whether ``ch`` is a control, format (bidi, zero-width), surrogate or line/paragraph
    separator character."""
    return unicodedata.category(ch) in CONTROL_CATEGORIES


def escape_controls(text: str, *, keep_newlines: bool = False, keep_tabs: bool = False) -> str:
    r"""``text`` with every control/format character shown as an escape (``\x1b``, ``\u202e``);
    ``keep_newlines`` keeps ``\n`` and ``keep_tabs`` ``\t`` (multi-line text such as
    /proc/mdstat, whose progress lines start with a tab)."""
    if text.isprintable():  # C speed; every control character is not printable
        return text
    kept = text
    if keep_newlines:
        kept = kept.replace("\n", "")
    if keep_tabs:
        kept = kept.replace("\t", "")
    if kept is not text and kept.isprintable():  # multi-line text (/proc/mdstat): C speed too
        return text
    if not any(is_control(c) for c in text):
        return text
    out = []
    for ch in text:
        if (ch == "\n" and keep_newlines) or (ch == "\t" and keep_tabs):
            out.append(ch)
        elif is_control(ch):
            o = ord(ch)
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


# fields holding multi-line text shown as such (Machine.mdstat: /proc/mdstat as read)
_MULTILINE = frozenset(("mdstat",))
_NUMBERS = frozenset((int, float, bool))
LONG_TUPLE = 16  # a longer tuple found clean is remembered whole (as a frozen dataclass is)


def escape_strings(obj: T) -> T:
    """``obj`` (a dataclass, tuple, list, dict or string, nested) with every string escaped by
    ``escape_controls``. Objects whose strings are all clean are returned as they are (the same
    object), so a clean machine of 5,000 disks costs one ``isprintable`` per string."""
    return _esc(obj, False)  # type: ignore[no-any-return,unused-ignore]


def _esc(obj: Any, keep_newlines: bool) -> Any:
    if obj is None or isinstance(obj, int | float):
        return obj
    if isinstance(obj, str):
        return escape_controls(obj, keep_newlines=keep_newlines, keep_tabs=keep_newlines)
    if isinstance(obj, tuple):
        long = len(obj) > LONG_TUPLE
        if long and _seen_clean(obj):
            return obj  # seen whole and clean: the same tuple of 1,000 disks at every probe
        # a clean string or a number is itself: no call for it (most of a probe's items)
        items = tuple(
            x
            if x is None or (type(x) is str and x.isprintable()) or type(x) in _NUMBERS
            else _esc(x, False)
            for x in obj
        )
        if all(a is b for a, b in zip(items, obj, strict=True)):
            if long and all(_immutable(x) for x in obj):
                _remember_clean(obj)
            return obj
        return type(obj)(*items) if hasattr(obj, "_fields") else items
    if isinstance(obj, list):
        new = [_esc(x, False) for x in obj]
        return obj if all(a is b for a, b in zip(new, obj, strict=True)) else new
    if isinstance(obj, dict):
        pairs = [(_esc(k, False), _esc(v, False)) for k, v in obj.items()]
        same = all(k2 is k and v2 is v for (k2, v2), (k, v) in zip(pairs, obj.items(), strict=True))
        return obj if same else dict(pairs)
    if isinstance(obj, frozenset | set):
        new_set = {_esc(x, False) for x in obj}
        return obj if new_set == obj else type(obj)(new_set)
    names = _init_fields(type(obj))
    if names:
        frozen = type(obj) in _FROZEN
        if frozen and _seen_clean(obj):
            return obj  # seen whole and clean, and it cannot change
        changes = _walk_fields(obj, names)
        if changes:
            return dataclasses.replace(obj, **changes)
        if frozen:
            _remember_clean(obj)
        return obj
    return obj


def _walk_fields(obj: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """The fields of dataclass ``obj`` whose escaped value differs, by name."""
    changes: dict[str, Any] = {}
    for name in names:
        v = getattr(obj, name)
        if v is None or type(v) in _NUMBERS or (type(v) is str and v.isprintable()):
            continue  # nothing to escape, without a call (most fields of a probe)
        v2 = _esc(v, name in _MULTILINE)
        if v2 is not v:
            changes[name] = v2
    return changes


# Frozen dataclasses found clean, by id (the object itself is kept, so its id stays its own):
# a backend hands out the same objects again (the simulator's 1,000 disks at every probe), and
# a frozen object whose every string was clean is clean for good. Probing --demo big: 13.6 of
# 17.5 ms were this walk (issue 29). Two generations of at most CLEAN_KEPT each: when the new
# one is full it becomes the old one and the old one is dropped, and an object found in the old
# one moves to the new. What is handed out again stays; what was seen once goes after two
# generations. (One generation of 100,000, cleared when full, kept every probe's new objects:
# a Machine and its arrays, ~3.5 MB a minute on `--demo big`, 84 -> 116 MB in 10 minutes.)
CLEAN_KEPT = 20_000
_CLEAN: dict[int, object] = {}
_CLEAN_OLD: dict[int, object] = {}


def _immutable(x: object) -> bool:
    """What a clean tuple may hold and stay clean for good: strings, numbers, None, frozen
    dataclasses (trusted as above) and tuples of those."""
    if x is None or type(x) is str or type(x) in _NUMBERS or type(x) in _FROZEN:
        return True
    return isinstance(x, tuple) and all(_immutable(y) for y in x)


def _seen_clean(obj: object) -> bool:
    if _CLEAN.get(id(obj)) is obj:
        return True
    if _CLEAN_OLD.get(id(obj)) is obj:
        _remember_clean(obj)
        return True
    return False


def _remember_clean(obj: object) -> None:
    global _CLEAN, _CLEAN_OLD  # swapped whole: a reader sees one or the other
    if len(_CLEAN) >= CLEAN_KEPT:
        _CLEAN_OLD, _CLEAN = _CLEAN, {}
    _CLEAN[id(obj)] = obj


def clean_kept() -> int:
    """How many objects the clean cache holds now (both generations)."""
    return len(_CLEAN) + len(_CLEAN_OLD)


_FIELDS: dict[type, tuple[str, ...]] = {}
_FROZEN: set[type] = set()  # the dataclasses among them that are frozen


def _init_fields(cls: type) -> tuple[str, ...]:
    """A dataclass's fields set by its constructor; () for any other type."""
    names = _FIELDS.get(cls)
    if names is None:
        names = (
            tuple(f.name for f in dataclasses.fields(cls) if f.init)
            if dataclasses.is_dataclass(cls)
            else ()
        )
        params = getattr(cls, "__dataclass_params__", None)
        if names and params is not None and params.frozen:
            _FROZEN.add(cls)
        _FIELDS[cls] = names
    return names


class EscapingStream(io.TextIOBase):
    r"""A text stream (the CLI's stdout and stderr) whose every write passes ``escape_controls``
    (newlines and tabs kept): the command line's one boundary to the terminal, as the TUI's is
    its line filter (app/ui/terminal_guard.py). raidman's own output holds no control
    character (no colours, no ``\r`` redraws), so what is escaped here came from a machine,
    a capture or a file, and was shown raw by a path that forgot to escape it."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream

    def write(self, s: str) -> int:
        self.stream.write(escape_controls(s, keep_newlines=True, keep_tabs=True))
        return len(s)

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.stream.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self.stream.errors


def guard_streams() -> None:
    """Put ``sys.stdout`` and ``sys.stderr`` behind :class:`EscapingStream` (once; the
    ``sys.__stdout__``/``__stderr__`` the TUI's driver writes to are left alone)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, EscapingStream):
            setattr(sys, name, EscapingStream(stream))
