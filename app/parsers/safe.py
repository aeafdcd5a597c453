"""Reading untrusted tool output without letting a raw exception out: JSON with a depth limit
and without NaN/Infinity, and integers made of ASCII digits only, within 64 bits.

``str.isdigit()`` accepts "²" (int() then fails) and ``\\d`` accepts "٣" (int() takes it);
``json.loads`` accepts NaN and Infinity and recurses until RecursionError on deep nesting;
``float("9" * 400)`` is inf. Every parser goes through these instead.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from app.parsers.errors import ParseError

MAX_DEPTH = 64  # lsblk nests disk > part > md > dm > dm ...: far below this
MAX_INT = 2**64  # sizes, counters and sectors are u64 in the kernel and the tools
_INT = re.compile(r"[+-]?[0-9]{1,20}", re.ASCII)
_NUMBER = re.compile(r"[+-]?[0-9]{1,20}(?:\.[0-9]{1,20})?", re.ASCII)


def ascii_int(text: str, *, signed: bool = False) -> int | None:
    """The integer ``text`` spells in ASCII digits (surrounding blanks allowed), or None:
    "²", "1.5", "", "-3" (unless ``signed``) and numbers beyond 64 bits are None."""
    t = text.strip()
    if not _INT.fullmatch(t) or (not signed and t[0] in "+-"):
        return None
    v = int(t)
    return v if -MAX_INT < v < MAX_INT else None


def ascii_float(text: str) -> float | None:
    """A plain decimal ("12.6", "259783") as float, or None ("1.5.8", "NaN", "1e400", "²")."""
    t = text.strip()
    return float(t) if _NUMBER.fullmatch(t) else None


def check_int(v: int, source: str, what: str, *, minimum: int = 0) -> int:
    """``v`` when it is a plausible kernel/tool number (>= ``minimum``, below 2**64)."""
    if isinstance(v, bool) or v < minimum or v >= MAX_INT:
        raise ParseError(source, f"{what}={v!r} is out of range")
    return v


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _finite(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(f"{text[:20]}... is not a finite number")
    return v


def _depth_ok(doc: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if d > limit:
            return False
        stack.extend((c, d + 1) for c in children)
    return True


def load_json(text: str, source: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` that raises only ParseError: no NaN/Infinity/1e400, at most ``max_depth``
    levels of nesting, integers within 64 bits."""
    if not isinstance(text, str):
        raise ParseError(source, f"expected text, got {type(text).__name__}")
    try:
        doc = json.loads(
            text, parse_constant=_no_constant, parse_float=_finite, parse_int=_json_int
        )
    except RecursionError:
        raise ParseError(source, "JSON nested too deeply") from None
    except ValueError as e:  # JSONDecodeError, and the hooks above
        raise ParseError(source, f"not valid JSON: {e}") from None
    if not _depth_ok(doc, max_depth):
        raise ParseError(source, f"JSON nested deeper than {max_depth} levels")
    return doc


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > 20:
        raise ValueError(f"integer with {len(text)} digits")
    return int(text)


class UnexpectedInput(ParseError):
    """A parser met input its code did not foresee (a raw exception inside it). Still a
    ParseError, so one bad file costs one note; the fuzz tests fail on it, so it gets fixed."""


P = ParamSpec("P")
R = TypeVar("R")


def only_parse_errors(source: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a parser entry point: any exception other than ParseError becomes
    ``UnexpectedInput`` (never a traceback in the UI or a lost probe)."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def inner(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return fn(*args, **kwargs)
            except ParseError:
                raise
            except (
                ValueError,
                TypeError,
                KeyError,
                IndexError,
                AttributeError,
                ArithmeticError,
                RecursionError,
                UnicodeError,
            ) as e:
                raise UnexpectedInput(
                    source, f"unexpected input ({type(e).__name__}: {str(e)[:200]})"
                ) from e

        return inner

    return wrap


def toml_nesting(text: str) -> int:
    """How deep ``[`` and ``{`` nest outside strings and comments (tomllib recurses once per
    level: a deeply nested file would end in RecursionError)."""
    depth = best = 0
    i, n = 0, len(text)
    quote = ""
    while i < n:
        c = text[i]
        if quote:
            if quote[0] == '"' and c == "\\":
                i += 2
            elif text.startswith(quote, i):
                i += len(quote)
                quote = ""
            else:
                i += 1
            continue
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "\"'":
            quote = c * 3 if text.startswith(c * 3, i) else c
            i += len(quote)
            continue
        if c in "[{":
            depth += 1
            best = max(best, depth)
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return best


class TomlError(ValueError):
    """A TOML file raidman cannot read; the message (one line, with the line and key where
    known) follows the file's name."""


# Python reads at most this many digits into an int (sys.int_info.str_digits_check_threshold's
# default limit): tomllib raised a bare ValueError past it, a traceback at start and a dead
# monitor at SIGHUP (issue 37, item 9)
_LONG_NUMBER = re.compile(r"[0-9_]{4000,}")


def toml_loads(text: str, *, max_nesting: int) -> dict[str, Any]:
    """``tomllib.loads`` with every way it fails as a :class:`TomlError`: not TOML (with its
    line and column), nested deeper than ``max_nesting`` (tomllib recurses per level), a number
    too long for Python to read (with its line and key)."""
    import tomllib

    if toml_nesting(text) > max_nesting:
        raise TomlError(f"nested deeper than {max_nesting} levels")
    long = _LONG_NUMBER.search(text)
    if long is not None:
        line = text.count("\n", 0, long.start()) + 1
        head = text[text.rfind("\n", 0, long.start()) + 1 : long.start()]
        key = head.split("=", 1)[0].strip() if "=" in head else ""
        where = f"line {line}" + (f", {key[:40]}" if key else "")
        raise TomlError(
            f"{where}: a number of {len(long.group())} digits is no value raidman takes"
        )
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TomlError(f"not TOML: {e}") from None
    except RecursionError:
        raise TomlError("nested too deeply") from None
    except ValueError as e:  # what tomllib lets through (Python's own limits): still a message
        raise TomlError(f"cannot read: {str(e).split(';')[0]}") from None
