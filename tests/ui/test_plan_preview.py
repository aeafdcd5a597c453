"""PlanPreviewScreen with text from an untrusted plan: control characters shown escaped (and never
read as markup), the steps' digest shown; Run still executes the plan as it is."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import App
from textual.widgets import Label, Static

from app.plans.audit_log import AuditLog
from app.plans.plan import Plan, Step
from app.ui.screens.plan_preview import PlanPreviewScreen
from tests.plans.fakes import FakeBackend, array_machine
from widgets.plan_view import PlanView


class Host(App[None]):
    pass


def _plain(w: Static) -> str:
    c = w.content
    return c.plain if isinstance(c, Text) else str(c)


PLAN = Plan(
    "check md127\x1b[2J",
    (
        Step(
            ("tee", "/sys/block/md127/md/sync_action"),
            "read every stripe\x1b[1A\x1b[2K\rnothing to see",
            stdin="check\n",
        ),
    ),
    target="md127",
    warnings=("[bold red]markup[/] is text here\u202e",),
    notes=("line one\nline two \x07",),
    kind="sync-action",
    params={"array": "md127", "action": "check"},
)


async def test_preview_escapes_plan_text_and_shows_the_digest(tmp_path: Path) -> None:
    be = FakeBackend(array_machine())
    audit = AuditLog(tmp_path / "audit.log")
    app = Host()
    async with app.run_test(size=(140, 40)) as pilot:
        screen = PlanPreviewScreen(PLAN, be, audit=audit)
        await app.push_screen(screen)
        await pilot.pause()
        shown = [_plain(w) for w in screen.query(Static)]
        shown.append(screen.query_one("#pp-plan", PlanView).render_plan().plain)
        shown.append(_plain(screen.query_one("#pp-title", Label)))
        everything = "\n".join(shown)
        for raw in ("\x1b", "\r", "\x07", "\u202e"):
            assert raw not in everything
        assert "read every stripe\\x1b[1A\\x1b[2K\\x0dnothing to see" in everything
        assert "check md127\\x1b[2J" in everything
        assert "warning: [bold red]markup[/] is text here\\u202e" in everything  # not markup
        assert "line two \\x07" in everything
        assert f"digest {PLAN.digest}" == _plain(screen.query_one("#pp-digest", Static))
        await pilot.click("#pp-run")
        await app.workers.wait_for_complete()
        await pilot.pause()
        # the display copy is escaped; what runs is the plan itself
        assert be.calls == [(("tee", "/sys/block/md127/md/sync_action"), "check\n")]
        started = audit.read_entries()[0]
        assert started.event == "started" and started.digest == PLAN.digest


async def test_save_writes_a_plan_file_apply_accepts(tmp_path: Path) -> None:
    from app.plans.plan import load_plan_file

    plan = Plan(
        "check md127",
        (Step(("tee", "/sys/block/md127/md/sync_action"), "check", stdin="check\n"),),
        target="md127",
        kind="sync-action",
        params={"array": "md127", "action": "check"},
    )
    be = FakeBackend(array_machine())
    app = Host()
    async with app.run_test(size=(140, 40)) as pilot:
        screen = PlanPreviewScreen(plan, be, audit=AuditLog(tmp_path / "audit.log"))
        await app.push_screen(screen)
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert screen.script_path is not None
        assert f"# digest: {plan.digest}" in screen.script_path.read_text()
        loaded, digest = load_plan_file(screen.script_path.with_suffix(".json"))
        assert loaded.steps == plan.steps and digest == plan.digest
        assert be.calls == []  # saving runs nothing
