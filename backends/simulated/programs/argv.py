"""A simulated program's argv and result: option parsing, mdadm/LVM sizes, ``(rc, out, err)``."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from backends.simulated.state import SimState

Result = tuple[int, str, str]
Handler = Callable[[SimState, Sequence[str], str | None], Result]


def parse_size(text: str, default_unit: str = "m") -> int | None:
    """LVM/mdadm size: number with optional unit (binary units, case-insensitive)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([bskmgtpe]?)(?:i?b)?", text.strip().lower())
    if not m:
        return None
    unit = m.group(2) or default_unit
    mult = {"b": 1, "s": 512, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
            "p": 1 << 50, "e": 1 << 60}[unit]  # fmt: skip
    return int(float(m.group(1)) * mult)


def split_opts(
    args: Sequence[str], with_value: dict[str, str], flags: dict[str, str]
) -> tuple[list[tuple[str, str | None]], list[str]] | str:
    """Ordered (option, value) pairs and positional args; an error message on bad input."""
    out: list[tuple[str, str | None]] = []
    pos: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("--"):
            name, eq, val = a[2:].partition("=")
            if name in with_value.values() or name in with_value:
                name = with_value.get(name, name)
                if not eq:
                    i += 1
                    if i >= len(args):
                        return f"option '--{name}' requires an argument"
                    val = args[i]
                out.append((name, val))
            elif name in flags.values() or name in flags:
                out.append((flags.get(name, name), None))
            else:
                return f"unrecognized option '--{name}'"
        elif a.startswith("-") and len(a) > 1 and not a[1].isdigit():
            key = a[1]
            if key in with_value:
                val = a[2:]
                if not val:
                    i += 1
                    if i >= len(args):
                        return f"option requires an argument -- '{key}'"
                    val = args[i]
                out.append((with_value[key], val))
            elif key in flags:
                for ch in a[1:]:
                    if ch not in flags:
                        return f"invalid option -- '{ch}'"
                    out.append((flags[ch], None))
            else:
                return f"invalid option -- '{key}'"
        else:
            pos.append(a)
        i += 1
    return out, pos
