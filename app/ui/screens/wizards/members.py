"""Member actions on one array: add, spare, fail, remove, re-add, replace, grow
(app.plans.builders.members)."""

from __future__ import annotations

from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.widgets import Input, Label, Select

from app.backend import Backend
from app.model import Machine, MdArray
from app.plans.audit_log import AuditLog
from app.plans.builders.members import build_add, build_fail, build_grow, build_re_add, build_remove
from app.plans.builders.replace import build_replace
from app.plans.disk_plans import replace_plan
from app.plans.geometry import PlanError
from app.plans.plan import Plan
from app.ui.screens.wizards.base import DevicePicker, _WizardBase, array_choices, default_array

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
    "add": {"new"}, "spare": {"new"}, "re-add": {"member", "new"},
    "replace": {"member", "new", "override"},
    "grow": {"new", "count"}, "fail": {"member"}, "remove": {"member"},
}  # fmt: skip


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
        action: str | None = None,
        audit: AuditLog | None = None,
        host: str | None = None,
    ) -> None:
        super().__init__(machine, backend, audit=audit)
        self.array = default_array(machine, array)
        self.member = member
        self.action = action if action in _USES else None
        self.host = host

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

    def joining(self) -> str | None:
        return self._select("mb-array") if self.is_mounted else self.array

    def form(self) -> ComposeResult:
        arrays = array_choices(self.machine)
        a = self.machine.array(self.array) if self.array else None
        members = self._member_choices(a)
        member = self._member_of(a, self.member)
        yield Label("Array")
        yield Select(arrays, value=self.array or Select.NULL, allow_blank=not arrays,
                     prompt="no md arrays on this machine", id="mb-array")  # fmt: skip
        yield Label("Action")
        yield Select(MEMBER_ACTIONS, value=self.action or Select.NULL,
                     prompt="choose an action", id="mb-action")  # fmt: skip
        with Vertical(classes="wz-field", id="mb-f-member"):
            yield Label("Member of the array")
            yield Select(members, value=member or Select.NULL, prompt="choose a member",
                         id="mb-device")  # fmt: skip
        with Vertical(classes="wz-field", id="mb-f-new"):
            yield Label("Device not in the array (add, spare, re-add, replace --with, grow)")
            yield DevicePicker(self.candidates(), id="mb-new")
        with Vertical(classes="wz-field", id="mb-f-override"):
            yield Label("replace: the new disk has no passing qualify verdict? type its serial")
            yield Input(placeholder="empty: only a qualified disk", id="mb-unqualified")
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
        for field in ("member", "new", "override", "count"):
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

    def plan_maker(self) -> Callable[[], Plan]:
        """A replace reads the new disk's kept verdict and the old disk's enclosure slot
        through the backend: in the worker, as ``raidman plan member replace`` does."""
        if self._select("mb-action") != "replace":
            return super().plan_maker()
        array = self._select("mb-array")
        dev = self._select("mb-device")
        if not array or not dev:
            raise PlanError("replace: choose the array and the member")
        new = self._one_new("replace")
        typed = self._value("mb-unqualified") or None
        m, be, host = self.machine, self.backend, self.host
        return lambda: replace_plan(m, be, array, dev, new, override=typed, host=host)
