"""The one exception every parser raises on input it cannot make sense of."""

from __future__ import annotations

# a message quotes the input it could not read (``{line!r}``): at most this much of it (a 60 MB
# mountinfo line became a 60 MB note and 465 MB of RSS, issue 37)
MAX_MESSAGE = 300


class ParseError(ValueError):
    """Malformed tool output. ``source`` names the format, ``line`` the 1-based line when known.
    The message is cut at ``MAX_MESSAGE`` characters."""

    def __init__(self, source: str, message: str, line: int | None = None) -> None:
        self.source = source
        self.line = line
        where = f" (line {line})" if line is not None else ""
        if len(message) > MAX_MESSAGE:
            message = f"{message[:MAX_MESSAGE]}… ({len(message)} characters)"
        super().__init__(f"{source}: {message}{where}")
