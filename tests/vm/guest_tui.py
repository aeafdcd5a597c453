"""Guest side: the TUI on the real kernel under Pilot, returning what a user would read.

Called from the host with ``vm.call("tests.vm.guest_tui:tui_view", "md0")``.
"""

from __future__ import annotations

import asyncio
import io
from typing import Any


def _plain(renderable: Any, width: int = 200) -> str:
    from rich.console import Console

    console = Console(file=io.StringIO(), width=width, color_system=None, record=True)
    console.print(renderable)
    return console.export_text()


def tui_view(md: str) -> dict[str, Any]:
    """Start RaidmanApp(LinuxBackend()), select ``md`` and return the tree label of the array,
    the header banner and the details pane as plain text."""
    from app.ui.app import RaidmanApp
    from backends.linux import LinuxBackend
    from widgets.device_detail import DeviceDetail
    from widgets.header_banner import HeaderBanner

    async def run() -> dict[str, Any]:
        app = RaidmanApp(LinuxBackend(), probe_interval=0, sample_interval=0)
        async with app.run_test(size=(200, 60)) as pilot:
            for _ in range(500):
                if app.machine is not None and app.storage_tree.keys:
                    break
                await pilot.pause(0.05)
            assert app.go_to(md), f"{md} not in the tree"
            detail = app.main.query_one(DeviceDetail)
            body = detail.query_one("#detail-body")
            # under TCG the cursor move, the selection message and the repaint take a while
            for _ in range(600):
                shown = _plain(getattr(body, "content", None) or body.render())
                if app.selected is not None and app.selected.name == md and md in shown:
                    break
                await pilot.pause(0.05)
            label = app.storage_tree.label_for(f"dev:{md}")
            header = app.main.query_one(HeaderBanner)
            return {
                "label": label.plain if label is not None else "",
                "header": _plain(getattr(header, "content", None) or header.render()),
                "detail": _plain(getattr(body, "content", None) or body.render()),
                "read_only": app.backend.read_only_reason,
            }

    return asyncio.run(run())
