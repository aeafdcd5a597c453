"""What the backends share: the port they implement (re-exported from ``app.backend``, which the
domain owns) and helpers for cutting a running program's output into lines.

The backends import the port from here, beside the helpers, so an adapter's imports stay inside
``backends`` plus the one domain module that defines what it implements.
"""

from __future__ import annotations

import re

from app.backend import (
    NOT_IN_CAPTURE,
    Backend,
    BackendError,
    CommandResult,
    EventSource,
    OutputCallback,
    Stream,
)

__all__ = [
    "NOT_IN_CAPTURE",
    "Backend",
    "BackendError",
    "CommandResult",
    "EventSource",
    "LineSplitter",
    "OutputCallback",
    "Stream",
    "emit_output",
]

_LINE_BREAK = re.compile(r"\r\n|\n|\r|\x08+")


class LineSplitter:
    """Cuts a stream of text chunks into lines at ``\n``, ``\r`` or a run of backspaces;
    ``feed`` returns the complete lines so far, ``close`` the unterminated rest (if any). Blank
    lines are dropped (so a ``\r\n`` cut between two chunks makes no empty line)."""

    def __init__(self) -> None:
        self._rest = ""

    def feed(self, chunk: str) -> list[str]:
        parts = _LINE_BREAK.split(self._rest + chunk)
        self._rest = parts.pop()
        return [p for p in parts if p.strip()]

    def close(self) -> list[str]:
        rest, self._rest = self._rest, ""
        return [p for p in _LINE_BREAK.split(rest) if p.strip()]


def emit_output(result: CommandResult, on_output: OutputCallback) -> None:
    """For a backend that only has the whole output at the end (a replay): each line of it,
    stdout first, through ``on_output``."""
    out, err = LineSplitter(), LineSplitter()
    for line in [*out.feed(result.stdout), *out.close()]:
        on_output("stdout", line)
    for line in [*err.feed(result.stderr), *err.close()]:
        on_output("stderr", line)
