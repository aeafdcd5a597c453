"""The TUI's one boundary to the terminal: every line any widget renders passes this filter
before Textual writes it.

Text from a backend (a capture's /proc/mdstat, a host's kernel lines, a disk's model, a note)
is escaped where it enters the model (``app.escape``), and a widget that shows raw text escapes
it itself (the mdstat tab, tool output). Those are for legibility: an admin sees ``\\x1b`` where
the machine had an ESC. This filter is the guarantee: a widget that forgot (the mdstat tab
wrote /proc/mdstat raw, issue 37: a capture set the terminal's title, cleared the screen and
wrote to the clipboard) still cannot send a control character to the terminal. It is Textual's
``LineFilter`` (``App.get_line_filters``), applied to each rendered strip of every widget,
screen, toast and tooltip alike; strips are cached, so a line costs one ``isprintable`` per
segment once.

A control character is 0 cells wide to Rich, its visible escape is several: the escaped line is
cut back to the width it was laid out at (what is cut is shown in full where the widget escapes
its text itself).
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from app.escape import escape_controls


class ControlFilter(LineFilter):
    """Shows every control/format character of a rendered line as its visible escape."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if all(s.control or s.text.isprintable() for s in segments):
            return segments  # the usual line: C speed, nothing built
        width = sum(cell_len(s.text) for s in segments if not s.control)
        out: list[Segment] = []
        changed = False
        for s in segments:
            text = s.text if s.control else escape_controls(s.text)
            changed = changed or text is not s.text
            out.append(Segment(text, s.style, s.control) if text is not s.text else s)
        if not changed:
            return segments  # not printable, but nothing to escape (a no-break space)
        return Segment.adjust_line_length(out, width)


GUARD = ControlFilter()  # one instance: Textual caches filtered strips per filter
