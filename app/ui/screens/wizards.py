"""Wizard screens: forms over the current Machine → a Plan (pure builders in app.plans.wizards) →
pre-flight → PlanPreviewScreen (confirm, run with live status).

* ``CreateArrayWizard(machine, backend)``: level, devices (+ spares), chunk, RAID-10 layout,
  bitmap, metadata, name, mdadm.conf / initramfs, filesystem (ext4/XFS) with optional LVM.
* ``MemberWizard(machine, backend, array=None)``: add, spare, fail, remove, re-add, replace, grow.
* ``SyncWizard(machine, backend, array=None)``: check/repair/idle/frozen, speed limits, stripe cache.
* ``FilesystemWizard(machine, backend, array=None)``: optional LVM (PV, VG, LV) and ext4/XFS on an
  existing array, aligned to its geometry; arrays already carrying something are shown with why.

Each dismisses with the ExecutionReport of the preview (None when cancelled) so the App can
re-probe after a run.
"""

from __future__ import annotations

import contextlib
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Button, Checkbox, Footer, Input, Label, Select, SelectionList, Static
from textual.widgets.selection_list import Selection

from app.format import human_bytes
from app.model import Machine, MdArray, levels, md_names
from app.model.smart import SmartReading
from app.plans.audit_log import AuditLog
from app.plans.eligibility import Candidate, candidates
from app.plans.executor import ExecutionReport
from app.plans.geometry import PlanError, parse_size
from app.plans.identity import record_disks
from app.plans.plan import Plan
from app.plans.render import preflight_for
from app.plans.wizards.create_array import CHUNK_GUIDANCE, CreateArrayParams, build_create_array
from app.plans.wizards.filesystem import (
    FilesystemParams,
    array_refusals,
    build_filesystem,
    default_vg,
    geometry_of,
)
from app.plans.wizards.members import (
    build_add,
    build_fail,
    build_grow,
    build_re_add,
    build_remove,
    build_replace,
)
from app.plans.wizards.sync_actions import (
    build_speed_limits,
    build_stripe_cache,
    build_sync_action,
)
from app.ui.screens.plan_preview import PlanPreviewScreen
from backends.base import Backend

