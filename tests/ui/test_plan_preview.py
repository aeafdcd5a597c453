"""PlanPreviewScreen with text from an untrusted plan: control characters shown escaped (and never
read as markup), the steps' digest shown; Run still executes the plan as it is."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from rich.text import Text
from textual.app import App
from textual.widgets import Input, Label, Static

from app.cli import main
from app.plans.audit_log import AuditLog
from app.plans.plan import Plan, Step, load_plan_file
from app.ui.screens.plan_preview import PlanPreviewScreen
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock
from tests.plans.fakes import FakeBackend, array_machine, is_preflight_read
from widgets.plan_view import PlanView


class Host(App[None]):
    pass


def _plain(w: Static) -> str:
    c = w.content
    return c.plain if isinstance(c, Text) else str(c)


PLAN = Plan(
    "check md127\x1b[2J",
    (
        Step.decode(
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
        ran = [c for c in be.calls if not is_preflight_read(c[0])]
        assert ran == [(("tee", "/sys/block/md127/md/sync_action"), "check\n")]
        started = audit.read_entries()[0]
        assert started.event == "started" and started.digest == PLAN.digest


async def test_copy_key_puts_the_exact_shell_script_on_the_clipboard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    be = FakeBackend(array_machine())
    app = Host()
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = PlanPreviewScreen(PLAN, be, audit=AuditLog(tmp_path / "audit.log"))
        await app.push_screen(screen)
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
    expected = "\n".join(
        [
            "#!/bin/sh",
            "# check md127\\x1b[2J",
            f"# digest: {PLAN.digest}",
            "# note: line one",
            "# note: line two \\x07",
            "# warning: [bold red]markup[/] is text here\\u202e",
            "set -e",
            "# 1. read every stripe\\x1b[1A\\x1b[2K\\x0dnothing to see",
            "printf '%s\\n' check | tee /sys/block/md127/md/sync_action",
            "",
        ]
    )
    assert copied == [expected]
    assert be.calls == []  # copying runs nothing


def _sync_plan_file(tmp_path: Path) -> Path:
    # idle: md127 is resyncing, so a check is refused (md answers EBUSY)
    out = tmp_path / "from-cli.json"
    assert (
        main(
            ["plan", "sync", "idle", "--array", "md127", "--demo", "raid10-evo", "--out", str(out)]
        )
        == 0
    )
    return out


async def test_save_key_writes_the_plan_file_apply_dry_run_accepts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The TUI saves the same plan file ``raidman plan --out`` writes, and ``raidman apply
    --dry-run`` reads it back."""
    cli_file = _sync_plan_file(tmp_path)
    plan, _ = load_plan_file(cli_file)
    be = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual())
    work = tmp_path / "work"
    work.mkdir(mode=0o700)
    monkeypatch.chdir(work)
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = PlanPreviewScreen(plan, be, audit=AuditLog(tmp_path / "audit.log"))
        await app.push_screen(screen)
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        box = screen.query_one("#pp-save-path", Input)
        assert box.has_focus and box.value.endswith(".sh")
        box.value = "saved.json"
        await pilot.press("enter")
        await pilot.pause()
        assert screen.saved_path == work / "saved.json"
        # a name that exists is never overwritten
        await pilot.press("s")
        box.value = "saved.json"
        await pilot.press("enter")
        await pilot.pause()
        assert "exists" in _plain(screen.query_one("#pp-status", Static))
    saved = work / "saved.json"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    # one serializer; the consequences are the machine's at that moment (the demo's sync moved
    # on between the CLI's probe and the TUI's), so both carry them and the rest is identical
    got, want = json.loads(saved.read_text()), json.loads(cli_file.read_text())
    assert got.pop("consequences")["syncs"][0]["array"] == "md127"
    assert want.pop("consequences")["syncs"][0]["array"] == "md127"
    assert got == want
    capsys.readouterr()
    assert main(["apply", str(saved), "--dry-run", "--demo", "raid10-evo"]) == 0
    out = capsys.readouterr().out
    assert plan.digest in out


async def test_save_key_writes_a_shell_script_not_world_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    be = FakeBackend(array_machine())
    monkeypatch.chdir(tmp_path)
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = PlanPreviewScreen(PLAN, be, audit=AuditLog(tmp_path / "audit.log"))
        await app.push_screen(screen)
        await pilot.pause()
        await pilot.press("s")
        box = screen.query_one("#pp-save-path", Input)
        box.value = "plan.txt"
        await pilot.press("enter")
        await pilot.pause()
        assert "name it .sh" in _plain(screen.query_one("#pp-status", Static))
        box.value = "check.sh"
        await pilot.press("enter")
        await pilot.pause()
        # Esc in the save box cancels the save, not the screen
        await pilot.press("s")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
    script = tmp_path / "check.sh"
    assert script.read_text() == PLAN.shell_script()
    assert stat.S_IMODE(script.stat().st_mode) == 0o700
    assert be.calls == []


async def test_help_and_footer_name_copy_and_save(tmp_path: Path) -> None:
    from app.ui.screens.help import key_rows

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = PlanPreviewScreen(
            PLAN, FakeBackend(array_machine()), audit=AuditLog(tmp_path / "a")
        )
        await app.push_screen(screen)
        await pilot.pause()
        rows = key_rows(screen)
        assert ("c", "Copy") in rows and ("s", "Save") in rows
