"""What the wizard screens share: the screen base (form, values, Preview / Back, SMART for the
device pickers in a worker), the device picker with each candidate's reason, and the array
choices the member and sync wizards open on."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import ClassVar

from rich.segment import Segment
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.strip import Strip
from textual.widgets import Button, Checkbox, Footer, Input, Label, Select, SelectionList, Static
from textual.widgets.option_list import OptionDoesNotExist
from textual.widgets.selection_list import Selection

from app.backend import Backend
from app.escape import escape_controls
from app.format import human_bytes
from app.model import Machine
from app.model.smart import SmartReading
from app.plans.audit_log import AuditLog
from app.plans.executor import ExecutionReport
from app.plans.geometry import PlanError
from app.plans.guards.eligibility import Candidate, candidates
from app.plans.guards.identity import record_disks
from app.plans.guards.preflight import Preflight
from app.plans.plan import Plan
from app.plans.render import preflight_for
from app.ui.screens.plan_preview import PlanPreviewScreen


def media(rotational: bool | None) -> str:
    return "SSD" if rotational is False else "HDD" if rotational else "?"


def candidate_label(c: Candidate) -> Text:
    """One picker line: name, IEC size (as the tree), HDD/SSD; why not (before the model, so a
    narrow terminal cuts the model, not the reason); the model; SMART counts worth a look."""
    what = "part" if c.kind == "partition" else media(c.rotational)
    text = Text(f"{c.name:<10} {human_bytes(c.size_bytes):>10} {what:<4} ")
    if c.reason is not None:
        text.append(f"✗ {'; '.join(c.reasons) or c.reason}", style="bold")
        text.append(f"  {c.model or ''}".rstrip(), style="dim")
    else:
        text.append(c.model or "")
        if c.notes:
            text.append(f"  ⚠ {', '.join(c.notes)}", style="yellow")
    return text


class DevicePicker(SelectionList[str]):
    """Disks and partitions with size, model and HDD/SSD; those that cannot be members are
    listed too, disabled, with the reason (mounted on /, member of md127, SMART FAILED…)."""

    def __init__(self, cands: tuple[Candidate, ...], *, id: str) -> None:
        super().__init__(*self._selections(cands, ()), id=id)
        self.candidates = cands

    # a candidate's line as Textual's Content, made once: the create wizard has four pickers of
    # the same candidates, made again when the SMART readings arrive, and a Selection given a
    # Rich Text converts it each time (big's 1,000 disks: 4,000 conversions on `n`, 4,000 more
    # at the readings). Bounded: made afresh past LABELS_KEPT.
    _labels: ClassVar[dict[Candidate, Content]] = {}
    LABELS_KEPT = 20_000

    @classmethod
    def label(cls, c: Candidate) -> Content:
        got = cls._labels.get(c)
        if got is None:
            if len(cls._labels) >= cls.LABELS_KEPT:
                cls._labels.clear()
            got = cls._labels[c] = Content.from_rich_text(candidate_label(c))
        return got

    @classmethod
    def _selections(
        cls, cands: tuple[Candidate, ...], chosen: tuple[str, ...]
    ) -> list[Selection[str]]:
        return [
            Selection(cls.label(c), c.name, c.name in chosen and c.eligible,
                      disabled=not c.eligible)
            for c in cands
        ]  # fmt: skip

    def set_candidates(self, cands: tuple[Candidate, ...]) -> None:
        """New eligibility (e.g. once SMART readings arrived); keeps what is still eligible,
        and the highlighted row."""
        chosen = tuple(self.selected)
        at = self.highlighted
        self.candidates = cands
        self.clear_options()
        self.add_options(self._selections(cands, chosen))
        if at is not None and self.option_count:
            self.highlighted = min(at, self.option_count - 1)
        elif self.has_focus:
            self._highlight_first()

    def on_focus(self) -> None:
        """Focused with no row highlighted (the first Tab into the list): the first that can
        be picked is, so the first Space ticks it (it did nothing)."""
        if self.highlighted is None:
            self._highlight_first()

    def _highlight_first(self) -> None:
        first = next((i for i, c in enumerate(self.candidates) if c.eligible), None)
        if first is not None and first < self.option_count:
            self.highlighted = first

    def render_line(self, y: int) -> Strip:
        """As SelectionList's, with the box empty for a row not ticked: both showed "▐X▌",
        told apart by colour alone (a copy, a terminal without colour: no difference)."""
        strip = super().render_line(y)
        segments = list(strip)
        if len(segments) < 3 or segments[1].text != Checkbox.BUTTON_INNER:
            return strip
        try:
            option = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return strip
        if option.value in self._selected:
            return strip
        segments[1] = Segment(" ", segments[1].style, segments[1].control)
        return Strip(segments, strip.cell_length)


SHORT_BELOW = 32  # rows: below this a wizard's form is packed (``-short``)
FORM_FIELDS = (Input, Select, SelectionList, Checkbox)


class PlanReady(Message, bubble=False):
    """A wizard's plan and its pre-flight, made in its worker."""

    def __init__(self, plan: Plan, preflight: Preflight) -> None:
        super().__init__()
        self.plan = plan
        self.preflight = preflight


