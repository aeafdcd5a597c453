"""Sync actions and tuning: check/repair/idle/frozen, speed limits, stripe cache
(app.plans.builders.sync_actions)."""

from __future__ import annotations

import contextlib

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Label, Select, Static

from app.backend import Backend
from app.model import Machine, levels
from app.plans.audit_log import AuditLog
from app.plans.builders.sync_actions import (
    build_speed_limits,
    build_stripe_cache,
    build_sync_action,
    busy_with,
    offered_actions,
)
from app.plans.geometry import PlanError
from app.plans.plan import Plan
from app.ui.screens.wizards.base import _WizardBase, array_choices, default_array

SYNC_ACTIONS = [
    ("check (count mismatches)", "check"),
    ("repair", "repair"),
    ("speed limits", "limits"),
    ("stripe cache size", "stripe-cache"),
    ("idle (ends a check; a resync or rebuild restarts)", "idle"),
    ("frozen (stops every sync until idle)", "frozen"),
]
STOPPING = ("idle", "frozen")


def default_action(choices: list[tuple[str, str]]) -> str:
    """The action the form opens on: never one that stops a sync."""
    return next((v for _, v in choices if v not in STOPPING), choices[0][1])


def action_choices(machine: Machine, array: str | None) -> list[tuple[str, str]]:
    """The actions offered for ``array`` (``offered_actions``), in SYNC_ACTIONS' order."""
    offered = offered_actions(machine.array(array) if array else None)
    return [(label, v) for label, v in SYNC_ACTIONS if v in offered]


def actions_note(machine: Machine, array: str | None) -> str:
    """Why check/repair or the stripe cache are not offered for ``array``."""
    a = machine.array(array) if array else None
    if a is None:
        return ""
    why = []
    busy = busy_with(a)
    if busy and a.has_redundancy:
        why.append(f"no check or repair while {a.name} runs a {busy} (md answers EBUSY)")
    if a.level not in levels.PARITY:
        why.append(f"no stripe cache: only RAID-4/5/6 have one, {a.name} is {a.level}")
    return "; ".join(why)


def limit_label(which: str, now: str) -> str:
    return f"limits: {which} KiB/s (global now: {now})"


class SyncWizard(_WizardBase):
    TITLE_TEXT = "Sync actions and tuning"
    FIRST_FIELD = "#sy-action"

    def __init__(
        self,
        machine: Machine,
        backend: Backend,
        array: str | None = None,
        *,
        audit: AuditLog | None = None,
    ) -> None:
        super().__init__(machine, backend, audit=audit)
        self.array = default_array(machine, array)

    def form(self) -> ComposeResult:
        arrays = array_choices(self.machine)
        yield Label("Array (none: the global dev.raid.speed_limit_* sysctls)")
        yield Select(arrays, value=self.array or Select.NULL, prompt="none (global limits)",
                     id="sy-array")  # fmt: skip
        yield Label("Action")
        choices = action_choices(self.machine, self.array)
        yield Select(choices, value=default_action(choices), allow_blank=False, id="sy-action")
        yield Static(actions_note(self.machine, self.array), id="sy-note", classes="wz-hint")
        with Vertical(classes="wz-field", id="sy-f-limits"):
            yield Label(limit_label("min", "reading…"), id="sy-min-now")
            yield Input(placeholder="empty: unchanged", id="sy-min", type="integer")
            yield Label(limit_label("max", "reading…"), id="sy-max-now")
            yield Input(placeholder="empty: unchanged", id="sy-max", type="integer")
        with Vertical(classes="wz-field", id="sy-f-stripe-cache"):
            yield Label("stripe cache entries (17..32768; memory = entries × 4 KiB × members)")
            yield Input(placeholder="e.g. 8192", id="sy-entries", type="integer")

    def on_mount(self) -> None:
        super().on_mount()
        self._show_fields()
        self._read_limits()

    @work(
        thread=True,
        exclusive=True,
        group="wizard-limits",
        exit_on_error=False,
        description="wizard-limits",
    )
    def _read_limits(self) -> None:
        """The global limits in force, read through the backend (not on the UI thread)."""
        now = {which: self._now(which) for which in ("min", "max")}
        with contextlib.suppress(RuntimeError):  # the app is shutting down
            self.app.call_from_thread(self._limits_read, now)

    def _limits_read(self, now: dict[str, str]) -> None:
        for which, value in now.items():
            self.query_one(f"#sy-{which}-now", Label).update(limit_label(which, value))

    @on(Select.Changed, "#sy-array")
    def _array_changed(self) -> None:
        """The actions follow the array: a busy array offers no check, a mirror no stripe cache."""
        array = self._select("sy-array")
        act = self.query_one("#sy-action", Select)
        keep = act.value
        choices = action_choices(self.machine, array)
        act.set_options(choices)
        act.value = keep if keep in [v for _, v in choices] else default_action(choices)
        self.query_one("#sy-note", Static).update(actions_note(self.machine, array))
        self._show_fields()

    @on(Select.Changed, "#sy-action")
    def _show_fields(self) -> None:
        act = self._select("sy-action")
        for field in ("limits", "stripe-cache"):
            self.query_one(f"#sy-f-{field}").display = act == field

    def _now(self, which: str) -> str:
        """The current global dev.raid.speed_limit_* (KiB/s), so the form starts from the truth."""
        try:
            text = self.backend.read_text(f"/proc/sys/dev/raid/speed_limit_{which}")
        except Exception:
            text = None
        if text is None:
            return "unknown: no /proc/sys/dev/raid, md driver not loaded?"
        value = text.strip()
        return value if value.isdigit() else f"unreadable: {value[:20]!r}"

    def build_plan(self) -> Plan:
        array = self._select("sy-array")
        act = self._select("sy-action") or "check"
        m = self.machine
        if act == "limits":
            return build_speed_limits(
                m,
                min_kib_s=self._value("sy-min") or None,
                max_kib_s=self._value("sy-max") or None,
                array=array,
            )
        if not array:
            raise PlanError(f"{act}: choose an array")
        if act == "stripe-cache":
            n = self._int("sy-entries", "stripe cache")
            if n is None:
                raise PlanError("give the number of entries")
            return build_stripe_cache(m, array, n)
        return build_sync_action(m, array, act)
