"""Renderables made once and shown again: a part of a pane whose data did not move keeps the
lines Rich made for it, so a pane that changes every second (a syncing array's Details) renders
only its moving part. A Rich ``Table`` is the dearest thing a pane renders (measuring every
cell, padding, wrapping): on raid10-evo the Details' field and member tables were most of the
TUI's time each second."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator

from rich.console import Console, ConsoleOptions, RenderableType
from rich.measure import Measurement
from rich.segment import Segment


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

    def part(self, key: object, make: Callable[[], RenderableType]) -> Cached:
        c = next((c for c in (*self._parts, *self._used) if c.key == key), None)
        if c is None:
            c = Cached(key, make)
        self._used.append(c)
        return c

    def done(self) -> None:
        self._parts, self._used = self._used, []
