"""Renderables made once and shown again: a part of a pane whose data did not move keeps the
lines Rich made for it, so a pane that changes every second (a syncing array's Details) renders
only its moving part. A Rich ``Table`` is the dearest thing a pane renders (measuring every
cell, padding, wrapping): on raid10-evo the Details' field and member tables were most of the
TUI's time each second."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Self, TypeVar

from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style as RichStyle
from rich.text import Text
from textual.geometry import Region
from textual.reactive import Reactive
from textual.strip import Strip
from textual.visual import Visual, VisualType
from textual.widget import _RenderCache
from textual.widgets import Static

from widgets.detail_fields import GridRow, LabelGrid, text_key

T = TypeVar("T")


class Cached:
    """``make()``'s renderable, rendered once per width and console options; ``key`` names the
    data it shows (``CachedParts`` reuses a part whose key is unchanged)."""

    __slots__ = ("_lines", "_make", "_measure", "_renderable", "key")

    def __init__(self, key: object, make: Callable[[], RenderableType]) -> None:
        self.key = key
        self._make = make
        self._renderable: RenderableType | None = None
        self._lines: dict[Hashable, list[list[Segment]]] = {}
        self._measure: dict[Hashable, Measurement] = {}

    @property
    def renderable(self) -> RenderableType:
        if self._renderable is None:
            self._renderable = self._make()
        return self._renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        k = (
            options.max_width,
            options.min_width,
            options.justify,
            options.no_wrap,
            console.color_system,
        )
        lines = self._lines.get(k)
        if lines is None:
            lines = console.render_lines(self.renderable, options, pad=False)
            self._lines = {k: lines}  # one width at a time: a resize makes them again
        new_line = Segment.line()
        for line in lines:
            yield from line
            yield new_line

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        k = (options.max_width, options.min_width)
        m = self._measure.get(k)
        if m is None:
            m = Measurement.get(console, options, self.renderable)
            self._measure = {k: m}
        return m


class CachedParts:
    """The parts last shown: ``part(key, make)`` gives the same ``Cached`` (and its lines) while
    an equal key is asked for again. Keys are compared, not hashed (they hold the model's
    dataclasses); parts not asked for in a round are dropped by ``done()``."""

    def __init__(self) -> None:
        self._parts: list[Cached] = []
        self._used: list[Cached] = []
        self._values: list[tuple[object, object]] = []
        self._values_used: list[tuple[object, object]] = []

    def part(self, key: object, make: Callable[[], RenderableType]) -> Cached:
        c = next((c for c in (*self._parts, *self._used) if c.key == key), None)
        if c is None:
            c = Cached(key, make)
        self._used.append(c)
        return c

    def value(self, key: object, make: Callable[[], T]) -> T:
        """``make()``, made again only when ``key`` differs from the last round's (a value a
        part is made from, such as the rebuild risk beside a sync: its figures move only
        when a recovery runs, but it was worked out each second)."""
        hit = next((kv for kv in (*self._values, *self._values_used) if kv[0] == key), None)
        if hit is None:
            hit = (key, make())
        self._values_used.append(hit)
        return hit[1]  # type: ignore[return-value]

    def done(self) -> None:
        self._parts, self._used = self._used, []
        self._values, self._values_used = self._values_used, []


class LineDiffStatic(Static):
    """A ``Static`` whose ``update(..., layout=False)`` repaints only the lines that changed:
    the new content is rendered at once (while the widget is on screen) and compared with the
    lines shown, and only the changed lines are marked dirty, so the compositor re-renders a
    syncing array's few moving lines instead of the whole Details pane each second. Off screen,
    or when the line count changes, it is a plain ``Static.update``.

    Content that is a ``Group`` is rendered part by part, and a part that is the same object as
    in the last render (a ``Cached`` whose data did not move) keeps its strips: a syncing
    array's Details render only the sync block each second, not the field and member tables
    around it (issue 29: rendering the whole pane before the diff was a quarter of raid10-evo's
    main thread)."""

    # raidman's panes carry no clickable links (``@click`` meta): without this, every render
    # computed the link style (a walk of the widget's ancestors for their background) and
    # rebuilt every segment of every strip to apply it to none
    auto_links = Reactive(False)
    _diff_from: list[Strip] | None = None
    # id(part) -> (part, (width, style), its strips): the parts of the last part-wise render
    _part_strips: dict[int, tuple[object, object, list[Strip]]] | None = None
    # what each line of a new Group part showed -> ((width, style), its strips): the last render
    _leaf_strips: dict[Hashable, tuple[object, list[Strip]]] | None = None

    @property
    def can_diff(self) -> bool:
        """An ``update(..., layout=False)`` now is a line diff, which also finds out when the
        content's height changed (and lays the screen out then): on screen, its own height."""
        height = self.styles.height
        return bool(
            self.is_mounted
            and self.region
            and self.screen.is_current
            and (height is None or height.is_auto)
        )

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        cache = self._render_cache
        self._diff_from = (
            list(cache.lines)
            if not layout and self.can_diff and cache.size == self.size and cache.lines
            else None
        )
        super().update(content, layout=layout)

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        old, self._diff_from = self._diff_from, None
        if old is None or regions or layout or recompose or not repaint:
            return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)
        width, height = self.size
        # its own height (auto): more or fewer lines than shown is a layout, not a line diff
        new = self._strips(width)
        if len(new) != height or len(old) != height:
            return super().refresh(layout=True)
        self._render_cache = _RenderCache(self.size, new)
        changed = [
            Region(0, y, width, 1) for y, (a, b) in enumerate(zip(old, new, strict=True)) if a != b
        ]
        if changed:
            super().refresh(*changed)
            self._dirty_regions.clear()  # the lines are rendered: not again at paint time
        return self

    def _strips(self, width: int) -> list[Strip]:
        """The content as strips ``width`` cells wide, as ``Widget._render_content`` makes
        them; a ``Group`` part by part, reusing the strips of a part rendered last time. Each
        part is rendered inside a ``Group`` of its own, as the whole ``Group`` renders it (a
        bare ``Text`` would be given the widget's justify by ``post_render``)."""
        content = self.content
        style = self.visual_style
        if (
            not isinstance(content, Group)
            or self.text_selection is not None
            or self.styles.content_align != ("left", "top")
        ):
            self._part_strips = None
            return Visual.to_strips(self, self._render(), width, None, style)
        old = self._part_strips or {}
        old_leaves = self._leaf_strips or {}
        kept: dict[int, tuple[object, object, list[Strip]]] = {}
        kept_leaves: dict[Hashable, tuple[object, list[Strip]]] = {}
        out: list[Strip] = []
        at = (width, style)

        # the console's options and the base style, looked up once for every part
        app = self.app
        ctx = (app.console, app.console_options.update(highlight=False, width=width, height=None))
        rich_style = style.rich_style

        def render(r: RenderableType) -> list[Strip]:
            return self.render_part(r, width, rich_style, ctx)

        for part in content.renderables:
            hit = old.get(id(part))
            if hit is not None and hit[0] is part and hit[1] == at:
                strips = hit[2]
            elif (leaves := _leaves(part, width)) is not None:
                # a new Group of lines (the sync block each second): a line whose text did
                # not move keeps its strips, the others are rendered
                strips = []
                for key, leaf in leaves:
                    got = old_leaves.get(key) if key is not None else None
                    leaf_strips = got[1] if got is not None and got[0] == at else render(leaf)
                    if key is not None:
                        kept_leaves[key] = (at, leaf_strips)
                    strips.extend(leaf_strips)
            else:
                strips = render(part)
            kept[id(part)] = (part, at, strips)
            out.extend(strips)
        self._part_strips = kept
        self._leaf_strips = kept_leaves
        return out

    def render_part(
        self,
        part: RenderableType,
        width: int,
        rich_style: RichStyle,
        ctx: tuple[Console, ConsoleOptions],
    ) -> list[Strip]:
        """One part's strips: what ``Visual.to_strips(self, RichVisual(self, Group(part)),
        width, None, style)`` gives here (no selection, no links, left-top, no height limit),
        without what it looks up again for each part (the console's options, the screen, the
        selection): a sync block's few moving lines were each a whole ``to_strips``."""
        console, options = ctx
        line = one_line(part, width, console, options)
        if line is not None:  # what the lines below give it, without Rich's layout passes
            if rich_style:  # as post_render's _Styled: the widget's style under each segment
                add = rich_style.__add__
                line = [Segment(text, add(style), None) for text, style, _ in line]
            return [Strip(line)]
        segments = console.render(self.post_render(Group(part), rich_style), options)
        lines = Segment.split_and_crop_lines(segments, width, include_new_lines=False, pad=False)
        return [Strip(line) for line in lines]


