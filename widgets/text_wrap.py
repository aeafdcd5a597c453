"""Long lines folded at word boundaries for a view that shows machine text as it is (the mdstat
tab): the line an admin reads first, md's recovery line with its ``finish=`` and ``speed=``,
is cut at the edge of an 80-column terminal otherwise. A folded line's continuation is
indented four columns past its own indent, so it reads as one line."""

from __future__ import annotations

import textwrap

CONTINUATION = "    "
MIN_WIDTH = 20  # narrower than this, folding helps nobody: lines are left whole


def fold_lines(text: str, width: int) -> list[str]:
    """``text``'s lines, each longer than ``width`` folded into several (words kept whole
    where they fit; one longer than the width is split)."""
    out: list[str] = []
    for line in text.split("\n"):
        if width < MIN_WIDTH or len(line) <= width:
            out.append(line)
            continue
        body = line.lstrip(" ")
        indent = line[: len(line) - len(body)]
        if len(indent) + len(CONTINUATION) >= width // 2:
            indent = ""  # an indent as wide as half the view would leave no room
        out.extend(
            textwrap.wrap(
                body,
                width,
                initial_indent=indent,
                subsequent_indent=indent + CONTINUATION,
                break_on_hyphens=False,
                replace_whitespace=False,
                expand_tabs=False,
            )
            or [line]
        )
    return out
