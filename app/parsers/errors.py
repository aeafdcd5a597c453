"""The one exception every parser raises on input it cannot make sense of."""

from __future__ import annotations


class ParseError(ValueError):
    """Malformed tool output. ``source`` names the format, ``line`` the 1-based line when known."""

    def __init__(self, source: str, message: str, line: int | None = None) -> None:
        self.source = source
        self.line = line
        where = f" (line {line})" if line is not None else ""
        super().__init__(f"{source}: {message}{where}")
