"""An array's life: stop, assemble, delete, mount its filesystem, the scheduled checks
(``app.plans.builders.lifecycle``, ``check_schedule``), as ``raidman plan`` makes them; what a
plan reads through the backend (superblocks, mdadm.conf, fstab, the mount options the audit
recommends) is read in the wizard's worker."""

from __future__ import annotations

from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Checkbox, Input, Label, Select

from app.backend import Backend
from app.model import Machine
from app.plans.audit_log import AuditLog
from app.plans.builders.assemble import StrayArray, build_assemble
from app.plans.builders.check_schedule import schedule_plan, unschedule_plan
from app.plans.builders.file_edit import file_now
from app.plans.builders.lifecycle import (
    build_delete,
    build_mount,
    build_stop,
)
from app.plans.builders.mdconf_edit import read_mdadm_conf
from app.plans.geometry import PlanError
from app.plans.ops.system_files import FSTAB
from app.plans.plan import Plan
from app.plans.superblocks import read_superblocks
from app.rules.fstab import mount_options_now
from app.ui.screens.wizards.base import _WizardBase, array_choices, default_array

ARRAY_ACTIONS = [
    ("stop the array (its data unreachable until assembled)", "stop"),
    ("assemble every array mdadm finds", "assemble-scan"),
    ("assemble one array that is not running (UUID or name)", "assemble"),
    ("delete the array (stop, erase every member)", "delete"),
    ("mount its filesystem", "mount"),
    ("scheduled checks: install", "check-schedule"),
    ("scheduled checks: remove", "check-schedule-remove"),
]
_USES: dict[str, set[str]] = {
    "stop": {"array"}, "assemble-scan": set(), "assemble": {"uuid"}, "delete": {"array"},
    "mount": {"array", "mount"}, "check-schedule": {"schedule"}, "check-schedule-remove": set(),
}  # fmt: skip
FIELDS = ("array", "uuid", "mount", "schedule")


def strays(machine: Machine, backend: Backend) -> tuple[StrayArray, ...]:
    sbs = read_superblocks(machine, backend)
    return tuple(StrayArray(s.uuid, s.name, tuple(x.device for x in s.devices)) for s in sbs.strays)


class ArrayWizard(_WizardBase):
    TITLE_TEXT = "Array actions"
    FIRST_FIELD = "#ar-action"

    def __init__(
        self,
        machine: Machine,
        backend: Backend,
        array: str | None = None,
        *,
        action: str | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        super().__init__(machine, backend, audit=audit)
        self.array = default_array(machine, array)
        self.action = action if action in _USES else None

    def form(self) -> ComposeResult:
        yield Label("Action")
        yield Select(ARRAY_ACTIONS, value=self.action or Select.NULL,
                     prompt="choose an action", id="ar-action")  # fmt: skip
        with Vertical(classes="wz-field", id="ar-f-array"):
            yield Label("Array")
            arrays = array_choices(self.machine)
            yield Select(arrays, value=self.array or Select.NULL, allow_blank=not arrays,
                         prompt="no md arrays running", id="ar-array")  # fmt: skip
        with Vertical(classes="wz-field", id="ar-f-uuid"):
            yield Label("assemble: the array's UUID or name (its superblocks are read)")
            yield Input(placeholder="e.g. 3aaf6c4e:4e6fe9d5:9bb0d6a3:2f6c1d0e", id="ar-uuid")
        with Vertical(classes="wz-field", id="ar-f-mount"):
            yield Label("mount: the mount point (below /srv, /mnt or /media, or /data)")
            yield Input(placeholder="/srv/data", id="ar-mountpoint")
            yield Checkbox("add its line to /etc/fstab (by UUID, nofail)", id="ar-fstab")
        with Vertical(classes="wz-field", id="ar-f-schedule"):
            yield Label("checks: every (monthly, off, 7d, 2m...) and window (6h)")
            yield Input(value="monthly", id="ar-every")
            yield Input(value="6h", id="ar-window")

    def on_mount(self) -> None:
        super().on_mount()
        self._show_fields()

    @on(Select.Changed, "#ar-action")
    def _show_fields(self) -> None:
        uses = _USES.get(self._select("ar-action") or "", set(FIELDS))
        for field in FIELDS:
            self.query_one(f"#ar-f-{field}").display = field in uses

    def build_plan(self) -> Plan:  # pragma: no cover - plan_maker builds every action
        return self.plan_maker()()

    def plan_maker(self) -> Callable[[], Plan]:
        act = self._select("ar-action")
        if act is None:
            raise PlanError("choose an action")
        m, be = self.machine, self.backend
        if act == "check-schedule":
            plan = schedule_plan(self._value("ar-every") or "monthly", self._value("ar-window"))
            return lambda: plan
        if act == "check-schedule-remove":
            plan = unschedule_plan()
            return lambda: plan
        if act == "assemble-scan":
            return lambda: build_assemble(m, strays(m, be), None)
        if act == "assemble":
            want = self._value("ar-uuid")
            if not want:
                raise PlanError("assemble: give the array's UUID or name")
            return lambda: build_assemble(m, strays(m, be), want)
        array = self._select("ar-array")
        if not array:
            raise PlanError("choose an array")
        if act == "stop":
            plan = build_stop(m, array)
            return lambda: plan
        if act == "delete":
            return lambda: build_delete(m, array, read_superblocks(m, be), read_mdadm_conf(be))
        mountpoint = self._value("ar-mountpoint")
        if not mountpoint:
            raise PlanError("mount: give the mount point")
        fstab = self._check("ar-fstab")
        return lambda: _mount(m, be, array, mountpoint, fstab)


def _mount(machine: Machine, backend: Backend, array: str, mountpoint: str, fstab: bool) -> Plan:
    """The filesystem on the array (or the one LV on it) mounted, with the audit's options."""
    dev = array
    lvs = [lv.kernel_name for lv in machine.lvs if lv.kernel_name and array in lv.devices]
    if machine.filesystem(array) is None and len(lvs) == 1 and lvs[0]:
        dev = lvs[0]
    opts, why = mount_options_now(machine, backend, dev)
    text, in_place = file_now(backend, FSTAB) if fstab else (None, False)
    return build_mount(
        machine, dev, mountpoint, options=opts, fstab=fstab, fstab_text=text,
        fstab_in_place=in_place, why_options=why,
    )  # fmt: skip
