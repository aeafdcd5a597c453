"""The Log tab: the kernel's lines (journalctl -k, or dmesg) that name the selected disk and
its partitions, or the selected array and its members, newest first, with their times.

Read through the backend in a worker (app/kernel_log.py), at most every ``MAX_AGE_S`` seconds
while the tab is shown; moving the tree cursor filters the log already read."""

from __future__ import annotations

import time

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from app.format import STATE_COLOURS
from app.kernel_log import KernelLog, lines_for, names_for, read_kernel_log, when
from app.model import Machine
from widgets.shown import shown

MAX_AGE_S = 10.0
SHOWN = 300
MUTED = STATE_COLOURS["muted"]


def log_text(log: KernelLog | None, machine: Machine | None, name: str | None) -> Text:
    t = Text()
    if log is None:
        t.append("reading the kernel log…", style=MUTED)
        return t
    if log.source is None:
        t.append(f"The kernel log could not be read: {log.note}", style=STATE_COLOURS["warning"])
        return t
    if machine is None or not name:
        t.append("Select a disk, partition or array in the tree.", style=MUTED)
        return t
    names = names_for(machine, name)
    lines = lines_for(log, names)
    t.append(f"{name}: ", style="bold")
    t.append(
        f"{len(lines)} of {len(log.lines)} kernel lines name {', '.join(sorted(names))} "
        f"(from {log.source}, this boot, newest first)\n",
        style=MUTED,
    )
    if not lines:
        t.append("nothing since boot", style=MUTED)
    for ln in lines[:SHOWN]:
        t.append(when(ln.at, ln.since_boot) + "  ", style=MUTED)
        bad = ln.priority is not None and ln.priority <= 3
        t.append(ln.text + "\n", style=STATE_COLOURS["error"] if bad else "")
    t.rstrip()
    return t


class KernelLogPane(VerticalScroll):
    DEFAULT_CSS = """
    KernelLogPane { padding: 0 1; }
    """

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self._log: KernelLog | None = None
        self._read_at = 0.0

    def compose(self) -> ComposeResult:
        yield Static(Text("reading the kernel log…", style=MUTED), id="klog-body")

    def on_mount(self) -> None:
        if hasattr(self.app, "selected"):
            self.watch(self.app, "selected", self._selected, init=False)

    def on_show(self) -> None:
        self._refresh()

    def _selected(self, _ref: object) -> None:
        if shown(self):
            self._refresh()

    def _selected_name(self) -> str | None:
        ref = getattr(self.app, "selected", None)
        return getattr(ref, "name", None) if ref is not None else None

    def _refresh(self) -> None:
        self._render_now()
        backend = getattr(self.app, "backend", None)
        if backend is not None and time.monotonic() - self._read_at > MAX_AGE_S:
            self._read_at = time.monotonic()
            self._fetch(backend)

    def _render_now(self) -> None:
        machine = getattr(self.app, "machine", None)
        self.query_one("#klog-body", Static).update(
            log_text(self._log, machine, self._selected_name())
        )

    @work(
        thread=True,
        exclusive=True,
        group="kernel-log",
        exit_on_error=False,
        description="kernel-log",
    )
    def _fetch(self, backend: object) -> None:
        log = read_kernel_log(backend)  # type: ignore[arg-type]
        self.app.call_from_thread(self._got, log)

    def _got(self, log: KernelLog) -> None:
        self._log = log
        self._render_now()
