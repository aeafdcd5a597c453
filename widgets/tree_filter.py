"""``/`` on the tree: a one-line filter at the bottom of the screen, applied as you type, and
what it keeps of the tree's spec (``filter_specs``: words against labels, names, models,
serials and the state keywords).

Enter keeps the filter (the tree's first line shows it; ``esc`` on the tree clears it), Esc here
clears it and closes, ``/`` again starts a new one.

The screen knows the tree only as a ``FilterTarget`` (what it reads and sets), so this module
does not import ``widgets.storage_tree``, which imports it for ``/``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import Input

from app.model.devices import Disk, Machine, MdArray
from widgets.tree_spec import NodeSpec

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


def filter_label(text: str, matches: int) -> Text:
    t = Text("⌕ ", "bold magenta")
    t.append(text, "bold")
    t.append(f"  {matches} match{'es' if matches != 1 else ''}", "magenta")
    t.append("  (/ change · esc clear)", "bright_black")
    return t


# words of a tree filter that select by state rather than by text
FILTER_KEYWORDS = ("degraded", "syncing", "finding", "findings")


def spec_matches(
    s: NodeSpec, words: list[str], machine: Machine | None, badges: Mapping[str, str]
) -> bool:
    """Every word matches the node: its label, kernel name, a disk's model or serial, or a
    keyword (``degraded``, ``syncing``, ``finding``)."""
    if s.ref.kind in ("section", "empty"):
        return False
    hay = f"{s.label.plain} {s.ref.name}".lower()
    obj = machine.device(s.ref.name) if machine is not None and s.ref.name else None
    if isinstance(obj, Disk):
        hay += f" {obj.model or ''} {obj.serial or ''}".lower()
    for w in words:
        if w == "degraded":
            if not (s.ref.kind == "array" and isinstance(obj, MdArray) and obj.is_degraded):
                return False
        elif w == "syncing":
            ok = isinstance(obj, MdArray) and obj.sync is not None and obj.sync.active
            if not ok or s.ref.kind != "array":
                return False
        elif w in ("finding", "findings"):
            if s.ref.is_link or s.ref.name not in badges:
                return False
        elif w not in hay:
            return False
    return True


def filter_specs(
    specs: list[NodeSpec], text: str, machine: Machine | None, badges: Mapping[str, str]
) -> tuple[list[NodeSpec], int]:
    """The nodes that match ``text``, with their ancestors (the path to them) and their
    descendants (an array's members, a disk's partitions); and how many matched."""
    words = text.lower().split()
    if not words:
        return specs, 0
    by_key = {sp.ref.key: sp for sp in specs}
    matched = {sp.ref.key for sp in specs if spec_matches(sp, words, machine, badges)}
    below: set[str] = set(matched)  # the matches and everything under them
    for sp in specs:  # parents come before children
        if sp.parent is not None and sp.parent in below:
            below.add(sp.ref.key)
    keep = set(below)
    for key in matched:  # the path down to each match
        parent = by_key[key].parent
        while parent is not None and parent not in keep:
            keep.add(parent)
            parent = by_key[parent].parent
    return [sp for sp in specs if sp.ref.key in keep], len(matched)