class PlanRefused(Message, bubble=False):
    """Why a wizard's worker made no plan (shown under the form)."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class _WizardBase(Screen[ExecutionReport | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Back"),
        Binding("ctrl+r", "preview", "Preview plan", priority=True),
    ]
    DEFAULT_CSS = """
    _WizardBase { layout: vertical; }
    _WizardBase .wz-title { text-style: bold; padding: 0 1; }
    _WizardBase #wz-form { height: 1fr; padding: 0 1; }
    _WizardBase #wz-form Label { margin-top: 1; }
    _WizardBase #wz-form Input, _WizardBase #wz-form Select { width: 100%; }
    _WizardBase #wz-form SelectionList { height: auto; min-height: 3; max-height: 10;
                                         width: 100%; }
    _WizardBase.-short #wz-form Label { margin-top: 0; }
    _WizardBase.-short #wz-form SelectionList { max-height: 6; }
    _WizardBase .wz-hint { color: $text-muted; }
    _WizardBase .wz-field { height: auto; }
    _WizardBase #wz-error { color: $error; padding: 0 1; height: auto; }
    _WizardBase #wz-buttons { height: auto; padding: 0 1; }
    _WizardBase #wz-buttons Button { margin-right: 1; }
    """
    TITLE_TEXT = ""
    FIRST_FIELD = ""  # focused on open, so the first key goes to a field
    # a short terminal (24 rows): labels without the blank row above, lists of four rows, so
    # the create wizard's Spares list shows on the first screen (it was below its edge)
    VERTICAL_BREAKPOINTS = [(0, "-short"), (SHORT_BELOW, "-tall")]  # noqa: RUF012

    def __init__(
        self, machine: Machine, backend: Backend, *, audit: AuditLog | None = None
    ) -> None:
        super().__init__()
        self.machine = machine
        self.backend = backend
        self.audit = audit
        self.last_plan: Plan | None = None
        self.smart: dict[str, SmartReading] | None = None
        self._cands: tuple[object, int | None, object, tuple[Candidate, ...]] | None = None

    def compose(self) -> ComposeResult:
        yield Label(self.TITLE_TEXT, classes="wz-title")
        with VerticalScroll(id="wz-form", can_focus=False):
            yield from self.form()
        yield Static("", id="wz-error")
        with Horizontal(id="wz-buttons"):
            yield Button("Preview plan", id="wz-preview", variant="primary")
            yield Button("Back", id="wz-cancel")
        yield Footer()

    def on_mount(self) -> None:
        if self.FIRST_FIELD:
            self.query_one(self.FIRST_FIELD).focus()
        if self.query(DevicePicker):
            self._read_smart()

    def form(self) -> ComposeResult:  # pragma: no cover - overridden
        yield from ()

    def build_plan(self) -> Plan:  # pragma: no cover - overridden
        raise NotImplementedError

    # ---- device pickers ------------------------------------------------------------
    def min_size_bytes(self) -> int | None:
        return None

    def joining(self) -> str | None:
        """The array the picked devices go into (its own former members are not "carriers")."""
        return None

    def candidates(self) -> tuple[Candidate, ...]:
        """Worked out once per SMART readings, size floor and superblocks read (1,000 disks on
        ``big``)."""
        sbs = getattr(self.app, "superblocks", None)
        joining = self.joining()
        key = (self.smart, self.min_size_bytes(), (sbs, joining))
        c = self._cands
        if c is None or c[0] is not key[0] or c[1] != key[1] or c[2] != key[2]:
            found = candidates(
                self.machine,
                smart=self.smart,
                min_size_bytes=key[1],
                superblocks=sbs,
                joining=joining,
            )
            c = self._cands = (key[0], key[1], key[2], found)
        return c[3]

    def refresh_pickers(self) -> None:
        cands = self.candidates()
        for picker in self.query(DevicePicker):
            picker.set_candidates(cands)

    @work(
        thread=True,
        exclusive=True,
        group="wizard-smart",
        exit_on_error=False,
        description="wizard-smart",
    )
    def _read_smart(self) -> None:
        """SMART health for the pickers (smartctl can take seconds per disk: not on the UI thread)."""
        readings: dict[str, SmartReading] = {}
        for d in self.machine.disks:
            if d.kind == "rom":
                continue
            try:
                readings[d.name] = self.backend.smart(d.name)
            except Exception:  # no SMART for this one: the picker just has no SMART reason
                continue
        with contextlib.suppress(RuntimeError):  # the app is shutting down
            self.app.call_from_thread(self._smart_read, readings)

    def _smart_read(self, readings: dict[str, SmartReading]) -> None:
        self.smart = readings
        if self.is_attached:
            self.refresh_pickers()

    # ---- values --------------------------------------------------------------------
    def _value(self, wid: str) -> str:
        return self.query_one(f"#{wid}", Input).value.strip()

    def _select(self, wid: str) -> str | None:
        v = self.query_one(f"#{wid}", Select).value
        return None if v is Select.NULL else str(v)

    def _check(self, wid: str) -> bool:
        return self.query_one(f"#{wid}", Checkbox).value

    def _picked(self, wid: str) -> tuple[str, ...]:
        return tuple(self.query_one(f"#{wid}", SelectionList).selected)

    def _int(self, wid: str, what: str) -> int | None:
        text = self._value(wid)
        if not text:
            return None
        try:
            return int(text)
        except ValueError:
            raise PlanError(f"{what}: {text!r} is not a whole number") from None

    # ---- actions -------------------------------------------------------------------
    @on(Button.Pressed, "#wz-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    def plan_maker(self) -> Callable[[], Plan]:
        """What Preview hands its worker, the form read now (on the UI thread): by default the
        plan built from it; a wizard whose plan reads the system too does that in the maker."""
        plan = self.build_plan()
        return lambda: plan

    @on(Input.Submitted)
    @on(Button.Pressed, "#wz-preview")
    def action_preview(self) -> None:
        err = self.query_one("#wz-error", Static)
        try:
            make = self.plan_maker()
        except PlanError as e:
            err.update(Text(str(e)))
            return
        err.update("")
        self._plan_worker(make)

    @work(
        thread=True,
        exclusive=True,
        group="wizard-plan",
        exit_on_error=False,
        description="wizard-plan",
    )
    def _plan_worker(self, make: Callable[[], Plan]) -> None:
        """The wizard's parameters become a plan with its pre-flight (wipefs, holders: read
        through the backend), here rather than on the UI thread."""
        try:
            plan = record_disks(make(), self.machine)  # serial/WWN: checked before each step
            sbs = getattr(self.app, "superblocks", None)  # the audit's; None: read here
            pf = preflight_for(plan, self.machine, self.backend, sbs)
        except PlanError as e:
            self.post_message(PlanRefused(str(e)))
        except Exception as e:
            self.post_message(PlanRefused(escape_controls(f"could not prepare the plan: {e}")))
        else:
            self.post_message(PlanReady(plan, pf))

    def on_plan_refused(self, message: PlanRefused) -> None:
        self.query_one("#wz-error", Static).update(Text(message.error))

    def on_plan_ready(self, message: PlanReady) -> None:
        self.last_plan = message.plan
        if not self.is_current:  # closed (Esc) while the plan was being made
            return
        self.app.push_screen(
            PlanPreviewScreen(
                message.plan, self.backend, preflight=message.preflight, audit=self.audit
            ),
            self._preview_closed,
        )

    def _preview_closed(self, report: ExecutionReport | None) -> None:
        if report is not None and report.ok and report.plan.kind == "create-array":
            for screen in self.app.screen_stack:  # the main screen's banner: an initial build
                note = getattr(screen, "note_initial_build", None)
                if note is not None and report.plan.target:
                    note(report.plan.target)
        if report is not None and report.executed:
            self.dismiss(report)
            return
        self.call_after_refresh(self._focus_a_field)

    def _focus_a_field(self) -> None:
        """Back from the preview (Esc): the field the admin was in, or the first one (the
        Preview button kept the focus, or nothing had it: the next key went nowhere)."""
        if self.is_current and not isinstance(self.focused, FORM_FIELDS) and self.FIRST_FIELD:
            self.query_one(self.FIRST_FIELD).focus()


def array_choices(machine: Machine) -> list[tuple[str, str]]:
    return [
        (
            f"{a.name}  {a.level}  {a.array_state or ''}"
            + (f" degraded ({a.degraded})" if a.degraded else ""),
            a.name,
        )
        for a in machine.arrays
        if not a.is_container
    ]


def default_array(machine: Machine, array: str | None) -> str | None:
    """The array a wizard opens on: the tree's, else the first one, else none. A container
    (IMSM/DDF) is no target of member or sync actions: its first volume stands for it."""
    choices = [v for _, v in array_choices(machine)]
    if array in choices:
        return array
    volumes = [v for v in container_volumes(machine, array) if v in choices]
    if volumes:
        return volumes[0]
    return choices[0] if choices else None


def container_volumes(machine: Machine, container: str | None) -> list[str]:
    """The volumes (kernel names) of the container ``container``; none for any other array."""
    if container is None:
        return []
    return [a.name for a in machine.arrays if a.container == container and not a.is_container]
