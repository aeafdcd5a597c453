"""Guest side of tests/vm/test_wizards.py: drive raidman's TUI with Textual's Pilot on the real
kernel (``LinuxBackend``), in a fork of the guest agent (``vm.call("tests.vm.guest_wizards:...")``).

Each function runs ``RaidmanApp(LinuxBackend(), probe_interval=0, sample_interval=0)`` headless,
opens a wizard with its key binding (``n`` create array, ``a`` member actions), fills the form,
presses "Preview plan", records what the preview shows (every step's argv, refusals, warnings,
notes), confirms the way a user does (types the target's name, ticks "force" only when asked to),
presses Run, waits for the executor and returns JSON: the preview, the per-step statuses and
details of the PlanView, the ExecutionReport, the status line, the audit log entries
(``$RAIDMAN_STATE_DIR/audit.log``) and the arrays raidman sees after the re-probe.

Nothing here decides whether the result is right: the host test compares it with the kernel.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from textual.widgets import Button, Checkbox, Input, OptionList, Select, SelectionList, Static

from app.plans.audit_log import AuditLog
from app.ui.app import RaidmanApp
from app.ui.screens.plan_preview import PlanPreviewScreen
from app.ui.screens.wizards import CreateArrayWizard, MemberWizard
from backends.linux import LinuxBackend
from widgets.plan_view import PlanView

# a terminal a little over 80×24 (both 80×24 and 200×60 are laid out and snapshot-tested in
# tests/ui): under TCG, Textual's frames are the bulk of a TUI drive, and 100×36 draws a third
# of 160×60's cells (the five wizard tests took 260 s instead of 303 s)
SIZE = (100, 36)


def _text(widget: Any) -> str:
    return str(widget.render())


async def _until(pilot: Any, pred: Any, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise TimeoutError(f"TUI: timed out waiting for {what}")
        await pilot.pause(0.1)


async def _probed(pilot: Any, app: RaidmanApp, after: int = 0) -> None:
    await _until(
        pilot,
        lambda: app.probe_count > after and app.machine is not None and not app.hostview.probe_busy,
        "the probe",
    )
    await pilot.pause()


async def _type(pilot: Any, selector: str, text: str) -> None:
    """Focus an Input (as Tab would; it may be scrolled out of view) and type key by key."""
    pilot.app.screen.query_one(selector).focus()
    await pilot.pause()
    await pilot.press(*text)
    await pilot.pause()


async def _tick(pilot: Any, selector: str) -> None:
    """Focus a Checkbox and press space (it may be scrolled out of view, so no click)."""
    pilot.app.screen.query_one(selector).focus()
    await pilot.pause()
    await pilot.press("space")
    await pilot.pause()


def _plain(prompt: Any) -> str:
    return str(getattr(prompt, "plain", prompt))


def _rows(picker: SelectionList[str]) -> dict[str, dict[str, Any]]:
    """Every line of a device picker as shown: name -> greyed out or not, and its text (size,
    media, the reasons it cannot be used)."""
    out = {}
    for i in range(picker.option_count):
        opt = picker.get_option_at_index(i)
        out[str(opt.value)] = {"disabled": opt.disabled, "label": _plain(opt.prompt)}
    return out


async def _smart_read(pilot: Any, wiz: Any) -> None:
    """The pickers are rebuilt once the wizard's SMART readings arrive: pick after that."""
    await _until(pilot, lambda: wiz.smart is not None, "the wizard's SMART readings")
    await pilot.pause()


async def _pick(pilot: Any, selector: str, names: list[str]) -> dict[str, Any]:
    """Tick ``names`` in a device picker as a user does: highlight the line, press space. A
    greyed-out line does not take the tick. Returns the picker's rows and what is ticked."""
    picker: SelectionList[str] = pilot.app.screen.query_one(selector, SelectionList)
    rows = _rows(picker)
    picker.focus()
    await pilot.pause()
    for name in names:
        index = list(rows).index(name)
        picker.highlighted = index
        await pilot.pause()
        await pilot.press("space")
        await pilot.pause()
    return {"rows": rows, "picked": [str(v) for v in picker.selected]}


