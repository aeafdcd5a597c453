"""The floor: the least a Textual app costs to watch something at 1 Hz.

Header + Footer + one 16-line body whose text changes every second (an mdstat-like block with a
progress figure), nothing else. The text is plain: mdstat is full of square brackets
(``[raid1]``, ``[4/4] [UUUU]``, ``[====>...]``) that a markup-parsing Static would parse every
second (issue 29 measured that floor 6.7 × dearer than the same app without markup), and
raidman never parses machine data as markup. Three variants of the body, chosen by
``--variant``; ``bench_side_by_side.py`` runs all three side by side and takes the cheapest as
the floor (printing each):

* ``static``: a ``Static(markup=False)`` updated with the new text;
* ``log``: a ``Log`` cleared and written again;
* ``render``: a bare ``Widget`` whose ``render()`` returns the string (``refresh()`` each second).

Run: ``.venv/bin/python benchmarks/floor_app.py [--variant static|log|render]`` (q quits).
"""

from __future__ import annotations

import argparse
import time
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import Footer, Header, Log, Static

LINES = 16
VARIANTS = ("static", "log", "render")


def body(tick: int) -> str:
    """16 lines that change every second, about as long as /proc/mdstat's."""
    pct = (tick * 0.1) % 100
    head = [
        "Personalities : [raid1] [raid6] [raid5] [raid4] [raid10]",
        f"md127 : active raid10 sdd[3] sdc[2] sdb[1] sda[0]   (tick {tick})",
        "      976508928 blocks super 1.2 512K chunks 2 near-copies [4/4] [UUUU]",
        f"      [====>................]  resync = {pct:4.1f}% (97650892/976508928) "
        f"finish={120 - tick % 120}.0min speed=101234K/sec",
        "      bitmap: 4/8 pages [16KB], 65536KB chunk",
    ]
    rest = [f"  line {i:2d}  {time.strftime('%H:%M:%S')}" for i in range(len(head), LINES)]
    return "\n".join(head + rest)


class Body(Widget):
    """The ``render`` variant: the string itself is what it renders (never markup)."""

    DEFAULT_CSS = "Body { height: auto; }"

    def __init__(self, **kwargs: str) -> None:
        super().__init__(markup=False, **kwargs)  # type: ignore[arg-type]
        self.text = body(0)

    def render(self) -> str:
        return self.text


class FloorApp(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "quit", "Quit")]

    def __init__(self, variant: str = "static") -> None:
        super().__init__()
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}")
        self.variant = variant

    def compose(self) -> ComposeResult:
        yield Header()
        if self.variant == "static":
            yield Static(body(0), id="body", markup=False)
        elif self.variant == "log":
            log = Log(id="body", auto_scroll=False)
            log.write(body(0))
            yield log
        else:
            yield Body(id="body")
        yield Footer()

    def on_mount(self) -> None:
        self.tick = 0
        self.set_interval(1.0, self.update_body)

    def update_body(self) -> None:
        self.tick += 1
        text = body(self.tick)
        w = self.query_one("#body")
        if isinstance(w, Static):
            w.update(text)
        elif isinstance(w, Log):
            w.clear()
            w.write(text)
        elif isinstance(w, Body):
            w.text = text
            w.refresh()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--variant", choices=VARIANTS, default="static")
    FloorApp(ap.parse_args().variant).run()