def one_line(
    part: object, width: int, console: Console, options: ConsoleOptions
) -> list[Segment] | None:
    """The segments (without the newline) of a part that renders as one line ``width`` cells
    wide, as ``console.render`` of it in a ``Group`` gives them; None when it may not (it
    wraps, is cut, is justified, expands tabs), left to Rich's layout.

    A ``Text`` that fits on one line is wrapped by Rich into one copy of itself, justified
    ("default") and truncated to nothing, then joined into a ``Text`` whose base style is a span
    (``Text.__rich_console__``): that join is rendered here alone. A sync block's few moving
    lines were each the whole pass (issue 44: half the calls of rendering them)."""
    if type(part) is GridRow:
        return part.line(console) if part.width <= width else None
    if type(part) is not Text or part.end != "\n" or options.justify not in (None, "default"):
        return None
    plain = part.plain
    if (
        part.justify not in (None, "default")
        or "\n" in plain
        or "\t" in plain
        or len(plain) > width
        or part.cell_len > width
    ):
        return None
    if not part.style:  # the join adds no span: the part renders as itself
        return list(part.render(console))
    return list(_JOIN.join((part,)).render(console))


_JOIN = Text("\n")  # what Text.__rich_console__ joins its lines with


def _leaves(part: object, width: int) -> list[tuple[Hashable | None, RenderableType]] | None:
    """A ``Group``'s renderables flattened, each with the key of what it shows: ``Text`` lines
    (ending in a newline) and the rows of a ``LabelGrid`` that fits; None for anything else
    (rendered whole, as before). A ``Group`` renders its renderables one after the other with
    the same options, so rendering them one by one gives the same lines."""
    if not isinstance(part, Group):
        return None
    out: list[tuple[Hashable | None, RenderableType]] = []
    for r in part.renderables:
        if isinstance(r, Group):
            inner = _leaves(r, width)
            if inner is None:
                return None
            out.extend(inner)
        elif isinstance(r, Text) and r.end == "\n":
            out.append((text_key(r), r))
        elif isinstance(r, LabelGrid):
            if r.fits(width):
                out.extend((row.key, row) for row in r.row_parts())
            else:
                out.append((None, r))
        else:
            return None
    return out