async def _choose(pilot: Any, selector: str, name: str) -> list[str]:
    """Choose the option whose text starts with ``name`` in a Select as a user does: open it,
    highlight the line, press enter. Returns the Select's option texts (without the prompt)."""
    sel: Select[str] = pilot.app.screen.query_one(selector, Select)
    sel.focus()
    await pilot.pause()
    await pilot.press("enter")  # opens the overlay (an OptionList)
    await pilot.pause()
    overlay = sel.query_one(OptionList)
    texts = [_plain(overlay.get_option_at_index(i).prompt) for i in range(overlay.option_count)]
    hits = [i for i, t in enumerate(texts) if t.split()[:1] == [name]]
    if hits:
        overlay.highlighted = hits[0]
        await pilot.pause()
        await pilot.press("enter")
    else:
        await pilot.press("escape")
    await pilot.pause()
    return [t for t in texts if t != sel.prompt]


def _md_sysfs(array: str) -> dict[str, Any]:
    """The kernel's view of ``array`` right now (read by this guest process from sysfs)."""
    base = f"/sys/block/{array}/md"

    def rd(path: str) -> str | None:
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            return None

    members = {}
    try:
        names = sorted(os.listdir(base))
    except OSError:
        names = []
    for n in names:
        if n.startswith("dev-"):
            members[n[4:]] = rd(f"{base}/{n}/state")
    return {
        "degraded": rd(f"{base}/degraded"),
        "sync_action": rd(f"{base}/sync_action"),
        "members": members,
    }


def _preview_state(prev: PlanPreviewScreen) -> dict[str, Any]:
    plan = prev.plan
    run = prev.query_one("#pp-run", Button)
    return {
        "title": plan.title,
        "target": plan.target,
        "destructive": plan.destructive,
        "steps": [
            {
                "argv": list(s.argv),
                "stdin_from": list(s.stdin_from) if s.stdin_from is not None else None,
                "destructive": s.destructive,
                "shell": s.shell(),
            }
            for s in plan.steps
        ],
        "plan_text": prev.query_one("#pp-plan", PlanView).render_plan().plain,
        "refused": [_text(s) for s in prev.query(".pp-refused")],
        "warnings": [_text(s) for s in prev.query(".pp-warn")],
        "notes": [_text(s) for s in prev.query(".pp-note")],
        "refusal_codes": [r.code for r in prev.preflight.refusals],
        "warning_codes": list(prev.preflight.warning_codes),
        "needs_confirm": prev.plan.needs_typed,
        "consequences": None
        if prev.plan.consequences is None
        else prev.plan.consequences.to_json(),
        "run_disabled": run.disabled,
        "why_not": prev.can_run(),
    }


def _after_run(prev: PlanPreviewScreen) -> dict[str, Any]:
    view = prev.query_one("#pp-plan", PlanView)
    rep = prev.report
    return {
        "statuses": list(view.statuses),
        "details": list(view.details),
        "plan_text_after": view.render_plan().plain,
        "status_line": _text(prev.query_one("#pp-status", Static)),
        "report": None
        if rep is None
        else {
            "ok": rep.ok,
            "refused": rep.refused,
            "summary": rep.summary(),
            "outcomes": [
                {
                    "status": o.status,
                    "argv": list(o.step.argv),
                    "exit_code": o.exit_code,
                    "stderr": o.stderr,
                    "message": o.message,
                }
                for o in rep.outcomes
            ],
        },
    }


def _audit() -> list[dict[str, Any]]:
    return [e.to_json() for e in AuditLog().read_entries()]


