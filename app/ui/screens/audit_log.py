"""AuditLogScreen: what raidman executed (and refused), newest first, from the audit log.

Each row: local time, user, plan title, the command as a copyable shell line (``shlex.join``),
exit code (green 0, red otherwise, yellow "refused"), duration and the pre-flight warnings that
were forced past. The highlighted entry is shown in full below the table; ``c`` copies its
command line to the clipboard. Escape closes. A missing, empty or unreadable log says so.

A step has two entries (``started`` before it ran, ``executed`` when it ended): one row shows
both; a ``started`` entry without its end is shown as "no end" (the step was killed mid-way or
is still running). A line that is not a well-formed entry is a "corrupt" row with the line as read.
Every text from the log is shown with control characters escaped.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from app import statefiles
from app.format import STATE_COLOURS, duration
from app.plans.audit_log import AuditEntry, AuditLog
from app.plans.plan import escape_controls
from app.statefiles import StateFileError

DEFAULT_LIMIT = 2000
WIDE = 120  # columns: from this width on every field is a column of its own


def local_time(ts: float) -> str:
    try:
        return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return "?"


def command_line(entry: AuditEntry) -> str:
    """The step as a shell line the admin can paste; with its stdin source when it had one."""
    if entry.corrupt:
        return ""
    if not entry.argv:
        return ""
    line = shlex.join(entry.argv)
    if entry.stdin_from:
        line = f"{shlex.join(entry.stdin_from)} | {line}"
    elif entry.stdin is not None:
        line = f"printf '%s\\n' {shlex.quote(entry.stdin.rstrip(chr(10)))} | {line}"
    return escape_controls(line)


def rows_of(entries: list[AuditEntry]) -> list[AuditEntry]:
    """The entries to show, oldest first: a step's ``started`` entry is folded into its
    ``executed`` one (same run and step); a ``started`` entry without its end stays."""
    ended = {(e.run, e.step) for e in entries if e.event == "executed" and e.run}
    out = []
    for e in entries:
        if e.event == "started" and e.run and (e.run, e.step) in ended:
            continue
        if e.event == "executed" and e.stdin is None and e.run:
            start = next(
                (s for s in entries if s.event == "started" and (s.run, s.step) == (e.run, e.step)),
                None,
            )
            if start is not None and start.stdin is not None:
                e = replace(e, stdin=start.stdin)
        out.append(e)
    return out


def exit_cell(entry: AuditEntry) -> Text:
    if entry.corrupt:
        return Text("corrupt", style=f"bold {STATE_COLOURS['error']}")
    if entry.event == "started":
        return Text("no end", style=STATE_COLOURS["warning"])
    if entry.event == "refused":
        return Text("refused", style=STATE_COLOURS["warning"])
    if entry.exit_code is None:
        return Text("?", style=STATE_COLOURS["muted"])
    colour = STATE_COLOURS["ok"] if entry.exit_code == 0 else STATE_COLOURS["error"]
    return Text(str(entry.exit_code), style=f"bold {colour}")


def forced_cell(entry: AuditEntry) -> Text:
    if not entry.forced:
        return Text("")
    return Text(
        escape_controls("forced: " + ", ".join(entry.forced)), style=STATE_COLOURS["warning"]
    )


class AuditLogScreen(Screen[None]):
    """The audit log, newest first. ``path``: the log (default: the audit log's usual place)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("c", "copy_command", "Copy command"),
        Binding("r", "reload", "Reload"),
    ]
    DEFAULT_CSS = """
    AuditLogScreen { layout: vertical; }
    AuditLogScreen #al-title { text-style: bold; padding: 0 1; }
    AuditLogScreen #al-message { padding: 1 1; }
    AuditLogScreen #al-table { height: 1fr; }
    AuditLogScreen #al-detail { height: auto; max-height: 8; padding: 0 1;
                                border-top: solid $primary; }
    """

    def __init__(
        self, path: Path | str | None = None, *, limit: int | None = DEFAULT_LIMIT
    ) -> None:
        super().__init__()
        self.log_path = AuditLog(path).path
        self.limit = limit
        self.entries: list[AuditEntry] = []  # newest first
        self.problem: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(f"Audit log · {self.log_path}", id="al-title")
        yield Static(id="al-message")
        table: DataTable[str | Text] = DataTable(
            id="al-table", cursor_type="row", zebra_stripes=True
        )
        yield table
        yield Static(id="al-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()

    _layout: tuple[int, ...] | None = None  # the column widths the table was filled for

    def on_resize(self) -> None:
        if self._columns() != self._layout:
            self.action_reload()

    def _columns(self) -> tuple[int, ...]:
        """Column widths for the screen's width: the command takes what the others leave and
        wraps onto more rows (it was cut at the edge: "mdadm --detail --br"). Narrower than
        ``WIDE`` only time (of day), exit, duration and command are columns; the date, user,
        plan and forced warnings are in the detail below."""
        width = self.size.width or WIDE
        users = [len(escape_controls(e.user)) for e in self.entries]
        plans = [len(escape_controls(e.plan)) for e in self.entries if not e.corrupt]
        forced = [len(forced_cell(e)) for e in self.entries]
        fixed: tuple[int, ...]
        if width < WIDE:
            fixed = (8, 7, 6)
        else:
            fixed = (
                19,
                max(4, min(12, max(users, default=4))),
                max(4, min(28, max(plans, default=4))),
                7,
                6,
                min(24, max(forced, default=0)),
            )
        # every column has a cell of padding each side; the scrollbar takes two
        command = max(20, width - sum(w + 2 for w in fixed) - 2 - 2)
        return (*fixed, command)

    def _add_columns(self, table: DataTable[str | Text], widths: tuple[int, ...]) -> None:
        table.clear(columns=True)
        if len(widths) == 4:  # narrow
            time_w, exit_w, took_w, command_w = widths
            table.add_column("time", key="time", width=time_w)
            table.add_column("exit", key="exit", width=exit_w)
            table.add_column("took", key="took", width=took_w)
            table.add_column("command", key="command", width=command_w)
            return
        time_w, user_w, plan_w, exit_w, took_w, forced_w, command_w = widths
        table.add_column("time", key="time", width=time_w)
        table.add_column("user", key="user", width=user_w)
        table.add_column("plan", key="plan", width=plan_w)
        table.add_column("command", key="command", width=command_w)
        table.add_column("exit", key="exit", width=exit_w)
        table.add_column("took", key="took", width=took_w)
        if forced_w:
            table.add_column("forced", key="forced", width=forced_w)

    def _read(self) -> tuple[list[AuditEntry], str | None]:
        """Entries (oldest first) and, when there are none, the message saying why."""
        p = self.log_path
        try:  # never blocks on a FIFO put in its place (app.statefiles)
            statefiles.read_regular(p, what="audit log", max_bytes=0)
        except StateFileError as e:
            why = str(e).removeprefix(f"refused audit log {p}: ")
            return [], f"Cannot read the audit log {p}: {why}"
        except FileNotFoundError:
            return [], f"No audit log yet at {p}: raidman has not executed anything here."
        except OSError as e:
            return [], f"Cannot read the audit log {p}: {e.strerror or e}"
        entries = rows_of(AuditLog(p).read_entries(self.limit))
        if not entries:
            return [], f"The audit log {p} has no entries: nothing executed yet."
        return entries, None

    def action_reload(self) -> None:
        entries, problem = self._read()
        self.entries = list(reversed(entries))
        at = self.query_one("#al-table", DataTable).cursor_row
        self.problem = problem
        message = self.query_one("#al-message", Static)
        table = self.query_one("#al-table", DataTable)
        table.clear()
        if problem is not None:
            message.update(Text(problem, style=STATE_COLOURS["warning"]))
        else:
            n = len(self.entries)
            bad = sum(1 for e in self.entries if e.corrupt)
            line = f"{n} entr{'y' if n == 1 else 'ies'}, newest first"
            if bad:
                line += f"; {bad} corrupt (not well-formed entries, shown as read)"
            message.update(Text(line, style=STATE_COLOURS["warning"] if bad else "dim"))
        message.display = True
        table.display = problem is None
        self._layout = widths = self._columns()
        self._add_columns(table, widths)
        narrow = len(widths) == 4
        for i, e in enumerate(self.entries):
            took = "" if e.duration_s is None else duration(e.duration_s)
            if e.corrupt:
                cmd: str | Text = Text(escape_controls(e.raw[:200]), style="italic")
            else:
                cmd = command_line(e) or Text(escape_controls(e.reason or ""), style="italic")
            when = "?" if e.corrupt else local_time(e.ts)
            if narrow:
                cells = [when[-8:], exit_cell(e), took, cmd]
            else:
                cells = [
                    when,
                    escape_controls(e.user),
                    "corrupt entry" if e.corrupt else escape_controls(e.plan),
                    cmd,
                    exit_cell(e),
                    took,
                ]
                if len(widths) == 7 and widths[5]:
                    cells.append(forced_cell(e))
            table.add_row(*cells, key=str(i), height=None)  # the command wraps, whole
        if self.entries and 0 < at < len(self.entries):
            table.move_cursor(row=at)  # a reload (or a resize) keeps the row
        self._show_detail(table.cursor_row if self.entries else None)
        if self.entries:
            table.focus()

    def _show_detail(self, row: int | None) -> None:
        detail = self.query_one("#al-detail", Static)
        if row is None or not 0 <= row < len(self.entries):
            detail.display = False
            return
        e = self.entries[row]
        t = Text()
        if e.corrupt:
            t.append(
                "corrupt entry: not a well-formed audit entry; the line as read:\n", style="bold"
            )
            t.append(escape_controls(e.raw))
            detail.update(t)
            detail.display = True
            return
        who = escape_controls(e.user)
        t.append(f"{local_time(e.ts)} ({e.time_iso})  {who}  {e.event}  ", style="dim")
        t.append(escape_controls(e.plan), style="bold")
        t.append("\n")
        line = command_line(e)
        if line:
            t.append("$ " + line + "\n")
        t.append("exit ")
        t.append_text(exit_cell(e))
        if e.duration_s is not None:
            t.append(f" after {duration(e.duration_s)}")
        t.append("\n")
        if e.event == "started":
            t.append("no end recorded: the step was killed mid-way, or is still running\n")
        if e.stderr_tail:
            t.append(escape_controls(e.stderr_tail, keep_newlines=True) + "\n", style="dim")
        if e.reason:
            t.append(f"reason: {escape_controls(e.reason)}\n", style=STATE_COLOURS["warning"])
        if e.forced:
            t.append_text(forced_cell(e))
            t.append("\n")
        t.rstrip()
        detail.update(t)
        detail.display = True

    @property
    def current(self) -> AuditEntry | None:
        if not self.entries:
            return None
        row = self.query_one("#al-table", DataTable).cursor_row
        return self.entries[row] if 0 <= row < len(self.entries) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_detail(event.cursor_row)

    def action_copy_command(self) -> None:
        e = self.current
        line = command_line(e) if e is not None else ""
        if not line:
            self.notify("Nothing to copy on this row.", severity="warning")
            return
        self.app.copy_to_clipboard(line)
        self.notify(f"Copied: {line}")

    def action_close(self) -> None:
        self.dismiss(None)
