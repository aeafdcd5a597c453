"""The header: who/what we look at, the read-only reason, and a banner for degraded/syncing arrays;
plus the notes bar (what the probe could not do)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from app.format import percent, speed
from app.model.devices import Machine, ProbeNote


def banner_text(machine: Machine | None) -> Text | None:
    """One line: degraded arrays in red, then syncing arrays in yellow with percent; None if calm."""
    if machine is None:
        return None
    t = Text()
    degraded = machine.degraded_arrays
    if degraded:
        t.append(" ✖ DEGRADED: ", "bold white on red")
        t.append(
            " " + ", ".join(f"{a.name} ({a.level}, {a.degraded} missing)" for a in degraded) + " ",
            "bold red",
        )
    syncing = machine.syncing_arrays
    if syncing:
        if t:
            t.append("  ")
        t.append(" ⟳ SYNCING: ", "bold black on yellow")
        items = []
        for a in syncing:
            s = a.sync
            assert s is not None
            item = f"{a.name} {s.action} {percent(s.fraction)}"
            if s.speed_kib_s:
                item += f" @ {speed(s.speed_kib_s)}"
            items.append(item)
        t.append(" " + ", ".join(items), "bold yellow")
    return t or None


class HeaderBanner(Static):
    """Line 1: raidman · host · kernel · backend · read-only reason. Line 2 (only when needed):
    the degraded/syncing banner."""

    DEFAULT_CSS = """
    HeaderBanner { height: auto; background: $panel; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.backend_name = ""
        self.read_only_reason: str | None = None
        self.machine: Machine | None = None

    def set_backend(self, name: str, read_only_reason: str | None) -> None:
        self.backend_name = name
        self.read_only_reason = read_only_reason
        self._redraw()

    def set_machine(self, machine: Machine | None) -> None:
        self.machine = machine
        self._redraw()

    def title_text(self) -> Text:
        t = Text("raidman", "bold")
        m = self.machine
        if m is not None:
            t.append("  ")
            t.append(m.host, "bold cyan")
            t.append(f"  {m.kernel}", "bright_black")
        if self.backend_name:
            t.append(f"  [{self.backend_name}]", "magenta")
        if self.read_only_reason:
            t.append("  ")
            t.append(f" read-only: {self.read_only_reason} ", "bold black on rgb(175,135,0)")
        return t

    def _redraw(self) -> None:
        t = self.title_text()
        b = banner_text(self.machine)
        if b is not None:
            t.append("\n")
            t.append_text(b)
        last = getattr(self, "_shown", None)
        if t == last:
            return  # an unchanged update would still cost a layout pass every second
        self._shown = t
        # Same number of lines (a percentage moved): repaint only, no screen re-layout.
        self.update(t, layout=last is None or last.plain.count("\n") != t.plain.count("\n"))


def notes_text(notes: tuple[ProbeNote, ...]) -> Text:
    t = Text()
    for i, n in enumerate(notes):
        if i:
            t.append("\n")
        colour = {"error": "red", "warning": "yellow"}.get(n.severity, "bright_black")
        t.append("⚠ " if n.severity != "info" else "ℹ ", colour)
        t.append(f"{n.source}: ", f"bold {colour}")
        t.append(n.message)
    return t


class NotesBar(Static):
    """What the probe could not do (missing tools, permission denied); hidden when there is none."""

    DEFAULT_CSS = """
    NotesBar { height: auto; max-height: 4; padding: 0 1; background: $boost; display: none; }
    NotesBar.-has-notes { display: block; }
    """

    def set_notes(self, notes: tuple[ProbeNote, ...]) -> None:
        if notes == getattr(self, "_notes", None):
            return
        self._notes = notes
        self.set_class(bool(notes), "-has-notes")
        self.update(notes_text(notes))