async def _preview_and_run(
    pilot: Any, app: RaidmanApp, wizard: Any, *, confirm: str | None, force: bool, run: bool
) -> dict[str, Any]:
    """Press "Preview plan" on ``wizard``; record; confirm; Run; wait; close; re-probe."""
    out: dict[str, Any] = {}
    await pilot.click("#wz-preview")
    # the plan and its pre-flight (SMART, wipefs) are made in the wizard's worker
    await _until(
        pilot,
        lambda: app.screen is not wizard or _text(wizard.query_one("#wz-error", Static)),
        "the preview",
    )
    await pilot.pause()
    if app.screen is wizard:  # the plan builder refused: the reason is shown inline
        out["wizard_error"] = _text(wizard.query_one("#wz-error", Static))
        out["audit"] = _audit()
        return out
    prev = app.screen
    assert isinstance(prev, PlanPreviewScreen), type(prev).__name__
    out["preview"] = _preview_state(prev)
    if force and prev.query("#pp-force"):
        await _tick(pilot, "#pp-force")
        out["forced_box"] = prev.query_one("#pp-force", Checkbox).value
    if confirm is not None and prev.plan.needs_typed:
        await _type(pilot, "#pp-confirm", confirm)
    out["run_disabled_before_run"] = prev.query_one("#pp-run", Button).disabled
    out["why_not_before_run"] = prev.can_run()
    if run:
        # press Run even when it is disabled: a disabled button must not run anything
        await pilot.click("#pp-run")
        await pilot.pause()
        if prev.running or prev.report is not None:
            # a run that stops before its first step (pre-flight or the typed word asked again
            # at Run) has no report: it is over when the preview no longer runs
            await _until(
                pilot,
                lambda: prev.report is not None or not prev.running,
                "the plan run",
                timeout=540,
            )
            await pilot.pause()
        out.update(_after_run(prev))
    out["audit"] = _audit()
    before = app.probe_count
    await pilot.click("#pp-close")
    await pilot.pause()
    if out.get("report") and out["report"]["outcomes"] and not out["report"]["refused"]:
        await _probed(pilot, app, after=before)  # the app re-probes after a run
    m = app.machine
    out["arrays_after"] = (
        []
        if m is None
        else [
            {
                "name": a.name,
                "level": a.level,
                "members": sorted(x.device for x in a.members),
                "degraded": a.degraded,
            }
            for a in m.arrays
        ]
    )
    out["screen_after"] = type(app.screen).__name__
    return out


def _state_dir(state_dir: str) -> None:
    os.makedirs(state_dir, exist_ok=True)
    os.environ["RAIDMAN_STATE_DIR"] = state_dir


def create_array(
    state_dir: str,
    devices: list[str],
    *,
    spares: list[str] | None = None,
    level: str = "10",
    chunk: str = "32K",
    layout: str = "n2",
    bitmap: str = "none",
    name: str = "127",
    fs: str = "ext4",
    lvm: bool = True,
    vg: str = "vg127",
    conf: bool = False,
    confirm: str | None = None,
    force: bool = False,
    run: bool = True,
    bypass_picker: bool = False,
) -> dict[str, Any]:
    """Key ``n`` → CreateArrayWizard → tick ``devices`` in the picker (space on each line) →
    preview → (type ``confirm``) → Run.

    Greyed-out devices do not take the tick; with ``bypass_picker`` the wizard is first asked
    for a preview with what the keys ticked (``keys_wizard_error``: the inline refusal), then the
    greyed-out ones are ticked through the widget's API behind the user's back, so that
    pre-flight (the second line of defence) is what refuses them."""
    _state_dir(state_dir)

    async def main() -> dict[str, Any]:
        app = RaidmanApp(LinuxBackend(), probe_interval=0, sample_interval=0)
        async with app.run_test(size=SIZE) as pilot:
            await _probed(pilot, app)
            await pilot.press("n")
            await pilot.pause()
            wiz = app.screen
            assert isinstance(wiz, CreateArrayWizard), type(wiz).__name__
            await _smart_read(pilot, wiz)
            picked = await _pick(pilot, "#ca-devices", devices)
            offered = list(picked["rows"])
            spared = await _pick(pilot, "#ca-spares", spares or [])
            wiz.query_one("#ca-level", Select).value = level
            wiz.query_one("#ca-chunk", Input).value = ""
            wiz.query_one("#ca-layout", Select).value = layout
            wiz.query_one("#ca-bitmap", Select).value = bitmap
            wiz.query_one("#ca-fs", Select).value = fs
            await pilot.pause()
            await _type(pilot, "#ca-chunk", chunk)
            await _type(pilot, "#ca-name", name)
            # the wizard's defaults changed (mdadm.conf and initramfs on, so a new array survives
            # a reboot): set every checkbox to what this call asks, never toggle blindly
            wiz.query_one("#ca-lvm", Checkbox).value = lvm
            wiz.query_one("#ca-conf", Checkbox).value = conf
            wiz.query_one("#ca-initramfs", Checkbox).value = False  # minutes under TCG
            await pilot.pause()
            if lvm:
                await _type(pilot, "#ca-vg", vg)
            await pilot.pause()
            keys_error = None
            if bypass_picker:
                await pilot.click("#wz-preview")
                await pilot.pause()
                assert app.screen is wiz, "the wizard made a plan with the keys' picks"
                keys_error = _text(wiz.query_one("#wz-error", Static))
                devs = wiz.query_one("#ca-devices", SelectionList)
                for d in devices:
                    devs.select(d)
                await pilot.pause()
            out = await _preview_and_run(pilot, app, wiz, confirm=confirm, force=force, run=run)
            out["offered_devices"] = offered
            out["picker"] = picked["rows"]
            out["picked"] = picked["picked"]
            out["spares_picked"] = spared["picked"]
            out["keys_wizard_error"] = keys_error
            return out

    return asyncio.run(main())


