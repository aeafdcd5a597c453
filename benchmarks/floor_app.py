"""The floor of issue 13: the least a Textual app costs to watch something at 1 Hz.

Header + Footer + one 16-line Static whose text changes every second (an mdstat-like block with a
progress figure), nothing else. ``bench_side_by_side.py`` runs it on its own 200×60 pty beside
raidman; raidman's CPU is reported as a multiple of this app's.

Run: ``.venv/bin/python benchmarks/floor_app.py`` (q quits).
"""

from __future__ import annotations

import time
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Header, Static

LINES = 16


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


class FloorApp(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "quit", "Quit")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(body(0), id="body")
        yield Footer()

    def on_mount(self) -> None:
        self.tick = 0
        self.set_interval(1.0, self.update_body)

    def update_body(self) -> None:
        self.tick += 1
        self.query_one("#body", Static).update(body(self.tick))


if __name__ == "__main__":
    FloorApp().run()
