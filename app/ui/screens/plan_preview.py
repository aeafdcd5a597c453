"""PlanPreviewScreen: show a plan, copy it, confirm it, run it with live step status.

* numbered copyable command lines (``widgets.plan_view.PlanView``), destructive steps in red;
  every text from the plan shown with control characters escaped (``Plan.escaped()``) and never
  read as markup; the digest of the steps (what ``apply`` checks) under the title;
* warnings, notes and the pre-flight result (refusals disable Run; warnings need the explicit
  "force past warnings" checkbox, whose codes go to the audit log);
* a plan for another machine (``raidman --host``) says so under its title ("on host fleet1"); it
  runs through that host's backend (the same ssh connection), and the audit log it is given
  (``app.hosts.HostAuditLog``) records the host;
* ``c`` copies ``Plan.shell_script()`` (each argv ``shlex.join``-ed, the digest and each step's
  reason as comments, control characters escaped) to the clipboard with OSC 52
  (``App.copy_to_clipboard``: works over SSH when the terminal allows it);
* ``s`` saves the plan where the user types (default: the current directory): ``.sh`` the shell
  script (mode 0700), ``.json`` the plan file ``raidman apply`` reads (``render.plan_file_text``,
  mode 0600); atomically, never through a symlink, never over an existing file
  (``app.statefiles.write_text``); a plan for another host records it, as ``raidman plan --host``
  does (``apply`` refuses to run it anywhere else);
* what running it means, at the top in one block (``app.plans.outcome.consequences``: each sync's time,
  rate and bytes per member, what one more failure would cost meanwhile), recomputed on the
  machine as it is when the screen opens and again at Run;
* plans that destroy data or leave an array weaker (``Plan.needs_typed``): an Input, always on
  screen above the buttons (the preview scrolls above it), where the user types the target's
  name; Run (ctrl+r, the button) without it focuses the field, Enter in it runs once it matches;
  the run worker checks it again against the consequences on a fresh probe;
* Run: the executor in a thread worker whose events come back as messages (``StepStarted``,
  ``StepOutput``, ``StepFinished``, ``PlanFinished``); the running step shows its elapsed time
  (ticking each second), its last output lines and, where the program or the kernel gives a
  figure, a bar: mke2fs's own counters, or the sync of an array a step started, as the live
  session sees it. Each step turns ✓ / ✗ / not run; at the end the account of the run
  (``progress.result_lines``): what ran (exit code, duration), what failed (stderr tail), what
  did not run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Button, Checkbox, Footer, Input, Label, Static

from app import statefiles
from app.backend import Backend
from app.format import duration
from app.hosts import HostAuditLog
from app.model.devices import Machine
from app.model.live import LiveSample
from app.plans.audit_log import AuditLog
from app.plans.executor import ExecutionReport, StepEvent, execute
from app.plans.guards.preflight import Issue, Preflight
from app.plans.outcome.rates import progress_rates
from app.plans.outcome.sync_steps import sync_starting_steps
from app.plans.plan import Plan, escape_controls
from app.plans.progress import result_lines
from app.plans.qualify_store import keep_run
from app.plans.render import (
    confirmation_matches,
    current_consequences,
    preflight_for,
)
from app.ui.screens.plan_save import default_save_name, host_script, save_plan
from widgets.plan_view import PlanView
from widgets.run_progress import RunProgress


class StepStarted(Message):
    def __init__(self, event: StepEvent) -> None:
        super().__init__()
        self.event = event


class StepOutput(Message):
    def __init__(self, event: StepEvent) -> None:
        super().__init__()
        self.event = event


class StepFinished(Message):
    def __init__(self, event: StepEvent) -> None:
        super().__init__()
        self.event = event


class PlanFinished(Message):
    def __init__(self, report: ExecutionReport) -> None:
        super().__init__()
        self.report = report


_MESSAGES: dict[str, type[StepStarted | StepOutput | StepFinished]] = {
    "started": StepStarted,
    "output": StepOutput,
    "finished": StepFinished,
}


class PlanPreviewScreen(Screen[ExecutionReport | None]):
    """Dismisses with the ExecutionReport after a run, or None when closed without running."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("c", "copy_script", "Copy"),
        Binding("s", "save", "Save"),
        Binding("ctrl+r", "run", "Run"),
    ]
    DEFAULT_CSS = """
    PlanPreviewScreen { layout: vertical; }
    PlanPreviewScreen #pp-title { text-style: bold; padding: 0 1; }
    PlanPreviewScreen #pp-digest { color: $text-muted; padding: 0 1; }
    PlanPreviewScreen #pp-host { color: $accent; text-style: bold; padding: 0 1; }
    PlanPreviewScreen #pp-body { height: 1fr; }
    PlanPreviewScreen #pp-consequences { color: $warning; text-style: bold; padding: 0 1; }
    PlanPreviewScreen #pp-confirm-row { height: auto; padding: 0 1; }
    PlanPreviewScreen #pp-confirm-label { padding: 1 1 0 0; }
    PlanPreviewScreen #pp-confirm { width: 1fr; }
    PlanPreviewScreen .pp-warn { color: $warning; padding: 0 1; }
    PlanPreviewScreen .pp-refused { color: $error; text-style: bold; padding: 0 1; }
    PlanPreviewScreen .pp-note { color: $text-muted; padding: 0 1; }
    PlanPreviewScreen #pp-buttons { height: auto; padding: 0 1; }
    PlanPreviewScreen #pp-buttons Button { margin-right: 1; }
    PlanPreviewScreen #pp-status { padding: 0 1; height: auto; }
    PlanPreviewScreen #pp-progress { height: auto; max-height: 10; padding: 0 1; }
    PlanPreviewScreen #pp-running { text-style: bold; }
    PlanPreviewScreen #pp-output { color: $text-muted; }
    PlanPreviewScreen ProgressBar { height: 1; }
    PlanPreviewScreen #pp-result { padding: 0 1; height: auto; }
    PlanPreviewScreen #pp-save-row { height: auto; padding: 0 1; }
    PlanPreviewScreen #pp-save-row Label { padding: 1 1 0 0; }
    PlanPreviewScreen #pp-save-path { width: 1fr; }
    """

    def __init__(
        self,
        plan: Plan,
        backend: Backend,
        *,
        preflight: Preflight | None = None,
        audit: AuditLog | None = None,
        dry_run: bool = False,
        host: str | None = None,
    ) -> None:
        """``host``: the machine ``backend`` reaches (default: the host of a ``HostAuditLog``)."""
        super().__init__()
        self.plan = plan
        self.backend = backend
        self.preflight = preflight or Preflight()
        self.audit = audit or AuditLog()
        if host is None and isinstance(self.audit, HostAuditLog):
            host = self.audit.host
        self.host = host
        self.dry_run = dry_run
        self.report: ExecutionReport | None = None
        self._lives: list[LiveSample] = []  # the session's last two samples: the syncs' rates
        self.rated_from_samples = False  # the consequences use the rate of those two samples
        self._refresh_seq = 0
        self.forecast_on: Machine | None = None
        self.saved_path: Path | None = None
        self.running = False
        self.after_lines: list[str] = []  # what a run leaves (a qualify's verdict, kept)

    def compose(self) -> ComposeResult:
        p = self.plan.escaped()  # for display only: Run executes self.plan
        yield Label(Text(p.title + ("   — DESTROYS DATA" if p.destructive else "")), id="pp-title")
        if self.host is not None:
            yield Static(Text(f"on host {escape_controls(self.host)} (over ssh)"), id="pp-host")
        yield Static(Text(f"digest {self.plan.digest}"), id="pp-digest")
        with VerticalScroll(id="pp-body"):
            yield Static("", id="pp-result")
            yield Static(self._consequences_text(), id="pp-consequences")
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
        yield RunProgress(self.plan, id="pp-progress")
        with Horizontal(id="pp-save-row"):
            yield Label("Save as (.sh or .json):")
            yield Input(id="pp-save-path")
        with Horizontal(id="pp-confirm-row"):
            yield Label(Text(f"Type {p.confirm_word} to confirm:"), id="pp-confirm-label")
            yield Input(placeholder=p.confirm_word, id="pp-confirm")
        with Horizontal(id="pp-buttons"):
            yield Button("Copy (c)", id="pp-copy")
            yield Button("Save… (s)", id="pp-save")
            yield Button("Run", id="pp-run", variant="error" if p.destructive else "primary")
            yield Button("Close", id="pp-close")
        yield Static("", id="pp-status")
        yield Footer()

    def _consequences_text(self) -> Text:
        c = self.plan.consequences
        lines = [escape_controls(line) for line in c.lines()] if c is not None else []
        if self.plan.destructive:
            lines.append(
                f"destroys data: type {escape_controls(self.plan.confirm_word)} to confirm"
            )
        elif self.plan.needs_typed:
            lines.append(
                f"leaves an array weaker: type {escape_controls(self.plan.confirm_word)} to confirm"
            )
        return Text("\n".join(lines))

    def _show_consequences(self) -> None:
        """The consequences block and the confirmation row, as ``self.plan`` says now."""
        block = self.query_one("#pp-consequences", Static)
        text = self._consequences_text()
        block.update(text)
        block.display = bool(text.plain)
        self.query_one("#pp-confirm-row").display = self.plan.needs_typed
        self._update_run_button()

    def on_mount(self) -> None:
        for wid in ("#pp-result", "#pp-progress", "#pp-save-row"):
            self.query_one(wid).display = False
        self._show_consequences()
        self._refresh_consequences()
        if hasattr(type(self.app), "view"):  # the live session's view (RaidmanApp)
            self.watch(self.app, "view", self._view_changed, init=False)

    def _refresh_consequences(self) -> None:
        """Work the consequences out again (the last request wins: an older worker's answer
        that arrives later is dropped)."""
        self._refresh_seq += 1
        view: Any = getattr(self.app, "view", None)
        lives = tuple(self._lives[-2:])
        self._consequences_worker(self._refresh_seq, getattr(view, "machine", None), lives)

    @work(thread=True, exclusive=True, group="plan-consequences", description="plan-consequences")
    def _consequences_worker(
        self, seq: int, machine: Machine | None, lives: tuple[LiveSample, ...]
    ) -> None:
        """The consequences on the live session's machine with the limits read now (a plan
        from a finding or boost comes without them)."""
        try:
            if machine is None:
                machine = self.backend.probe()
            sbs = getattr(self.app, "superblocks", None)
            # the rate of each running sync over the session's last second (as `raidman plan`
            # measures it over one it samples): one rate, one forecast (app.plans.outcome.rates)
            # (until the session has sampled twice: md's own speed, at once)
            rates = progress_rates(*lives) if len(lives) == 2 else {}
            plan = current_consequences(self.plan, machine, self.backend, sbs, rates)
        except Exception:  # a preview keeps what it has; Run recomputes on a fresh probe
            return
        self.app.call_from_thread(self._consequences_ready, seq, plan, machine, len(lives) == 2)

    def _consequences_ready(
        self, seq: int, plan: Plan, machine: Machine, from_samples: bool
    ) -> None:
        if self.running or self.report is not None or seq != self._refresh_seq:
            return
        self.plan = plan
        self.forecast_on = machine  # the machine the consequences shown were worked out on
        self.rated_from_samples = from_samples
        self._show_consequences()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # after a run there is nothing left to run: the footer stops offering it
        return not (action == "run" and self.report is not None)

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
        if self.plan.needs_typed and not self._typed_ok(self.plan):
            return f"type {self.plan.confirm_word!r} to confirm"
        return None

    def _typed_ok(self, plan: Plan) -> bool:
        return confirmation_matches(plan, self.query_one("#pp-confirm", Input).value)

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
        row = self.query_one("#pp-save-row")
        if row.display and self.query_one("#pp-save-path", Input).has_focus:
            row.display = False  # Esc in the save box: cancel the save, not the screen
            self.query_one("#pp-status", Static).update("not saved")
            return
        if not self.running:
            self.dismiss(self.report)

    @on(Button.Pressed, "#pp-copy")
    def action_copy_script(self) -> None:
        script = host_script(self.plan, self.host)
        self.app.copy_to_clipboard(script)
        n = len(self.plan.steps)
        msg = (
            f"copied the shell script ({n} step{'s' if n != 1 else ''}) to the clipboard "
            "(OSC 52: the terminal must allow it; s saves it to a file)"
        )
        self.query_one("#pp-status", Static).update(msg)
        self.notify(msg, title="Copy")

    @on(Button.Pressed, "#pp-save")
    def action_save(self) -> None:
        row = self.query_one("#pp-save-row")
        box = self.query_one("#pp-save-path", Input)
        if not box.value:
            box.value = default_save_name(self.plan)
        row.display = True
        box.focus()
        self.query_one("#pp-status", Static).update(
            f"Enter saves into {escape_controls(os.getcwd())} (or the path typed); "
            ".sh = shell script, .json = plan file for raidman apply; Esc cancels"
        )

    @on(Input.Submitted, "#pp-save-path")
    def _save_submitted(self, event: Input.Submitted) -> None:
        try:
            path = save_plan(
                self.plan, self.preflight, event.value, host=self.host, backend=self.backend.name
            )
        except (ValueError, statefiles.StateFileError) as e:
            msg = f"not saved: {e}"
            self.query_one("#pp-status", Static).update(Text(escape_controls(msg)))
            self.notify(escape_controls(msg), severity="error", markup=False)
            return
        self.saved_path = path
        self.query_one("#pp-save-row").display = False
        what = "plan file (raidman apply)" if path.suffix == ".json" else "shell script"
        msg = escape_controls(f"saved the {what}: {path}")
        self.query_one("#pp-status", Static).update(Text(msg))
        self.notify(msg, title="Save", markup=False)

    @on(Input.Submitted, "#pp-confirm")
    def _confirm_submitted(self) -> None:
        self.action_run()

    @on(Button.Pressed, "#pp-run")
    def action_run(self) -> None:
        why = self.can_run()
        if why is not None:
            if self.plan.needs_typed and not self._typed_ok(self.plan) and not self.running:
                field = self.query_one("#pp-confirm", Input)
                self.query_one("#pp-confirm-row").display = True
                field.focus()
                field.scroll_visible(animate=False)
                self.query_one("#pp-status", Static).update(
                    Text(f"type {escape_controls(self.plan.confirm_word)} in the field, then Enter")
                )
            self.notify(escape_controls(why), severity="warning", markup=False)
            return
        self.running = True
        self._update_run_button()
        self.query_one("#pp-status", Static).update("running…")
        self.query_one(RunProgress).start()
        self._execute()

    @work(thread=True, exclusive=True, group="plan-execute", description="plan-execute")
    def _execute(self) -> None:
        starts: dict[int, tuple[Any, ...]] = {}

        def on_event(ev: StepEvent) -> None:
            self._hand_over(ev, starts)
            self.post_message(_MESSAGES[ev.kind](ev))  # thread-safe; the UI never waits for us

        # pre-flight again on the machine as it is now: the preview may be minutes old; and
        # what it means there: a plan that now weakens an array needs the typed name too
        try:
            machine = self.backend.probe()
        except Exception as e:  # a backend error must stop the run, never skip the checks
            why = f"cannot read the machine's current state: {e}"
            self.app.call_from_thread(
                self._refused_at_run, Preflight((Issue("unchecked", "", why),))
            )
            return
        again = preflight_for(self.plan, machine, self.backend)
        lives = self._lives[-2:]
        rates = progress_rates(*lives) if len(lives) == 2 else None  # None: measured now
        plan = current_consequences(self.plan, machine, self.backend, rates=rates)
        if plan.needs_typed and not self.app.call_from_thread(self._typed_ok, plan):
            self.app.call_from_thread(self._needs_typed_at_run, plan)
            return
        if again.refusals or again.unforced(self.forced):
            self.app.call_from_thread(self._refused_at_run, again)
            return
        starts.update(sync_starting_steps(plan, machine))
        report = execute(
            self.plan,
            self.backend,
            dry_run=self.dry_run,
            on_event=on_event,
            audit=self.audit,
            forced=self.forced,
        )
        try:
            self.after_lines = keep_run(self.plan, report, self.backend, self.host)
        except Exception as e:  # the run is done; keeping its verdict is a bonus that says why
            self.after_lines = [f"the verdict is not kept: {e}"]
        self.post_message(PlanFinished(report))

    def _hand_over(self, ev: StepEvent, starts: dict[int, tuple[Any, ...]]) -> None:
        """(run worker) Right before a step that starts syncs, their forecasts go to the live
        session's recorder (on the UI thread, waited for: the sync cannot begin first), so their
        records keep the plan's forecast; the step failed: they are withdrawn. An app without a
        live session (a test's) has nothing to hand them to."""
        fcs = starts.get(ev.index)
        if not fcs:
            return
        if ev.kind == "started" and hasattr(self.app, "expect_forecasts"):
            self.app.call_from_thread(self.app.expect_forecasts, fcs)
        elif (
            ev.kind == "finished" and ev.status != "ok" and hasattr(self.app, "withdraw_forecasts")
        ):
            arrays = tuple(fc.array for fc in fcs)
            self.app.call_from_thread(self.app.withdraw_forecasts, arrays)

    def _needs_typed_at_run(self, plan: Plan) -> None:
        """At Run the plan turned out to weaken an array: nothing ran; the name is asked."""
        self.running = False
        self.plan = plan
        self.query_one(RunProgress).halt()
        self._show_consequences()
        self.query_one("#pp-status", Static).update(
            Text(f"nothing was run: type {escape_controls(plan.confirm_word)} to confirm")
        )
        self.query_one("#pp-confirm", Input).focus()

    def _refused_at_run(self, again: Preflight) -> None:
        self.running = False
        self.preflight = again
        self.query_one(RunProgress).halt()
        lines = [f"REFUSED {r} [{r.code}]" for r in again.refusals]
        lines += [f"warning {w} [{w.code}] (not forced)" for w in again.unforced(self.forced)]
        msg = "pre-flight at Run stopped the plan, nothing was run:\n" + "\n".join(lines)
        self.query_one("#pp-status", Static).update(Text(escape_controls(msg, keep_newlines=True)))
        self.notify(
            escape_controls(lines[0] if lines else msg),
            title="Pre-flight refused",
            severity="error",
            markup=False,
        )
        self._update_run_button()

    # ---- the running plan, as messages from the worker ---------------------------------
    def on_step_started(self, message: StepStarted) -> None:
        self.query_one("#pp-plan", PlanView).set_status(message.event.index, "running")
        self.query_one(RunProgress).step_started(message.event)

    def on_step_output(self, message: StepOutput) -> None:
        self.query_one(RunProgress).step_output(message.event)

    def on_step_finished(self, message: StepFinished) -> None:
        ev = message.event
        detail = ""
        if ev.status == "failed":
            stderr = ev.result.stderr.strip() if ev.result is not None else ""
            detail = escape_controls(
                ev.message + (f"\n{stderr}" if stderr else ""), keep_newlines=True
            )
        elif ev.result is not None:
            detail = f"exit {ev.result.returncode}, {duration(ev.result.duration_s)}"
        self.query_one("#pp-plan", PlanView).set_status(ev.index, ev.status or "ok", detail)
        self.query_one(RunProgress).step_finished(ev)

    def on_plan_finished(self, message: PlanFinished) -> None:
        self._finished(message.report)

    def _view_changed(self, view: object) -> None:
        live = getattr(view, "live", None)
        fresh = isinstance(live, LiveSample) and (
            not self._lives or live.taken_at > self._lives[-1].taken_at
        )
        if fresh and isinstance(live, LiveSample):
            self._lives = [*self._lives[-1:], live]
            if len(self._lives) == 2 and not self.rated_from_samples:
                self._refresh_consequences()  # once: the rate now from the session's samples
        panel = self.query_one(RunProgress)
        if panel.sync_paths and self.is_attached:
            panel.show_sync()

    def _finished(self, report: ExecutionReport) -> None:
        self.report = report
        self.running = False
        self.query_one(RunProgress).finished()
        view = self.query_one("#pp-plan", PlanView)
        for o in report.outcomes:
            if o.status == "not-run":
                view.set_status(o.index, "not-run")
        result = self.query_one("#pp-result", Static)
        lines = [*result_lines(report), *self.after_lines]
        result.update(Text(escape_controls("\n".join(lines), keep_newlines=True) + "\n"))
        result.display = True
        self.query_one("#pp-body", VerticalScroll).scroll_home(animate=False)
        text = report.summary()
        if report.audit_error:
            text += f"\n{report.audit_error}"
        self.query_one("#pp-status", Static).update(Text(escape_controls(text, keep_newlines=True)))
        self._update_run_button()
        self.refresh_bindings()
