"""The check history under the Sync tab's cards: one line per array that has a recorded check
("md127: last check 3 days ago, 2h 41m, 0 mismatches; before: 0, 0, 128 ↑").

Fed by the Sync pane with the lines (app.wear.checks.history_lines, read in the pane's worker);
never reads the database itself.
Hidden while no array has a check on record.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.markup import escape
from textual.widgets import Static


class CheckHistory(Static):
    DEFAULT_CSS = """
    CheckHistory { height: auto; margin-bottom: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.lines: dict[str, str] = {}
        self.display = False

    def set_lines(self, lines: Mapping[str, str]) -> None:
        if dict(lines) == self.lines:
            return
        self.lines = dict(lines)
        self.display = bool(self.lines)
        body = "\n".join(
            f"[b]{escape(name)}[/b]: {escape(text)}" for name, text in sorted(self.lines.items())
        )
        self.update(f"[b]Checks[/b] (recorded by raidman)\n{body}")
