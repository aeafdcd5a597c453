"""Create an md array: level, devices and spares, chunk, layout, bitmap, metadata, name,
mdadm.conf / initramfs, filesystem with optional LVM (app.plans.builders.create_array).

The workload field pre-selects the chunk that won it in the newest kept ``raidman plan
benchmark`` of exactly the picked disks (app.wear.benchmarks.choose_chunk, as the CLI's
``--chunk-for``); the kept results are read once, in a worker."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.widgets import Checkbox, Input, Label, Select, SelectionList, Static

from app.backend import Backend
from app.model import Machine, levels, md_names
from app.plans.audit_log import AuditLog
from app.plans.builders.create_array import (
    CHUNK_GUIDANCE,
    CreateArrayParams,
    build_create_array,
    read_conf_and_scan,
)
from app.plans.builders.filesystem import (
    FilesystemParams,
)
from app.plans.geometry import PlanError, parse_size
from app.plans.plan import Plan
from app.ui.screens.wizards.base import DevicePicker, _WizardBase
from app.wear.benchmarks import WORKLOAD_WORDS, ChunkChoice, choose_chunk

LEVELS = levels.CREATE_CHOICES
DEFAULT_CHUNK = "512K"  # mdadm's default, shown until a benchmark decides
WORKLOAD_CHOICES = [("not said (the default chunk)", "none")] + [
    (words, key) for key, words in WORKLOAD_WORDS.items()
]
KeptBenchmarks = Callable[[], list[dict[str, Any]]]


class CreateArrayWizard(_WizardBase):
    TITLE_TEXT = "Create an md array"
    FIRST_FIELD = "#ca-level"

    def __init__(
        self,
        machine: Machine,
        backend: Backend,
        *,
        audit: AuditLog | None = None,
        benchmarks: KeptBenchmarks | None = None,
    ) -> None:
        super().__init__(machine, backend, audit=audit)
        self._load_benchmarks = benchmarks  # the kept results (a database read: in a worker)
        self.kept_benchmarks: list[dict[str, Any]] | None = None
        self.chunk_choice: ChunkChoice | None = None
        self._chunk_set: str | None = None  # the chunk text the last choice put in the field

    def on_mount(self) -> None:
        super().on_mount()
        if self._load_benchmarks is not None:
            self._read_benchmarks(self._load_benchmarks)

    def form(self) -> ComposeResult:
        cands = self.candidates()
        yield Label("Level")
        yield Select(LEVELS, value="10", allow_blank=False, id="ca-level")
        yield Label("Devices (space to pick; greyed out: cannot be used, with the reason)")
        yield DevicePicker(cands, id="ca-devices")
        yield Label("Spares")
        yield DevicePicker(cands, id="ca-spares")
        yield Label("Chunk (e.g. 32K, 512K)")
        yield Input(value=DEFAULT_CHUNK, id="ca-chunk")
        yield Label("Workload (picks the chunk that won it in a kept benchmark of these disks)")
        yield Select(WORKLOAD_CHOICES, value="none", allow_blank=False, id="ca-workload")
        yield Static("", id="ca-chunk-why", classes="wz-hint", markup=False)
        yield Static(CHUNK_GUIDANCE, classes="wz-hint")
        yield Label("RAID-10 layout", id="ca-layout-label", classes="ca-raid10")
        yield Select([("n2 near", "n2"), ("f2 far", "f2"), ("o2 offset", "o2")], value="n2",
                     allow_blank=False, id="ca-layout", classes="ca-raid10")  # fmt: skip
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

    @on(Select.Changed, "#ca-level")
    def _level_changed(self, event: Select.Changed) -> None:
        """The RAID-10 layout field only while RAID-10 is the level (it showed beside RAID-5,
        whose layout it is not)."""
        for w in self.query(".ca-raid10"):
            w.display = str(event.value) == "10"

    # ---- the chunk a benchmark chose ---------------------------------------------------------
    @work(
        thread=True,
        exclusive=True,
        group="wizard-benchmarks",
        exit_on_error=False,
        description="kept benchmarks",
    )
    def _read_benchmarks(self, load: KeptBenchmarks) -> None:
        try:
            docs = load()
        except Exception:  # no database to read: the default chunk, as without a benchmark
            docs = []
        with contextlib.suppress(RuntimeError):  # the app is shutting down
            self.app.call_from_thread(self._benchmarks_read, docs)

    def _benchmarks_read(self, docs: list[dict[str, Any]]) -> None:
        self.kept_benchmarks = docs
        if self.is_attached:
            self._choose_chunk()

    @on(Select.Changed, "#ca-workload")
    @on(SelectionList.SelectedChanged, "#ca-devices")
    def _choose_chunk(self) -> None:
        """The chunk field follows the benchmark's winner for the workload and the picked disks;
        without one it goes back to the default (a chunk typed by hand is left alone)."""
        workload = self._select("ca-workload") or "none"
        choice = None
        if workload != "none" and self.kept_benchmarks:
            choice = choose_chunk(self.kept_benchmarks, self._picked("ca-devices"), workload)
        self.chunk_choice = choice
        field = self.query_one("#ca-chunk", Input)
        why = self.query_one("#ca-chunk-why", Static)
        by_hand = field.value.strip() not in (self._chunk_set or DEFAULT_CHUNK, DEFAULT_CHUNK)
        if choice is not None:
            if not by_hand:
                field.value = self._chunk_set = choice.chunk_text()
            why.update(choice.reason() + (" (the field keeps the chunk typed)" if by_hand else ""))
            return
        if not by_hand:
            field.value, self._chunk_set = DEFAULT_CHUNK, None
        if workload == "none":
            why.update("")
        elif self.kept_benchmarks is None:
            why.update("reading the kept benchmarks…")
        else:
            why.update(
                f"no kept benchmark of these disks for {WORKLOAD_WORDS[workload]}: the default "
                f"chunk {DEFAULT_CHUNK} (raidman plan benchmark measures them)"
            )

    def plan_maker(self) -> Callable[[], Plan]:
        """The form read now; mdadm.conf and ``mdadm --detail --scan`` (for the plan's diff)
        read by the preview's worker, as ``raidman plan`` reads them."""
        params = self._params()
        machine, backend = self.machine, self.backend
        build_create_array(machine, params)  # pure: the form's mistakes said at once, as before

        def make() -> Plan:
            conf = scan = None
            if params.update_conf:
                conf, scan = read_conf_and_scan(backend, params.conf_path)
            return build_create_array(machine, params, current_conf=conf, current_scan=scan)

        return make

    def build_plan(self) -> Plan:
        """The plan without the mdadm.conf diff (no backend call)."""
        return build_create_array(self.machine, self._params())

    def _params(self) -> CreateArrayParams:
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
        return CreateArrayParams(
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
        )
