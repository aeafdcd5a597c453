"""The Live tab (key ``l``): what the selected device does now and what the kernel said about
it: the I/O table (widgets/io_pane.py) above the kernel's log lines that name it
(widgets/kernel_log_pane.py)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical

from widgets.io_pane import IoPane
from widgets.kernel_log_pane import KernelLogPane


class LivePane(Vertical):
    DEFAULT_CSS = """
    LivePane > IoPane { height: auto; max-height: 50%; }
    LivePane > KernelLogPane { height: 1fr; border-top: solid $primary-background; }
    """

    def compose(self) -> ComposeResult:
        yield IoPane(id="io-pane")
        yield KernelLogPane(id="kernel-log")
