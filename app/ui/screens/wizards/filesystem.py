"""LVM and/or a filesystem on an existing array, aligned to its geometry
(app.plans.builders.filesystem)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Checkbox, Input, Label, Select, Static

from app.backend import Backend
from app.format import human_bytes
from app.model import Machine, MdArray
from app.plans.audit_log import AuditLog
from app.plans.builders.filesystem import (
    FilesystemParams,
    array_refusals,
    build_filesystem,
    default_vg,
    geometry_of,
)
from app.plans.geometry import PlanError
from app.plans.plan import Plan
from app.ui.screens.wizards.base import _WizardBase


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
