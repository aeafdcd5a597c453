"""``/`` on the tree: a one-line filter at the bottom of the screen, applied as you type.

Enter keeps the filter (the tree's first line shows it; ``esc`` on the tree clears it), Esc here
clears it and closes, ``/`` again starts a new one.

The screen knows the tree only as a ``FilterTarget`` (what it reads and sets), so this module
does not import ``widgets.storage_tree``, which imports it for ``/``."""

from __future__ import annotations

from typing import ClassVar, Protocol

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import Input

PLACEHOLDER = "filter the tree: name, model, serial · degraded · syncing · finding"


class FilterTarget(Protocol):
    """What the filter screen needs of the tree (``widgets.storage_tree.StorageTree``)."""

    @property
    def filter_text(self) -> str: ...

    def set_filter(self, text: str) -> None: ...


class TreeFilterScreen(ModalScreen[str]):
    # At the bottom, over the footer while typing: at the top it covered the title and the
    # degraded/syncing banner. No border, also when focused (Input's own :focus border is
    # tall: in one row it showed only its top edge, none of the typed text).
    DEFAULT_CSS = """
    TreeFilterScreen { align: left bottom; background: transparent; }
    TreeFilterScreen > Input, TreeFilterScreen > Input:focus {
        dock: bottom; width: 100%; height: 1; border: none; padding: 0 1;
        background: $accent-darken-2;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "clear", "Clear filter"),
        # `/` again while filtering starts a new filter, as in less and vi (it was typed into
        # the field: "sdb/" matched nothing); kernel names have none (an LV: type its name)
        Binding("slash", "again", "New filter", priority=True),
    ]

    def __init__(self, tree: FilterTarget) -> None:
        super().__init__()
        self.storage = tree

    def compose(self) -> ComposeResult:
        yield Input(value=self.storage.filter_text, placeholder=PLACEHOLDER, id="tree-filter")

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.storage.set_filter(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_again(self) -> None:
        self.query_one(Input).value = ""

    def action_clear(self) -> None:
        self.storage.set_filter("")
        self.dismiss("")