LEVELS = levels.CREATE_CHOICES


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

    @staticmethod
    def _selections(cands: tuple[Candidate, ...], chosen: tuple[str, ...]) -> list[Selection[str]]:
        return [
            Selection(candidate_label(c), c.name, c.name in chosen and c.eligible,
                      disabled=not c.eligible)
            for c in cands
        ]  # fmt: skip

    def set_candidates(self, cands: tuple[Candidate, ...]) -> None:
        """New eligibility (e.g. once SMART readings arrived); keeps what is still eligible."""
        chosen = tuple(self.selected)
        self.candidates = cands
        self.clear_options()
        self.add_options(self._selections(cands, chosen))


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
    _WizardBase #wz-form SelectionList { height: auto; max-height: 10; width: 100%; }
    _WizardBase .wz-hint { color: $text-muted; }
    _WizardBase .wz-field { height: auto; }
    _WizardBase #wz-error { color: $error; padding: 0 1; height: auto; }
    _WizardBase #wz-buttons { height: auto; padding: 0 1; }
    _WizardBase #wz-buttons Button { margin-right: 1; }
    """
    TITLE_TEXT = ""
    FIRST_FIELD = ""  # focused on open, so the first key goes to a field

    def __init__(
        self, machine: Machine, backend: Backend, *, audit: AuditLog | None = None
    ) -> None:
        super().__init__()
        self.machine = machine
        self.backend = backend
        self.audit = audit
        self.last_plan: Plan | None = None
        self.smart: dict[str, SmartReading] | None = None
        self._cands: tuple[object, int | None, tuple[Candidate, ...]] | None = None

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

    def candidates(self) -> tuple[Candidate, ...]:
        """Worked out once per SMART readings and size floor (1,000 disks on ``big``)."""
        key = (self.smart, self.min_size_bytes())
        if self._cands is None or self._cands[0] is not key[0] or self._cands[1] != key[1]:
            found = candidates(self.machine, smart=self.smart, min_size_bytes=key[1])
            self._cands = (key[0], key[1], found)
        return self._cands[2]

    def refresh_pickers(self) -> None:
        cands = self.candidates()
        for picker in self.query(DevicePicker):
            picker.set_candidates(cands)

    @work(thread=True, exclusive=True, group="wizard-smart", exit_on_error=False)
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

    @on(Input.Submitted)
    @on(Button.Pressed, "#wz-preview")
    def action_preview(self) -> None:
        err = self.query_one("#wz-error", Static)
        try:
            plan = self.build_plan()
        except PlanError as e:
            err.update(Text(str(e)))
            return
        err.update("")
        plan = record_disks(plan, self.machine)  # serial/WWN: checked again before each step
        self.last_plan = plan
        pf = preflight_for(plan, self.machine, self.backend)
        self.app.push_screen(
            PlanPreviewScreen(plan, self.backend, preflight=pf, audit=self.audit),
            self._preview_closed,
        )

    def _preview_closed(self, report: ExecutionReport | None) -> None:
        if report is not None and report.executed:
            self.dismiss(report)


class CreateArrayWizard(_WizardBase):
    TITLE_TEXT = "Create an md array"
    FIRST_FIELD = "#ca-level"

    def form(self) -> ComposeResult:
        cands = self.candidates()
        yield Label("Level")
        yield Select(LEVELS, value="10", allow_blank=False, id="ca-level")
        yield Label("Devices (space to pick; greyed out: cannot be used, with the reason)")
        yield DevicePicker(cands, id="ca-devices")
        yield Label("Spares")
        yield DevicePicker(cands, id="ca-spares")
        yield Label("Chunk (e.g. 32K, 512K)")
        yield Input(value="512K", id="ca-chunk")
        yield Static(CHUNK_GUIDANCE, classes="wz-hint")
        yield Label("RAID-10 layout")
        yield Select([("n2 near", "n2"), ("f2 far", "f2"), ("o2 offset", "o2")], value="n2",
                     allow_blank=False, id="ca-layout")  # fmt: skip
        yield Label("Bitmap")
        yield Select([("default for the level and media (see the preview)", "default"),
                      ("internal", "internal"), ("none", "none")], value="default",
                     allow_blank=False, id="ca-bitmap")  # fmt: skip
        yield Label("Metadata")
        yield Input(value="1.2", id="ca-metadata")
        yield Label("Name (a 3-digit number keeps /dev/mdNNN stable; empty = first free from 127)")
        yield Input(placeholder="127", id="ca-name")
        yield Label("So that the array comes back after a reboot (the preview shows the diff)")
        yield Checkbox("append the ARRAY line to /etc/mdadm/mdadm.conf", True, id="ca-conf")
        yield Checkbox("update-initramfs -u", True, id="ca-initramfs")
        yield Label("Filesystem")
        yield Select([("none", "none"), ("ext4", "ext4"), ("XFS", "xfs")], value="none",
                     allow_blank=False, id="ca-fs")  # fmt: skip
        yield Checkbox("LVM in between (pvcreate / vgcreate / lvcreate)", id="ca-lvm")
        yield Label("LVM: volume group name (empty = vg + the array's number)")
        yield Input(placeholder="vgNNN", id="ca-vg")
        yield Label("LVM: logical volume name")
        yield Input(value="data", id="ca-lv")

    def build_plan(self) -> Plan:
        level = self._select("ca-level") or "10"
        devices = self._picked("ca-devices")
        spares = self._picked("ca-spares")
        both = sorted(set(devices) & set(spares))
        if both:
            raise PlanError(f"{', '.join(both)}: picked both as a device and as a spare")
        striped = md_names.level_name(level) in levels.STRIPED
        chunk_text = self._value("ca-chunk")
        fstype = self._select("ca-fs") or "none"
        lvm = self._check("ca-lvm")
        fs = None
        if fstype != "none" or lvm:
            fs = FilesystemParams(
                fstype=fstype,
                lvm=lvm,
                vg=self._value("ca-vg") or None,
                lv=self._value("ca-lv") or "data",
            )
        conf = scan = None
        if self._check("ca-conf"):
            conf, scan = self._conf_and_scan()
        return build_create_array(
            self.machine,
            CreateArrayParams(
                level=level,
                devices=devices,
                spares=spares,
                chunk_bytes=parse_size(chunk_text) if striped and chunk_text else None,
                layout=(self._select("ca-layout") if level == "10" else None),
                bitmap=None
                if self._select("ca-bitmap") in (None, "default")
                else self._select("ca-bitmap"),
                metadata=self._value("ca-metadata") or "1.2",
                name=self._value("ca-name") or None,
                update_conf=self._check("ca-conf"),
                update_initramfs=self._check("ca-initramfs"),
                filesystem=fs,
            ),
            current_conf=conf,
            current_scan=scan,
        )

    def _conf_and_scan(self) -> tuple[str | None, str | None]:
        """mdadm.conf and ``mdadm --detail --scan`` for the diff; None where unreadable."""
        try:
            conf = self.backend.read_text("/etc/mdadm/mdadm.conf")
        except Exception:
            conf = None
        try:
            res = self.backend.run(["mdadm", "--detail", "--scan"])
            scan = res.stdout if res.ok else None
        except Exception:
            scan = None
        return conf, scan


MEMBER_ACTIONS = [
    ("replace this member (--replace, or fail/remove/add)", "replace"),
    ("re-add (this member: fail, remove, re-add; or a device that dropped out)", "re-add"),
    ("add (becomes a spare on a complete array)", "add"),
    ("add as hot spare", "spare"),
    ("grow raid-devices", "grow"),
    ("fail (loses redundancy)", "fail"),
    ("remove (faulty or spare)", "remove"),
]
# which fields each action uses: the member of the array, a device outside it, the new count.
# re-add: a member of the array (the plan fails and removes it first: mdadm --re-add refuses a
# device still in it), or a device that already dropped out, picked from the device picker
_USES = {
    "add": {"new"}, "spare": {"new"}, "re-add": {"member", "new"}, "replace": {"member", "new"},
    "grow": {"new", "count"}, "fail": {"member"}, "remove": {"member"},
}  # fmt: skip


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


class MemberWizard(_WizardBase):
    """Member actions on one array; opened on the tree's selection (``member``), and with no
    action chosen: nothing destructive is one Enter away."""

    TITLE_TEXT = "Member actions"
    FIRST_FIELD = "#mb-action"

    def __init__(
        self,
        machine: Machine,
        backend: Backend,
        array: str | None = None,
        *,
        member: str | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        super().__init__(machine, backend, audit=audit)
        self.array = default_array(machine, array)
        self.member = member

    def _array_obj(self) -> MdArray | None:
        try:
            name = self._select("mb-array")
        except NoMatches:
            name = self.array
        return self.machine.array(name) if name else None

    def _member_choices(self, a: MdArray | None) -> list[tuple[str, str]]:
        if a is None:
            return []
        return [
            (f"{m.device}  {m.role}" + (f" slot {m.slot}" if m.slot is not None else ""), m.device)
            for m in a.members
        ]

    def _member_of(self, a: MdArray | None, name: str | None) -> str | None:
        """The member the tree's selection stands for: itself, or its partition in the array
        when a whole disk is selected."""
        if a is None or name is None:
            return None
        for m in a.members:
            p = self.machine.partition(m.device)
            if name in (m.device, p.parent if p is not None else None):
                return m.device
        return None

    def min_size_bytes(self) -> int | None:
        a = self._array_obj()
        sizes = [m.size_kib * 1024 for m in a.members if m.size_kib] if a is not None else []
        return max(sizes) if sizes else None

    def form(self) -> ComposeResult:
        arrays = array_choices(self.machine)
        a = self.machine.array(self.array) if self.array else None
        members = self._member_choices(a)
        member = self._member_of(a, self.member)
        yield Label("Array")
        yield Select(arrays, value=self.array or Select.NULL, allow_blank=not arrays,
                     prompt="no md arrays on this machine", id="mb-array")  # fmt: skip
        yield Label("Action")
        yield Select(MEMBER_ACTIONS, prompt="choose an action", id="mb-action")
        with Vertical(classes="wz-field", id="mb-f-member"):
            yield Label("Member of the array")
            yield Select(members, value=member or Select.NULL, prompt="choose a member",
                         id="mb-device")  # fmt: skip
        with Vertical(classes="wz-field", id="mb-f-new"):
            yield Label("Device not in the array (add, spare, re-add, replace --with, grow)")
            yield DevicePicker(self.candidates(), id="mb-new")
        with Vertical(classes="wz-field", id="mb-f-count"):
            yield Label("grow: new number of raid devices")
            n = len([m for m in a.members if m.slot is not None]) if a is not None else 0
            yield Input(placeholder=f"e.g. {n + 1 if n else 5}", id="mb-count", type="integer")

    def on_mount(self) -> None:
        super().on_mount()
        self._show_fields()

    @on(Select.Changed, "#mb-action")
    def _show_fields(self) -> None:
        act = self._select("mb-action")
        uses = _USES.get(act or "", {"member", "new", "count"})
        for field in ("member", "new", "count"):
            self.query_one(f"#mb-f-{field}").display = field in uses

    @on(Select.Changed, "#mb-array")
    def _array_changed(self) -> None:
        sel = self.query_one("#mb-device", Select)
        keep = sel.value
        choices = self._member_choices(self._array_obj())
        sel.set_options(choices)
        if keep in {v for _, v in choices}:
            sel.value = keep
        self.refresh_pickers()

    def _one_new(self, what: str) -> str:
        picked = self._picked("mb-new")
        if len(picked) != 1:
            raise PlanError(f"{what}: pick one new device (picked {len(picked)})")
        return picked[0]

    def build_plan(self) -> Plan:
        array = self._select("mb-array")
        if not array:
            raise PlanError("choose an array")
        act = self._select("mb-action")
        if act is None:
            raise PlanError("choose an action")
        m = self.machine
        if act == "grow":
            count = self._int("mb-count", "grow")
            if count is None:
                raise PlanError("grow: give the new number of raid devices")
            return build_grow(m, array, count, add=self._picked("mb-new"))
        if act in ("add", "spare"):
            return build_add(m, array, self._one_new(act), spare=act == "spare")
        dev = self._select("mb-device")
        if act == "re-add":  # a device that dropped out (picked) first, else the member chosen
            if self._picked("mb-new"):
                return build_re_add(m, array, self._one_new(act))
            if not dev:
                raise PlanError("re-add: choose the member, or pick the device that dropped out")
            return build_re_add(m, array, dev)
        if not dev:
            raise PlanError(f"{act}: choose the member")
        if act == "fail":
            return build_fail(m, array, dev)
        if act == "remove":
            return build_remove(m, array, dev)
        return build_replace(m, array, dev, self._one_new("replace"))


SYNC_ACTIONS = [
    ("check (count mismatches)", "check"),
    ("repair", "repair"),
    ("idle (stop)", "idle"),
    ("frozen", "frozen"),
    ("speed limits", "limits"),
    ("stripe cache size", "stripe-cache"),
]


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
        yield Select(SYNC_ACTIONS, value="check" if arrays else "limits", allow_blank=False,
                     id="sy-action")  # fmt: skip
        lo, hi = self._now("min"), self._now("max")
        with Vertical(classes="wz-field", id="sy-f-limits"):
            yield Label(f"limits: min KiB/s (global now: {lo})")
            yield Input(placeholder="empty: unchanged", id="sy-min", type="integer")
            yield Label(f"limits: max KiB/s (global now: {hi})")
            yield Input(placeholder="empty: unchanged", id="sy-max", type="integer")
        with Vertical(classes="wz-field", id="sy-f-stripe-cache"):
            yield Label("stripe cache entries (17..32768; memory = entries × 4 KiB × members)")
            yield Input(placeholder="e.g. 8192", id="sy-entries", type="integer")

    def on_mount(self) -> None:
        super().on_mount()
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


def filesystem_array_choices(machine: Machine) -> list[tuple[str | Text, str]]:
    """Every array, those that cannot take a filesystem marked with the reason."""
    out: list[tuple[str | Text, str]] = []
    for a in machine.arrays:
        if a.is_container:
            continue
        text = Text(f"{a.name}  {a.level}  {human_bytes(a.size_bytes)}  ")
        why = array_refusals(machine, a.name)
        if why:
            text.append(f"✗ {'; '.join(dict.fromkeys(i.brief for i in why))}", style="bold")
        out.append((text, a.name))
    return out


def geometry_line(a: MdArray) -> str:
    """What the filesystem will be aligned to (app.plans.geometry: not recomputed here)."""
    geo = geometry_of(a)
    if geo is None or not geo.striped:
        return f"{a.name}: {a.level}, no striping: no stride/su needed"
    try:
        stride, width = geo.ext4()
    except PlanError as e:
        return f"{a.name}: {e}"
    su, sw = geo.xfs()
    return (
        f"{a.name}: {a.level} {a.layout or ''} chunk {human_bytes(geo.chunk_bytes, trim=True)} × "
        f"{geo.data_disks} data disks = stripe {human_bytes(geo.stripe_bytes, trim=True)}; "
        f"ext4 stride={stride},stripe_width={width}; XFS su={su},sw={sw}"
    )


class FilesystemWizard(_WizardBase):
    """LVM and/or a filesystem on an existing array, aligned to the array's geometry; opened on
    the tree's array, arrays that already carry a filesystem, PV or holder shown with the reason
    and refused."""

    TITLE_TEXT = "Filesystem / LVM on an array"
    FIRST_FIELD = "#fs-array"

    def __init__(
        self,
        machine: Machine,
        backend: Backend,
        array: str | None = None,
        *,
        audit: AuditLog | None = None,
    ) -> None:
        super().__init__(machine, backend, audit=audit)
        choices = [v for _, v in filesystem_array_choices(machine)]
        free = [v for v in choices if not array_refusals(machine, v)]
        pick = [array] if array in choices else free or choices
        self.array: str | None = pick[0] if pick else None

    def form(self) -> ComposeResult:
        arrays = filesystem_array_choices(self.machine)
        yield Label("Array (✗: already carries a filesystem, PV or holder: refused)")
        yield Select(arrays, value=self.array or Select.NULL, allow_blank=not arrays,
                     prompt="no md arrays on this machine", id="fs-array")  # fmt: skip
        yield Static("", id="fs-array-info", classes="wz-hint")
        yield Checkbox("LVM: physical volume on the array, a volume group, a logical volume",
                       id="fs-lvm")  # fmt: skip
        with Vertical(classes="wz-field", id="fs-f-lvm"):
            yield Label("LVM: volume group name (empty = vg + the array's number)")
            yield Input(placeholder="vgNNN", id="fs-vg")
            yield Label("LVM: logical volume name")
            yield Input(value="data", id="fs-lv")
            yield Label("LVM: size (e.g. 200G) or extents (100%FREE)")
            yield Input(value="100%FREE", id="fs-size")
        yield Label("Filesystem")
        yield Select([("ext4", "ext4"), ("XFS", "xfs"), ("none (LVM only)", "none")],
                     value="ext4", allow_blank=False, id="fs-type")  # fmt: skip
        yield Label("Label (optional)")
        yield Input(placeholder="ext4: up to 16 characters, XFS: 12", id="fs-label")
        yield Static(
            "Mounting and /etc/fstab are not planned: mount it and add its fstab line "
            "(by UUID) after the run.",
            classes="wz-hint",
        )

    def on_mount(self) -> None:
        super().on_mount()
        self._array_changed()
        self._show_fields()

    @on(Checkbox.Changed, "#fs-lvm")
    def _show_fields(self) -> None:
        self.query_one("#fs-f-lvm").display = self._check("fs-lvm")

    @on(Select.Changed, "#fs-array")
    def _array_changed(self) -> None:
        name = self._select("fs-array")
        a = self.machine.array(name) if name else None
        info = self.query_one("#fs-array-info", Static)
        if a is None:
            info.update("")
            return
        why = array_refusals(self.machine, a.name)
        if why:
            info.update(Text("refused: " + "; ".join(str(i) for i in why)))
        else:
            info.update(Text(geometry_line(a)))
        self.query_one("#fs-vg", Input).placeholder = default_vg(a.path)

    def build_plan(self) -> Plan:
        name = self._select("fs-array")
        if not name:
            raise PlanError("choose an array")
        why = array_refusals(self.machine, name)
        if why:
            raise PlanError("refused: " + "; ".join(str(i) for i in why))
        lvm = self._check("fs-lvm")
        return build_filesystem(
            self.machine,
            name,
            FilesystemParams(
                fstype=self._select("fs-type") or "ext4",
                lvm=lvm,
                vg=(self._value("fs-vg") or None) if lvm else None,
                lv=(self._value("fs-lv") or "data") if lvm else "data",
                lv_size=(self._value("fs-size") or "100%FREE") if lvm else "100%FREE",
                label=self._value("fs-label") or None,
            ),
        )
