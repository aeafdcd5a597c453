"""Wizard screens: forms over the current Machine → a Plan (pure builders in app.plans.wizards) →
pre-flight → PlanPreviewScreen (confirm, run with live status).

* ``CreateArrayWizard(machine, backend)``: level, devices (+ spares), chunk, RAID-10 layout,
  bitmap, metadata, name, mdadm.conf / initramfs, filesystem (ext4/XFS) with optional LVM.
* ``MemberWizard(machine, backend, array=None)``: add, spare, fail, remove, re-add, replace, grow.
* ``SyncWizard(machine, backend, array=None)``: check/repair/idle/frozen, speed limits, stripe cache.

Each dismisses with the ExecutionReport of the preview (None when cancelled) so the App can
re-probe after a run.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Checkbox, Footer, Input, Label, Select, SelectionList, Static

from app.model import Disk, Machine
from app.plans.audit_log import AuditLog
from app.plans.executor import ExecutionReport
from app.plans.geometry import PlanError, parse_size
from app.plans.plan import Plan
from app.plans.render import preflight_for
from app.plans.wizards.create_array import CHUNK_GUIDANCE, CreateArrayParams, build_create_array
from app.plans.wizards.filesystem import FilesystemParams
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

LEVELS = [("RAID-10", "10"), ("RAID-1", "1"), ("RAID-5", "5"), ("RAID-6", "6"),
          ("RAID-0", "0"), ("RAID-4", "4"), ("linear", "linear")]  # fmt: skip


def candidate_devices(machine: Machine) -> list[tuple[str, str]]:
    """(label, kernel name) of whole disks and partitions one could build an array from.
    Nothing is hidden: pre-flight says why a device is refused."""
    out: list[tuple[str, str]] = []
    for d in machine.disks:
        if d.kind != "disk":
            continue
        kind = "SSD" if d.rotational is False else "HDD" if d.rotational else "?"
        out.append(
            (f"{d.name}  {d.size_bytes / 1e9:.0f} GB {kind} {d.model or ''}".rstrip(), d.name)
        )
    for p in machine.partitions:
        out.append((f"{p.name}  {p.size_bytes / 1e9:.0f} GB partition", p.name))
    return out


class _WizardBase(Screen[ExecutionReport | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+p", "preview", "Preview plan", show=True, priority=True),
    ]
    DEFAULT_CSS = """
    _WizardBase { layout: vertical; }
    _WizardBase .wz-title { text-style: bold; padding: 0 1; }
    _WizardBase #wz-form { height: 1fr; padding: 0 1; }
    _WizardBase #wz-form Label { margin-top: 1; }
    _WizardBase #wz-form SelectionList { height: auto; max-height: 10; }
    _WizardBase .wz-hint { color: $text-muted; }
    _WizardBase #wz-error { color: $error; padding: 0 1; height: auto; }
    _WizardBase #wz-buttons { height: auto; padding: 0 1; }
    """
    TITLE_TEXT = ""

    def __init__(
        self, machine: Machine, backend: Backend, *, audit: AuditLog | None = None
    ) -> None:
        super().__init__()
        self.machine = machine
        self.backend = backend
        self.audit = audit
        self.last_plan: Plan | None = None

    def compose(self) -> ComposeResult:
        yield Label(self.TITLE_TEXT, classes="wz-title")
        with VerticalScroll(id="wz-form"):
            yield from self.form()
        yield Static("", id="wz-error")
        with Horizontal(id="wz-buttons"):
            yield Button("Preview plan", id="wz-preview", variant="primary")
            yield Button("Cancel", id="wz-cancel")
        yield Footer()

    def form(self) -> ComposeResult:  # pragma: no cover - overridden
        yield from ()

    def build_plan(self) -> Plan:  # pragma: no cover - overridden
        raise NotImplementedError

    def _value(self, wid: str) -> str:
        return self.query_one(f"#{wid}", Input).value.strip()

    def _select(self, wid: str) -> str | None:
        v = self.query_one(f"#{wid}", Select).value
        return None if v is Select.BLANK else str(v)

    def _check(self, wid: str) -> bool:
        return self.query_one(f"#{wid}", Checkbox).value

    @on(Button.Pressed, "#wz-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#wz-preview")
    def action_preview(self) -> None:
        err = self.query_one("#wz-error", Static)
        try:
            plan = self.build_plan()
        except PlanError as e:
            err.update(str(e))
            return
        err.update("")
        self.last_plan = plan
        pf = preflight_for(plan, self.machine, self.backend)
        self.app.push_screen(
            PlanPreviewScreen(plan, self.backend, preflight=pf, audit=self.audit),
            self._preview_closed,
        )

    def _preview_closed(self, report: ExecutionReport | None) -> None:
        if report is not None:
            self.dismiss(report)


class CreateArrayWizard(_WizardBase):
    TITLE_TEXT = "Create an md array"

    def form(self) -> ComposeResult:
        cands = candidate_devices(self.machine)
        yield Label("Level")
        yield Select(LEVELS, value="10", allow_blank=False, id="ca-level")
        yield Label("Devices")
        yield SelectionList[str](*cands, id="ca-devices")
        yield Label("Spares")
        yield SelectionList[str](*cands, id="ca-spares")
        yield Label("Chunk (e.g. 32K, 512K)")
        yield Input(value="512K", id="ca-chunk")
        yield Static(CHUNK_GUIDANCE, classes="wz-hint")
        yield Label("RAID-10 layout")
        yield Select([("n2 near", "n2"), ("f2 far", "f2"), ("o2 offset", "o2")], value="n2",
                     allow_blank=False, id="ca-layout")  # fmt: skip
        yield Label("Bitmap")
        yield Select([("internal", "internal"), ("none", "none")], value="internal",
                     allow_blank=False, id="ca-bitmap")  # fmt: skip
        yield Label("Metadata")
        yield Input(value="1.2", id="ca-metadata")
        yield Label("Name (a 3-digit number keeps /dev/mdNNN stable; empty = first free from 127)")
        yield Input(placeholder="127", id="ca-name")
        yield Checkbox("append the ARRAY line to /etc/mdadm/mdadm.conf", id="ca-conf")
        yield Checkbox("update-initramfs -u", id="ca-initramfs")
        yield Label("Filesystem")
        yield Select([("none", "none"), ("ext4", "ext4"), ("XFS", "xfs")], value="none",
                     allow_blank=False, id="ca-fs")  # fmt: skip
        yield Checkbox("LVM in between (pvcreate / vgcreate / lvcreate)", id="ca-lvm")
        yield Label("Volume group / logical volume")
        with Horizontal(classes="wz-row"):
            yield Input(placeholder="vgNNN", id="ca-vg")
            yield Input(value="data", id="ca-lv")

    def build_plan(self) -> Plan:
        level = self._select("ca-level") or "10"
        devices = tuple(self.query_one("#ca-devices", SelectionList).selected)
        spares = tuple(self.query_one("#ca-spares", SelectionList).selected)
        striped = level in ("0", "4", "5", "6", "10")
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
            conf = self.backend.read_text("/etc/mdadm/mdadm.conf")
            res = self.backend.run(["mdadm", "--detail", "--scan"])
            scan = res.stdout if res.ok else None
        return build_create_array(
            self.machine,
            CreateArrayParams(
                level=level,
                devices=devices,
                spares=spares,
                chunk_bytes=parse_size(chunk_text) if striped and chunk_text else None,
                layout=(self._select("ca-layout") if level == "10" else None),
                bitmap=self._select("ca-bitmap") or "internal",
                metadata=self._value("ca-metadata") or "1.2",
                name=self._value("ca-name") or None,
                update_conf=self._check("ca-conf"),
                update_initramfs=self._check("ca-initramfs"),
                filesystem=fs,
            ),
            current_conf=conf,
            current_scan=scan,
        )


MEMBER_ACTIONS = [
    ("add (becomes a spare on a complete array)", "add"),
    ("add as hot spare", "spare"),
    ("fail", "fail"),
    ("remove (faulty or spare)", "remove"),
    ("re-add", "re-add"),
    ("replace --with", "replace"),
    ("grow raid-devices", "grow"),
]


class MemberWizard(_WizardBase):
    TITLE_TEXT = "Member actions"

    def __init__(
        self,
        machine: Machine,
        backend: Backend,
        array: str | None = None,
        *,
        audit: AuditLog | None = None,
    ) -> None:
        super().__init__(machine, backend, audit=audit)
        self.array = array

    def form(self) -> ComposeResult:
        arrays = [
            (f"{a.name} {a.level}", a.name) for a in self.machine.arrays if not a.is_container
        ]
        default = self.array if self.array else (arrays[0][1] if arrays else Select.BLANK)
        yield Label("Array")
        yield Select(arrays, value=default, id="mb-array")
        yield Label("Action")
        yield Select(MEMBER_ACTIONS, value="fail", allow_blank=False, id="mb-action")
        yield Label("Device (member, or the new device for add/spare)")
        yield Input(placeholder="nvme1n1", id="mb-device")
        yield Label("replace: the new device")
        yield Input(placeholder="nvme4n1", id="mb-with")
        yield Label("grow: new number of raid devices; devices to add (comma-separated)")
        with Horizontal(classes="wz-row"):
            yield Input(placeholder="5", id="mb-count", type="integer")
            yield Input(placeholder="nvme4n1", id="mb-add")
        disks = ", ".join(d.name for d in self.machine.disks if isinstance(d, Disk))
        yield Static(f"disks: {disks}", classes="wz-hint")

    def build_plan(self) -> Plan:
        array = self._select("mb-array")
        if not array:
            raise PlanError("choose an array")
        act = self._select("mb-action") or "fail"
        dev = self._value("mb-device")
        m = self.machine
        if act == "grow":
            count = self._value("mb-count")
            if not count:
                raise PlanError("grow: give the new number of raid devices")
            adds = tuple(x.strip() for x in self._value("mb-add").split(",") if x.strip())
            return build_grow(m, array, int(count), add=adds)
        if not dev:
            raise PlanError("give the device")
        if act in ("add", "spare"):
            return build_add(m, array, dev, spare=act == "spare")
        if act == "fail":
            return build_fail(m, array, dev)
        if act == "remove":
            return build_remove(m, array, dev)
        if act == "re-add":
            return build_re_add(m, array, dev)
        new = self._value("mb-with")
        if not new:
            raise PlanError("replace: give the new device")
        return build_replace(m, array, dev, new)


SYNC_ACTIONS = [
    ("check (count mismatches)", "check"),
    ("repair", "repair"),
    ("idle (stop)", "idle"),
    ("frozen", "frozen"),
    ("speed limits", "limits"),
    ("stripe cache size", "stripe-cache"),
]


class SyncWizard(MemberWizard):
    TITLE_TEXT = "Sync actions and tuning"

    def form(self) -> ComposeResult:
        arrays = [
            (f"{a.name} {a.level}", a.name) for a in self.machine.arrays if not a.is_container
        ]
        default = self.array if self.array else (arrays[0][1] if arrays else Select.BLANK)
        yield Label("Array (limits without an array: global sysctl)")
        yield Select(arrays, value=default, id="sy-array")
        yield Label("Action")
        yield Select(SYNC_ACTIONS, value="check", allow_blank=False, id="sy-action")
        yield Label("limits: min / max KiB/s")
        with Horizontal(classes="wz-row"):
            yield Input(placeholder="200000", id="sy-min")
            yield Input(placeholder="500000", id="sy-max")
        yield Label("stripe cache entries (17..32768; memory = entries × 4 KiB × members)")
        yield Input(placeholder="8192", id="sy-entries", type="integer")

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
            raise PlanError("choose an array")
        if act == "stripe-cache":
            n = self._value("sy-entries")
            if not n:
                raise PlanError("give the number of entries")
            return build_stripe_cache(m, array, int(n))
        return build_sync_action(m, array, act)
