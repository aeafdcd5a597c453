"""Disk actions: qualify a new disk, find its bay, retire an old one, a SMART self-test, wipe,
prepare, benchmark (``app.plans.disk_plans``, ``app.plans.builders``), each as ``raidman
plan`` makes it: what a plan reads through the backend (self-test support, the enclosure slot,
erase support, the kept verdicts) is read in the wizard's worker (``plan_maker``)."""

from __future__ import annotations

from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Checkbox, Input, Label, Select

from app.backend import Backend
from app.format import human_bytes
from app.model import Machine
from app.plans.audit_log import AuditLog
from app.plans.builders.benchmark import BenchmarkParams, build_benchmark
from app.plans.builders.lifecycle import build_prepare, build_wipe
from app.plans.disk_plans import locate_plan, qualify_plan, retire_plan, smart_test_plan
from app.plans.geometry import PlanError, parse_size
from app.plans.plan import Plan
from app.ui.screens.wizards.base import DevicePicker, _WizardBase, array_choices

DISK_ACTIONS = [
    ("qualify a new disk (self-tests, write + verify every block)", "qualify"),
    ("locate: light its bay", "locate"),
    ("locate off", "locate-off"),
    ("retire an old disk (out of its array, erased)", "retire"),
    ("SMART self-test", "smart-test"),
    ("wipe a device's signatures", "wipe"),
    ("prepare disks (GPT + one RAID partition)", "prepare"),
    ("benchmark chunk sizes (destroys the disks' data)", "benchmark"),
]
# the fields each action uses
_USES: dict[str, set[str]] = {
    "qualify": {"device", "qualify"}, "locate": {"device", "seconds"}, "locate-off": {"device"},
    "retire": {"device", "sanitize"}, "smart-test": {"device", "test"}, "wipe": {"device"},
    "prepare": {"devices", "free"}, "benchmark": {"devices", "chunks"},
}  # fmt: skip
FIELDS = ("device", "qualify", "seconds", "sanitize", "test", "devices", "free", "chunks")


def device_choices(machine: Machine, partitions: bool = True) -> list[tuple[str, str]]:
    """Every disk (and partition), with its size, model and what holds it."""
    out: list[tuple[str, str]] = []
    for d in machine.disks:
        if d.kind != "disk" or not d.is_storage:
            continue
        held = [a.name for a in machine.arrays_of_disk(d.name)]
        what = f"  in {', '.join(held)}" if held else ""
        out.append((f"{d.name:<9} {human_bytes(d.size_bytes):>10}  {d.model or ''}{what}", d.name))
        if partitions:
            for p in machine.partitions:
                if p.parent == d.name:
                    out.append((f"  {p.name:<7} {human_bytes(p.size_bytes):>10}", p.name))
    return out


class DiskWizard(_WizardBase):
    """A disk's arrival and departure; opened on the tree's disk (``device``) and, from the
    palette, on one action (``action``)."""

    TITLE_TEXT = "Disk actions"
    FIRST_FIELD = "#dk-action"

    def __init__(
        self,
        machine: Machine,
        backend: Backend,
        device: str | None = None,
        *,
        action: str | None = None,
        audit: AuditLog | None = None,
        host: str | None = None,
    ) -> None:
        super().__init__(machine, backend, audit=audit)
        choices = {v for _, v in device_choices(machine)}
        self.device = device if device in choices else None
        self.action = action if action in _USES else None
        self.host = host

    def form(self) -> ComposeResult:
        yield Label("Action")
        yield Select(DISK_ACTIONS, value=self.action or Select.NULL,
                     prompt="choose an action", id="dk-action")  # fmt: skip
        with Vertical(classes="wz-field", id="dk-f-device"):
            yield Label("Disk (by kernel name; the plan records its serial)")
            yield Select(device_choices(self.machine), value=self.device or Select.NULL,
                         prompt="choose a disk", id="dk-device")  # fmt: skip
        with Vertical(classes="wz-field", id="dk-f-qualify"):
            yield Label("qualify: zones of the surface pass (1-50)")
            yield Input(value="10", id="dk-zones", type="integer")
            yield Label("qualify: compare with the members of (its future array)")
            yield Select(array_choices(self.machine), prompt="none", id="dk-for")
        with Vertical(classes="wz-field", id="dk-f-seconds"):
            yield Label("locate: seconds of activity blink (without an enclosure LED)")
            yield Input(value="30", id="dk-seconds", type="integer")
        with Vertical(classes="wz-field", id="dk-f-sanitize"):
            yield Checkbox("retire: also erase it by its transport (sanitize)", id="dk-sanitize")
        with Vertical(classes="wz-field", id="dk-f-test"):
            yield Label("self-test")
            yield Select([("short (about 2 minutes)", "short"), ("long (reads every sector)",
                          "long")], value="short", allow_blank=False, id="dk-test")  # fmt: skip
        with Vertical(classes="wz-field", id="dk-f-devices"):
            yield Label("Disks (prepare, benchmark)")
            yield DevicePicker(self.candidates(), id="dk-devices")
        with Vertical(classes="wz-field", id="dk-f-free"):
            yield Label("prepare: percent left unpartitioned (SSD over-provisioning)")
            yield Input(value="0", id="dk-free", type="integer")
        with Vertical(classes="wz-field", id="dk-f-chunks"):
            yield Label("benchmark: chunk sizes")
            yield Input(value="32K,512K", id="dk-chunks")

    def on_mount(self) -> None:
        super().on_mount()
        self._show_fields()

    @on(Select.Changed, "#dk-action")
    def _show_fields(self) -> None:
        uses = _USES.get(self._select("dk-action") or "", set(FIELDS))
        for field in FIELDS:
            self.query_one(f"#dk-f-{field}").display = field in uses

    def _device(self) -> str:
        dev = self._select("dk-device")
        if not dev:
            raise PlanError("choose a disk")
        return dev

    def build_plan(self) -> Plan:  # pragma: no cover - plan_maker builds every action
        return self.plan_maker()()

    def plan_maker(self) -> Callable[[], Plan]:
        """The form read now (UI thread); the plan made in the worker (it reads the backend)."""
        act = self._select("dk-action")
        if act is None:
            raise PlanError("choose an action")
        m, be, host = self.machine, self.backend, self.host
        if act in ("prepare", "benchmark"):
            picked = self._picked("dk-devices")
            if not picked:
                raise PlanError(f"{act}: pick the disks")
            if act == "prepare":
                free = self._int("dk-free", "percent left free") or 0
                plan = build_prepare(m, picked, free)
            else:
                try:
                    chunks = tuple(parse_size(c) for c in self._value("dk-chunks").split(",") if c)
                except ValueError as e:
                    raise PlanError(f"chunk sizes: {e}") from None
                plan = build_benchmark(m, BenchmarkParams(devices=picked, chunks=chunks))
            return lambda: plan
        dev = self._device()
        if act == "qualify":
            zones = self._int("dk-zones", "zones") or 10
            peers = self._select("dk-for")
            return lambda: qualify_plan(m, be, dev, zones=zones, peers_of=peers, host=host)
        if act in ("locate", "locate-off"):
            secs = self._int("dk-seconds", "seconds") or 30
            return lambda: locate_plan(m, be, dev, off=act == "locate-off", seconds=secs)
        if act == "retire":
            sanitize = self._check("dk-sanitize")
            return lambda: retire_plan(m, be, dev, sanitize=sanitize)
        if act == "smart-test":
            test = self._select("dk-test") or "short"
            return lambda: smart_test_plan(m, be, dev, test)
        plan = build_wipe(m, dev)
        return lambda: plan