def member_actions(state_dir: str, array: str, actions: list[dict[str, Any]]) -> list[Any]:
    """In ONE app session, for each ``{"action", "device", "field"?, "confirm"?, "force"?}``: cursor on
    ``array`` in the tree, key ``a`` → MemberWizard → action → preview → Run → close (the app
    re-probes). Each result also carries ``kernel``: the array's sysfs right after that step."""
    _state_dir(state_dir)

    async def main() -> list[Any]:
        app = RaidmanApp(LinuxBackend(), probe_interval=0, sample_interval=0)
        results: list[Any] = []
        async with app.run_test(size=SIZE) as pilot:
            await _probed(pilot, app)
            for act in actions:
                t0 = time.monotonic()
                went = app.go_to(array)
                await pilot.pause()
                await pilot.press("a")
                await pilot.pause()
                wiz = app.screen
                assert isinstance(wiz, MemberWizard), type(wiz).__name__
                await _smart_read(pilot, wiz)
                preselected = wiz.query_one("#mb-array", Select).value
                wiz.query_one("#mb-array", Select).value = array
                wiz.query_one("#mb-action", Select).value = act["action"]
                await pilot.pause()
                # the fields the action shows: the array's member (a Select) and/or a device
                # outside the array (the picker); drive the one(s) on screen
                # (``"field": "member"`` or ``"new"`` drives only that one where both show)
                member_choices = picker = None
                field = act.get("field")
                if wiz.query_one("#mb-f-member").display and field != "new":
                    member_choices = await _choose(pilot, "#mb-device", act["device"])
                if wiz.query_one("#mb-f-new").display and field != "member":
                    picker = await _pick(pilot, "#mb-new", [act["device"]])
                await pilot.pause()
                out = await _preview_and_run(
                    pilot,
                    app,
                    wiz,
                    confirm=act.get("confirm"),
                    force=bool(act.get("force")),
                    run=True,
                )
                if app.screen is wiz:  # refused inline: leave the wizard
                    await pilot.press("escape")
                    await pilot.pause()
                out["kernel"] = _md_sysfs(array)
                out["cursor_on_array"] = went
                out["preselected_array"] = None if preselected is Select.NULL else preselected
                out["member_choices"] = member_choices
                out["picker"] = picker
                out["seconds"] = round(time.monotonic() - t0, 1)
                results.append(out)
        return results

    return asyncio.run(main())


def cli_as_nobody(state_dir: str, args: list[str]) -> dict[str, Any]:
    """``raidman ARGS`` after dropping root for good (uid/gid 65534, no supplementary groups), in
    this forked process: what a non-root user running the CLI gets from the real kernel."""
    import contextlib
    import io

    from app.cli import main as cli_main

    _state_dir(state_dir)
    os.environ["HOME"] = "/tmp"
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli_main(args)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
    return {"euid": os.geteuid(), "rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()}
