"""HelpScreen: the keys of the screen ``?`` was pressed on, as that screen's footer would list
them (its own bindings, those of the focused widget, and the app-wide ones it allows)."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Label, Static


def key_rows(screen: Screen[object]) -> list[tuple[str, str]]:
    """(key as the footer shows it, what it does) for every enabled binding of ``screen``:
    first those the footer shows (the screen's and the app's before the focused widget's),
    then the focused widget's quieter ones (cursor keys and the like)."""
    shown: list[tuple[int, str, str]] = []
    quiet: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    app = screen.app
    for key, active in screen.active_bindings.items():
        b = active.binding
        if not active.enabled or b.system or not b.description:
            continue
        row = (app.get_key_display(b) if key == b.key else key, b.description)
        if row in seen:
            continue
        seen.add(row)
        if b.show:
            rank = 0 if active.node is screen else 1 if active.node is app else 2
            shown.append((rank, *row))
        else:
            quiet.append(row)
    shown.sort(key=lambda r: r[0])  # stable: the footer's order inside each rank
    return [(k, d) for _, k, d in shown] + quiet


class HelpScreen(Screen[None]):
    """The keys of ``of`` (the screen underneath), Esc / q / ? to go back."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("q", "close", "Back", show=False),
        Binding("question_mark", "close", "Back", show=False),
    ]
    DEFAULT_CSS = """
    HelpScreen { layout: vertical; }
    HelpScreen #help-title { text-style: bold; padding: 0 1; }
    HelpScreen #help-body { height: 1fr; padding: 0 1; }
    """

    def __init__(self, title: str, rows: list[tuple[str, str]], extra: tuple[str, ...] = ()):
        super().__init__()
        self.title_text = title
        self.rows = rows
        self.extra = extra

    def compose(self) -> ComposeResult:
        yield Label(f"Keys: {self.title_text}", id="help-title")
        table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for key, what in self.rows:
            table.add_row(key, what)
        with VerticalScroll(id="help-body"):
            yield Static(table, id="help-keys")
            for line in self.extra:
                yield Static(line, classes="help-extra")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)


HELP_EXTRA = (
    "",
    "Esc closes a wizard, a preview or this list; on the main screen it brings the focus back"
    " to the tree (on the tree: clears its filter). ctrl+p opens the command palette (actions"
    " and devices); ? shows this list for the screen you are on.",
    "Back after a jump: a jump (g or Enter on a link, a finding, a Sync card, the palette, the"
    " banner) remembers where the tree was; backspace on the tree goes back there, one jump at"
    " a time (the footer shows it while there is somewhere to go back to).",
    "Main screen: tab / shift+tab move between the tree, the tab bar and the pane;"
    " d s f w e m switch tabs wherever the focus is.",
    "Wizards: tab moves between fields, space picks a device, Enter in a field or ctrl+r"
    " previews the plan; nothing runs before the preview's Run.",
)
