"""Shared helpers for the Pilot and snapshot tests."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.pilot import Pilot
from textual.worker import WorkerState

from app.ui.app import RaidmanApp


async def wait_for(pilot: Pilot[None], predicate: object, timeout: float = 5.0) -> None:
    """Pause until ``predicate()`` is true (worker threads finish asynchronously)."""
    assert callable(predicate)
    steps = int(timeout / 0.02)
    for _ in range(steps):
        if predicate():
            await pilot.pause()
            return
        await pilot.pause(0.02)
    raise AssertionError("condition not reached in time")


async def wait_ready(pilot: Pilot[None]) -> None:
    """Until the first probe has been shown in the tree and the audits asked for so far have set
    their badges (an audit asked for while the first ran follows it: a badge it adds widens the
    tree, and a snapshot taken between the two differed in the scrollbar's thumb)."""
    app = pilot.app
    assert isinstance(app, RaidmanApp)
    await wait_for(pilot, lambda: app.machine is not None and app.storage_tree.keys)
    await wait_for(pilot, lambda: app.audit_count > 0 and app.session.audit_idle)
    # the reads the first probe starts (SMART, member superblocks, ...) land in the Details and
    # the tree when their workers end, and may ask for another audit: wait until no worker runs
    # and the audits are done twice in a row (the retire scenario's Details scrollbar differed
    # when the superblock read landed after the picture)
    settled = 0
    for _ in range(250):
        busy = any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers)
        settled = 0 if busy or not app.session.audit_idle else settled + 1
        if settled >= 2:
            break
        await pilot.pause(0.02)
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


def plain(widget: object, width: int = 160) -> str:
    """The text a Static shows (any Rich renderable), without styles."""
    from io import StringIO

    from rich.console import Console
    from textual.widgets import Static

    assert isinstance(widget, Static)
    content = widget.content
    if isinstance(content, str):
        return content
    console = Console(file=StringIO(), width=width, color_system=None, record=True)
    console.print(content)
    return console.export_text()


def screen_lines(app: object) -> list[str]:
    """The text of the screen as the terminal shows it, one string per row."""
    from textual.app import App

    assert isinstance(app, App)
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def preview_of(pilot: Pilot[None], app: App[None], timeout: float = 10.0) -> Any:
    """The plan preview a wizard opens (its plan is made in a worker, pre-flight included)."""
    from app.ui.screens.plan_preview import PlanPreviewScreen

    await wait_for(pilot, lambda: isinstance(app.screen, PlanPreviewScreen), timeout=timeout)
    return app.screen
