"""PlanPreviewScreen: show a plan, copy it, confirm it, run it with live step status.

* numbered copyable command lines (``widgets.plan_view.PlanView``), destructive steps in red;
  every text from the plan shown with control characters escaped (``Plan.escaped()``) and never
  read as markup; the digest of the steps (what ``apply`` checks) under the title;
* warnings, notes and the pre-flight result (refusals disable Run; warnings need the explicit
  "force past warnings" checkbox, whose codes go to the audit log);
* "Copy as shell script": ``Plan.shell_script()`` to the clipboard and to a file (path shown),
  and the plan file (``Plan.to_json()`` with its digest) next to it for ``raidman apply``;
* destructive plans: an Input where the user types the target's name;
* Run: the executor in a thread worker; each step turns ✓ / ✗ / not run, the failing step's
  stderr is shown under it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Checkbox, Footer, Input, Label, Static

from app.plans.audit_log import AuditLog
from app.plans.executor import ExecutionReport, StepEvent, execute
from app.plans.plan import Plan, escape_controls
from app.plans.preflight import Preflight
from app.plans.render import confirmation_matches, preflight_now
from backends.base import Backend
from widgets.plan_view import PlanView


def scripts_dir(audit: AuditLog) -> Path:
    return audit.path.parent / "plans"


class PlanPreviewScreen(Screen[ExecutionReport | None]):
    """Dismisses with the ExecutionReport after a run, or None when closed without running."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("y", "copy_script", "Copy as shell script"),
    ]
    DEFAULT_CSS = """
    PlanPreviewScreen { layout: vertical; }
    PlanPreviewScreen #pp-title { text-style: bold; padding: 0 1; }
    PlanPreviewScreen #pp-digest { color: $text-muted; padding: 0 1; }
    PlanPreviewScreen #pp-body { height: 1fr; }
    PlanPreviewScreen .pp-warn { color: $warning; padding: 0 1; }
    PlanPreviewScreen .pp-refused { color: $error; text-style: bold; padding: 0 1; }
    PlanPreviewScreen .pp-note { color: $text-muted; padding: 0 1; }
    PlanPreviewScreen #pp-buttons { height: auto; padding: 0 1; }
    PlanPreviewScreen #pp-buttons Button { margin-right: 1; }
    PlanPreviewScreen #pp-status { padding: 0 1; height: auto; }
    """

    def __init__(
        self,
        plan: Plan,
        backend: Backend,
        *,
        preflight: Preflight | None = None,
        audit: AuditLog | None = None,
        dry_run: bool = False,
    ) -> None:
        super().__init__()
        self.plan = plan
        self.backend = backend
        self.preflight = preflight or Preflight()
        self.audit = audit or AuditLog()
        self.dry_run = dry_run
        self.report: ExecutionReport | None = None
        self.script_path: Path | None = None
        self.running = False

    def compose(self) -> ComposeResult:
        p = self.plan.escaped()  # for display only: Run executes self.plan
        yield Label(Text(p.title + ("   — DESTROYS DATA" if p.destructive else "")), id="pp-title")
        yield Static(Text(f"digest {self.plan.digest}"), id="pp-digest")
        with VerticalScroll(id="pp-body"):
            yield PlanView(p, id="pp-plan")
            for r in self.preflight.refusals:
                yield Static(Text(escape_controls(f"REFUSED {r} [{r.code}]")), classes="pp-refused")
            for w in p.warnings:
                yield Static(Text(f"warning: {w}"), classes="pp-warn")
            for iw in self.preflight.warnings:
                yield Static(Text(escape_controls(f"warning: {iw} [{iw.code}]")), classes="pp-warn")
            for n in p.notes:
                yield Static(Text(f"note: {n}"), classes="pp-note")
            if self.preflight.warnings:
                codes = " ".join(self.preflight.warning_codes)
                yield Checkbox(
                    f"force past the warnings ({codes}); recorded in the audit log", id="pp-force"
                )
            if self.backend.read_only_reason:
                yield Static(
                    f"read-only: {self.backend.read_only_reason} — nothing can run; copy the script instead",
                    classes="pp-refused",
                )
            if p.destructive:
                yield Label(Text(f"Type the target's name to confirm: {p.target}"))
                yield Input(placeholder=p.target, id="pp-confirm")
        with Horizontal(id="pp-buttons"):
            yield Button("Copy as shell script", id="pp-copy")
            yield Button("Run", id="pp-run", variant="error" if p.destructive else "primary")
            yield Button("Close", id="pp-close")
        yield Static("", id="pp-status")
        yield Footer()

    def on_mount(self) -> None:
        self._update_run_button()

    # ---- state -----------------------------------------------------------------
    @property
    def forced(self) -> tuple[str, ...]:
        try:
            box = self.query_one("#pp-force", Checkbox)
        except Exception:
            return ()
        return self.preflight.warning_codes if box.value else ()

    def can_run(self) -> str | None:
        """None when Run may start, else why not."""
        if self.running:
            return "running"
        if self.report is not None:
            return "already run"
        if self.preflight.refusals:
            return "pre-flight refuses a device"
        if self.preflight.unforced(self.forced):
            return "pre-flight warnings: tick 'force past the warnings' to go on"
        if self.plan.destructive:
            typed = self.query_one("#pp-confirm", Input).value
            if not confirmation_matches(self.plan, typed):
                return f"type {self.plan.target!r} to confirm"
        return None

    def _update_run_button(self) -> None:
        why = self.can_run()
        btn = self.query_one("#pp-run", Button)
        btn.disabled = why is not None
        btn.tooltip = why

    @on(Input.Changed, "#pp-confirm")
    @on(Checkbox.Changed, "#pp-force")
    def _changed(self) -> None:
        self._update_run_button()

    # ---- actions ---------------------------------------------------------------
    @on(Button.Pressed, "#pp-close")
    def action_close(self) -> None:
        if not self.running:
            self.dismiss(self.report)

    @on(Button.Pressed, "#pp-copy")
    def action_copy_script(self) -> None:
        script = self.plan.shell_script()
        self.app.copy_to_clipboard(script)
        d = scripts_dir(self.audit)
        path = d / f"{self.plan.kind or 'plan'}-{time.strftime('%Y%m%d-%H%M%S')}.sh"
        try:
            d.mkdir(parents=True, exist_ok=True)
            path.write_text(script, encoding="utf-8")
            self.script_path = path
            # the plan file for `raidman apply`, with the digest shown above
            data = json.dumps(self.plan.to_json(), indent=2) + "\n"
            path.with_suffix(".json").write_text(data, encoding="utf-8")
            msg = f"copied to the clipboard and saved: {path} (plan file: {path.with_suffix('.json')})"
        except OSError as e:
            msg = f"copied to the clipboard (could not save {path}: {e.strerror})"
        self.query_one("#pp-status", Static).update(msg)
        self.notify(msg, title="Shell script")

    @on(Button.Pressed, "#pp-run")
    def action_run(self) -> None:
        why = self.can_run()
        if why is not None:
            self.notify(why, severity="warning")
            return
        self.running = True
        self._update_run_button()
        self.query_one("#pp-status", Static).update("running…")
        self._execute()

    @work(thread=True, exclusive=True, group="plan-execute")
    def _execute(self) -> None:
        def on_event(ev: StepEvent) -> None:
            self.app.call_from_thread(self._on_step_event, ev)

        # pre-flight again on the machine as it is now: the preview may be minutes old
        again = preflight_now(self.plan, self.backend)
        if again.refusals or again.unforced(self.forced):
            self.app.call_from_thread(self._refused_at_run, again)
            return
        report = execute(
            self.plan,
            self.backend,
            dry_run=self.dry_run,
            on_event=on_event,
            audit=self.audit,
            forced=self.forced,
        )
        self.app.call_from_thread(self._finished, report)

    def _refused_at_run(self, again: Preflight) -> None:
        self.running = False
        self.preflight = again
        lines = [f"REFUSED {r} [{r.code}]" for r in again.refusals]
        lines += [f"warning {w} [{w.code}] (not forced)" for w in again.unforced(self.forced)]
        msg = "pre-flight at Run stopped the plan, nothing was run:\n" + "\n".join(lines)
        self.query_one("#pp-status", Static).update(Text(msg))
        self.notify(lines[0] if lines else msg, title="Pre-flight refused", severity="error")
        self._update_run_button()

    def _on_step_event(self, ev: StepEvent) -> None:
        view = self.query_one("#pp-plan", PlanView)
        if ev.kind == "started":
            view.set_status(ev.index, "running")
        else:
            detail = ""
            if ev.status == "failed":
                stderr = ev.result.stderr.strip() if ev.result is not None else ""
                detail = escape_controls(
                    ev.message + (f"\n{stderr}" if stderr else ""), keep_newlines=True
                )
            view.set_status(ev.index, ev.status or "ok", detail)

    def _finished(self, report: ExecutionReport) -> None:
        self.report = report
        self.running = False
        view = self.query_one("#pp-plan", PlanView)
        for o in report.outcomes:
            if o.status == "not-run":
                view.set_status(o.index, "not-run")
        text = report.summary()
        if report.audit_error:
            text += f"\n{report.audit_error}"
        self.query_one("#pp-status", Static).update(Text(escape_controls(text, keep_newlines=True)))
        self._update_run_button()
