"""The storage stack tree widget: shows the pure spec of ``widgets.tree_spec`` (rebuilt on every
probe, keeping the cursor and the expanded nodes by key), with badges, lazy children on big
machines, link jumps (``g``/``enter``/a click), ``backspace`` back and the ``/`` filter.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from app.model.devices import (
    Machine,
)
from app.plans.superblocks import Superblocks
from widgets.label_fit import squeeze_label
from widgets.tree_filter import filter_label, filter_specs, spec_matches
from widgets.tree_spec import (
    BADGES,
    NodeRef,
    NodeSpec,
    build_tree_spec,
    dev_key,
    live_labels,
)

# a NodeSelected this soon after a click came from the click (Tree posts it from _on_click)
CLICK_SELECT_S = 0.5


class StorageTree(Tree[NodeRef]):
    """The stack tree. ``update_machine`` after each probe; ``set_badges`` from the audit.

    Children of a collapsed node are not added as ``TreeNode``s until it is expanded: their
    specs wait in ``_kids`` (always current, so live relabels and badges reach them too).
    On machines with more than ``LAZY_DISKS`` disks the disks start collapsed, so a full
    rebuild adds the sections, the disks and the arrays only; ``go_to`` materialises the path
    to any device first.
    """

    LAZY_DISKS: ClassVar[int] = 200  # above this many disks, disks start collapsed
    GUIDES_KEPT: ClassVar[int] = 512  # lines whose guides are kept for a new label
    # class defaults: Tree.__init__ already calls _invalidate
    _batching: bool = False
    _batch_dirty: bool = False

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("g", "jump", "Go to link", show=True),
        Binding("slash", "filter", "Filter", show=True),
        Binding("backspace", "back", "Back", show=True),
        Binding("escape", "clear_filter", "Clear filter", show=True),
    ]
    HISTORY: ClassVar[int] = 50  # jumps remembered for "back"

    # The cursor stays visible while the focus is on the panes (tab keys): Tree's blurred
    # cursor is a faint tint that vanished on most terminals at 200x60.
    DEFAULT_CSS = """
    StorageTree { scrollbar-size-vertical: 1; }
    StorageTree > .tree--cursor { background: $block-cursor-background 45%; text-style: bold; }
    """

    class Highlighted(Message):
        """The cursor moved to another node (``ref`` None when the tree is empty)."""

        def __init__(self, ref: NodeRef | None) -> None:
            super().__init__()
            self.ref = ref

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        # the guides of lines drawn, by all their line's key holds but their label's updates
        # (set first: Tree.__init__ already clears its line cache)
        self._guides: dict[tuple[object, ...], tuple[list[Segment], int]] = {}
        super().__init__("storage", id=id, classes=classes)
        self.show_root = False
        # A click selects; it must not also fold the node away (Tree's auto_expand toggles on
        # every select). The keyboard keeps enter-to-toggle: see on_tree_node_selected.
        self.auto_expand = False
        self._clicked_at = -1.0
        self.guide_depth = 2
        self._by_key: dict[str, TreeNode[NodeRef]] = {}  # materialised nodes only
        self._specs: list[NodeSpec] = []
        self._spec_by_key: dict[str, NodeSpec] = {}
        self._kids: dict[str | None, list[NodeSpec]] = {}  # parent key -> its children's specs
        self._filled: set[str] = set()  # materialised nodes whose children are added too
        self._badges: dict[str, str] = {}
        self._marks: dict[str, str] = {}  # disk -> a tree_spec.MARKS code (set_marks)
        self._superblocks: Superblocks | None = None  # the audit's read (set_superblocks)
        self._machine: Machine | None = None
        self._lazy = False  # big machine: disks start collapsed
        # expanded state the user chose where it differs from the default (kept by key
        # across rebuilds, also for nodes not materialised at the moment)
        self._open: dict[str, bool] = {}
        self._filter = ""  # what `/` filters the tree by ("" = everything)
        self._highlighted: str | None = None  # the key last announced as Highlighted
        self._moves = 0  # go_to calls so far: a rebuild's deferred restore yields to a newer one
        self._history: list[str] = []  # keys the cursor was on before each jump, newest last

    # ---- public API --------------------------------------------------------------------
    @property
    def keys(self) -> list[str]:
        return [s.ref.key for s in self._specs]

    def refs(self) -> Iterable[NodeRef]:
        return (s.ref for s in self._specs)

    def node_for(self, key: str) -> TreeNode[NodeRef] | None:
        """The ``TreeNode`` of ``key`` if it is materialised (see ``go_to`` / ``reveal``)."""
        return self._by_key.get(key)

    def label_for(self, key: str) -> Text | None:
        """The label (with its badge) of ``key``, materialised or not."""
        spec = self._spec_by_key.get(key)
        return self._decorate(spec) if spec is not None else None

    @property
    def current(self) -> NodeRef | None:
        node = self.cursor_node
        return node.data if node is not None else None

    def update_machine(self, machine: Machine) -> None:
        """Show ``machine``. A live sample folded into the machine shown (``live_labels``):
        only the labels of the arrays it changed are made again. Same structure: labels updated
        in place; otherwise rebuilt, keeping the cursor (by key) and what the user collapsed or
        expanded. Only a label whose text changed is set again (each costs a redraw)."""
        old = self._machine
        # (the same object again: a filter changed, or a caller asks for a rebuild)
        fast = old is not None and old is not machine and not self._filter
        live = live_labels(old, machine) if fast and old is not None else None
        self._machine = machine
        if live is not None:
            for key, label in live.items():
                spec = self._spec_by_key.get(key)
                if spec is None or spec.label == label:
                    continue
                spec.label = label
                node = self._by_key.get(key)
                if node is not None:
                    decorated = self._decorate(spec)
                    if node.label != decorated:
                        self._relabel(node, decorated)
            return
        specs = build_tree_spec(machine, self._marks, self._superblocks)
        if self._filter:
            specs, n = filter_specs(specs, self._filter, machine, self._badges)
            head = NodeSpec(NodeRef("filter", "section", ""), None, filter_label(self._filter, n))
            specs.insert(0, head)
        old_specs, old_by_key = self._specs, self._spec_by_key
        same = len(old_specs) == len(specs) and all(
            a.ref.key == b.ref.key and a.parent == b.parent
            for a, b in zip(old_specs, specs, strict=True)
        )
        self._set_specs(specs)
        if same and self._by_key:
            by_key = self._by_key
            for s in specs:
                node = by_key.get(s.ref.key)
                if node is None:
                    continue  # pending: materialised from its (new) spec later
                node.data = s.ref
                label = self._decorate(s)
                if node.label != label:  # relabel only what changed (each costs a redraw)
                    self._relabel(node, label)
            return
        cursor = self.current.key if self.current is not None else None
        self._remember_open(old_by_key)
        self._lazy = len(machine.disks) > self.LAZY_DISKS
        with self._batch():
            self.clear()
            self._by_key = {}
            self._filled = set()
            self._fill_children(None, self.root)
        if cursor is not None and cursor in self._spec_by_key:
            self.call_after_refresh(self._restore_cursor, cursor, self._moves)
        elif cursor is None and specs:
            self.call_after_refresh(self._first_device)

    def set_marks(self, mapping: Mapping[str, str]) -> None:
        """A disk's short marks after its size (``tree_spec.disk_marks`` of the findings: a
        failed SMART self-test). Only the labels whose text changed are set again."""
        if dict(mapping) == self._marks:
            return
        self._marks = dict(mapping)
        if self._machine is not None:
            self.update_machine(self._machine)  # the same machine: labels made again in place

    def set_superblocks(self, superblocks: Superblocks) -> None:
        """The md superblocks the audit read: a disk or partition carrying one of an array it
        is no member of says which, how far behind or "not assembled" (``carrier_mark``).
        Each audit reads them again: the tree is made again only when what it shows changed."""
        old = self._superblocks
        self._superblocks = superblocks
        if self._machine is None:
            return
        if old is not None and old.carriers(self._machine) == superblocks.carriers(self._machine):
            return
        self.update_machine(self._machine)  # the same machine: labels made again in place

    def set_badges(self, mapping: Mapping[str, str]) -> None:
        """Badges per device kernel name (or VG name): severity "error" / "warning" / "advice".
        Nodes not materialised yet get theirs when they are added."""
        old, self._badges = self._badges, dict(mapping)
        changed = {n for n in old.keys() | self._badges.keys() if old.get(n) != self._badges.get(n)}
        if not changed:
            return
        relabelled = False
        for s in self._specs:
            if s.ref.name in changed:
                node = self._by_key.get(s.ref.key)
                if node is not None:
                    node.set_label(self._decorate(s))
                    relabelled = True
        if relabelled:
            # set_label redraws the node but leaves the tree's virtual width as it was: a badge
            # makes a label 2 cells wider, and the horizontal scrollbar stayed that much short
            # until some later rebuild (whether one came first decided the snapshot's thumb)
            self._invalidate()

    def reveal(self, key: str) -> TreeNode[NodeRef] | None:
        """Materialise and expand the path to ``key``; its node (None: no such key)."""
        if key not in self._spec_by_key:
            return None
        path: list[str] = []
        parent = self._spec_by_key[key].parent
        while parent is not None:
            path.append(parent)
            parent = self._spec_by_key[parent].parent
        with self._batch():
            for anc in reversed(path):
                node = self._by_key[anc]  # its own parent was filled one step before
                if not node.is_expanded:
                    node.expand()
                self._fill(anc)
        return self._by_key[key]

    def go_to(self, key_or_name: str, *, remember: bool = False) -> bool:
        """Move the cursor to the node with that key (or the full node of that kernel name /
        VG name), expanding (and materialising) its ancestors. Returns False when there is no
        such node. ``remember``: a jump the admin made (a link, the palette, the banner): where
        the cursor was goes on the history that ``backspace`` walks back. A jump to a node the
        filter hides clears the filter."""
        key = self._find_key(key_or_name)
        if key is None and remember and self._filter and self._machine is not None:
            self.set_filter("")
            key = self._find_key(key_or_name)
        if key is None:
            return False
        self._moves += 1
        here = self.current
        if remember and here is not None and here.key != key and here.key in self._spec_by_key:
            self._history.append(here.key)
            del self._history[: -self.HISTORY]
            self.refresh_bindings()  # the footer's "⌫ Back" appears with the first jump
        node = self.reveal(key)
        if node is None:
            return False
        self.call_after_refresh(self._settle_cursor, node)
        self.move_cursor(node)
        return True

    def _restore_cursor(self, key: str, moves: int) -> None:
        """After a rebuild: back to where the cursor was, unless it was sent elsewhere since."""
        if moves == self._moves:
            self.go_to(key)

    def _find_key(self, key_or_name: str) -> str | None:
        for key in (key_or_name, dev_key(key_or_name), f"vg:{key_or_name}"):
            if key in self._spec_by_key:
                return key
        return None

    # ---- filter and history ---------------------------------------------------------------
    @property
    def filter_text(self) -> str:
        return self._filter

    def set_filter(self, text: str) -> None:
        """Show only what matches ``text`` (see ``filter_specs``); "" shows everything."""
        text = " ".join(text.split())
        if text == self._filter:
            return
        self._filter = text
        if self._machine is None:
            return
        self.update_machine(self._machine)
        if text:
            self.call_after_refresh(self._first_match)

    def _first_match(self) -> None:
        """The cursor to the first node the filter (as it is now) matches."""
        if not self._filter or self._machine is None:
            return
        words = self._filter.lower().split()
        for sp in self._specs:
            if spec_matches(sp, words, self._machine, self._badges):
                self.go_to(sp.ref.key)
                return

    def action_filter(self) -> None:
        from widgets.tree_filter import TreeFilterScreen

        self.app.push_screen(TreeFilterScreen(self))

    def action_clear_filter(self) -> None:
        self.set_filter("")

    def action_back(self) -> None:
        while self._history:
            key = self._history.pop()
            if self.go_to(key):
                self.refresh_bindings()
                return
        self.refresh_bindings()
        self.notify("no earlier place to go back to", timeout=2)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_filter":
            return bool(self._filter)
        if action == "back":
            return bool(self._history)
        return True

    def _settle_cursor(self, node: TreeNode[NodeRef]) -> None:
        self.move_cursor(node)
        self.scroll_to_node(node, animate=False)
        # After a rebuild the node can sit on the line the cursor was already on: Tree posts no
        # NodeHighlighted then (cursor_line did not change), yet it is another device.
        ref = node.data
        if ref is not None and ref.key != self._highlighted:
            self._highlighted = ref.key
            self.post_message(self.Highlighted(ref))

    def _first_device(self) -> None:
        """Initial cursor: the first degraded array, else the first syncing one, else the
        first device: what the admin opened raidman for."""
        if self._machine is not None:
            for group in (self._machine.degraded_arrays, self._machine.syncing_arrays):
                for a in group:
                    if self.go_to(a.name):
                        return
        for s in self._specs:
            if s.ref.kind != "section":
                node = self.reveal(s.ref.key)
                if node is not None:
                    self.move_cursor(node)
                return

    def action_jump(self) -> None:
        ref = self.current
        if ref is not None and ref.target is not None:
            self.go_to(ref.target, remember=True)
        elif ref is not None:
            self.notify(f"{ref.name} is not a link", timeout=2)

    # ---- lazy population ----------------------------------------------------------------
    def _set_specs(self, specs: list[NodeSpec]) -> None:
        self._specs = specs
        self._spec_by_key = {s.ref.key: s for s in specs}
        kids: dict[str | None, list[NodeSpec]] = {}
        for s in specs:
            kids.setdefault(s.parent, []).append(s)
        self._kids = kids

    def _starts_open(self, s: NodeSpec) -> bool:
        return bool(self._filter) or not (self._lazy and s.ref.kind == "disk")

    def _is_open(self, s: NodeSpec) -> bool:
        return self._open.get(s.ref.key, self._starts_open(s))

    def _remember_open(self, specs: Mapping[str, NodeSpec]) -> None:
        """Before a rebuild: note the expanded state of every materialised node that differs
        from its default (nodes not materialised keep what was noted before). ``specs``: the
        specs the current nodes were made from."""
        for key, node in self._by_key.items():
            spec = specs.get(key)
            if not node.allow_expand or spec is None:
                continue
            if node.is_expanded == self._starts_open(spec):
                self._open.pop(key, None)
            else:
                self._open[key] = node.is_expanded

    def _fill(self, key: str) -> None:
        """Add the children of the materialised node ``key`` (once)."""
        if key in self._filled:
            return
        node = self._by_key[key]
        with self._batch():
            self._fill_children(key, node)

    def _fill_children(self, key: str | None, parent: TreeNode[NodeRef]) -> None:
        if key is not None:
            self._filled.add(key)
        decorate, by_key = self._decorate, self._by_key
        for s in self._kids.get(key, ()):
            if s.leaf:
                by_key[s.ref.key] = parent.add_leaf(decorate(s), data=s.ref)
                continue
            expand = self._is_open(s)
            by_key[s.ref.key] = node = parent.add(decorate(s), data=s.ref, expand=expand)
            if expand:
                self._fill_children(s.ref.key, node)

    @contextmanager
    def _batch(self) -> Iterator[None]:
        """Invalidate the tree's line cache once for many node additions, not per node."""
        if self._batching:
            yield
            return
        self._batching, self._batch_dirty = True, False
        try:
            yield
        finally:
            self._batching = False
            if self._batch_dirty:
                self._invalidate()

    def _invalidate(self) -> None:
        if self._batching:  # Tree.add / expand / clear call this for every node
            self._batch_dirty = True
            return
        super()._invalidate()

    def get_label_width(self, node: TreeNode[NodeRef]) -> int:
        """As ``Tree.get_label_width`` (toggle icon + label), without rendering the label:
        ``Tree._build`` asks this for every line."""
        width = node.label.cell_len if isinstance(node.label, Text) else cell_len(str(node.label))
        if node.allow_expand:
            width += cell_len(self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE)
        return width

    def render_label(self, node: TreeNode[NodeRef], base_style: Style, style: Style) -> Text:
        """As ``Tree.render_label``; a label wider than the pane has its gaps squeezed (80
        columns: "md127  raid10 [UUUU] · resync 17.9%" keeps its percent); what still does
        not fit is cut at the end, where the least needed part is (a disk's model)."""
        text = super().render_label(node, base_style, style)
        depth, parent = 0, node.parent
        while parent is not None:
            depth, parent = depth + 1, parent.parent
        guides = max(0, depth - (0 if self.show_root else 1)) * max(2, self.guide_depth)
        room = self.scrollable_content_region.width - guides
        if text.cell_len > room:
            return squeeze_label(text, room)
        return text

    def _render_line(self, y: int, x1: int, x2: int, base_style: Style) -> Strip:
        """As ``Tree._render_line``. A line whose label alone changed since it was drawn (a
        syncing array's figures, each second) keeps its guides: the label is rendered after
        them as ``Tree`` renders it (one ``Text`` from the line's style, the label appended),
        not the whole line with its guides and styles looked up again (issue 44)."""
        lines = self._tree_lines
        if y >= len(lines):
            return super()._render_line(y, x1, x2, base_style)
        line = lines[y]
        path = line.path
        width = self.size.width
        is_hover = self.hover_line >= 0 and any(node._hover for node in path)
        head = (y, is_hover, width, self._updates, self._pseudo_class_state)
        ups = tuple(node._updates for node in path)
        key = (*head, ups)  # Tree's own key for the line
        cached = self._line_cache.get(key)
        if cached is not None:
            return cached.crop(x1, x2)
        # the line but its label: the nodes above it, the hover and the cursor on it, its style
        around = (*head, ups[:-1], self.hover_line == y, self.cursor_line == y, base_style)
        kept = self._guides.get(around)
        label_node = path[-1]
        if kept is None or len(path) < 2:
            strip = super()._render_line(y, x1, x2, base_style)
            full = self._line_cache.get(key)
            if full is not None and len(path) >= 2:
                gw = (len(path) - 1) * (2 + max(0, self.guide_depth - 2))
                if len(self._guides) >= self.GUIDES_KEPT:  # (keys of old states: dropped)
                    self._guides = {}
                self._guides[around] = (list(full.crop(0, gw)), gw)
            return strip
        guides, gw = kept
        line_style = (
            self.get_component_rich_style("tree--highlight-line") if is_hover else base_style
        ) + Style(meta={"line": y})
        label_style = self.get_component_rich_style("tree--label", partial=True)
        if self.hover_line == y:
            label_style += self.get_component_rich_style("tree--highlight", partial=True)
        if self.cursor_line == y:
            label_style += self.get_component_rich_style("tree--cursor", partial=False)
        label = self.render_label(label_node, line_style, label_style).copy()
        label.stylize(Style(meta={"node": line.node._id}))
        text = Text(style=line_style)
        text.append(label)
        segments = [*guides, *text.render(self.app.console)]
        pad = max(self.virtual_size.width, width) - gw - label.cell_len
        if pad:  # as Tree pads it (line_pad)
            segments.append(Segment(" " * pad, line_style))
        strip = self._line_cache[key] = Strip(segments)
        return strip.crop(x1, x2)

    def _clear_line_cache(self) -> None:
        super()._clear_line_cache()
        self._guides = {}

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[NodeRef]) -> None:
        ref = event.node.data
        if ref is not None and ref.key in self._by_key and self._by_key[ref.key] is event.node:
            self._fill(ref.key)

    # ---- internals ------------------------------------------------------------------------
    def _relabel(self, node: TreeNode[NodeRef], label: Text) -> None:
        """A new label for ``node`` that repaints its own line only, at once.
        ``TreeNode.set_label`` repaints the node's whole subtree (``Tree._refresh_node``), and
        the lines below it render again since their cache keys hold the node's update count:
        a syncing array's percent re-rendered its members, PV and filesystem lines each second
        too (issue 29). It also repaints through ``call_later``, a message each second (issue
        44): the line is refreshed here instead, as ``set_label`` leaves the node."""
        node._updates += 1
        node._label = self.process_label(label)
        lines, top = self._tree_lines, self.scroll_offset.y  # (built: the node's line is known)
        line = node._line
        if 0 <= line < len(lines) and top <= line < top + self.size.height:
            # Widget.refresh also drops the widget's component-style cache, which a style
            # change drops itself (notify_style_update): kept, the line renders without
            # resolving the tree's five component styles again (most of its cost each second)
            styles = dict(self._rich_style_cache)
            self._refresh_line(line)
            self._rich_style_cache.update(styles)

    def _decorate(self, s: NodeSpec) -> Text:
        sev = None if s.ref.is_link else self._badges.get(s.ref.name)
        if sev is None and s.ref.kind == "vg":
            sev = self._badges.get(s.ref.name)
        if sev is None or sev not in BADGES:
            return s.label
        glyph, style = BADGES[sev]
        out = Text(f"{glyph} ", style)
        out.append_text(s.label)
        return out

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[NodeRef]) -> None:
        event.stop()
        ref = event.node.data
        self._highlighted = ref.key if ref is not None else None
        self.post_message(self.Highlighted(ref))

    def on_click(self, event: events.Click) -> None:
        self._clicked_at = time.monotonic()

    def on_tree_node_selected(self, event: Tree.NodeSelected[NodeRef]) -> None:
        ref = event.node.data
        by_click = time.monotonic() - self._clicked_at < CLICK_SELECT_S
        self._clicked_at = -1.0
        if ref is not None and ref.target is not None:
            event.stop()
            self.go_to(ref.target, remember=True)
            return
        if not by_click and event.node.allow_expand:
            event.node.toggle()
