"""Create an md array: level, devices and spares, chunk, layout, bitmap, metadata, name,
mdadm.conf / initramfs, filesystem with optional LVM (app.plans.wizards.create_array)."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.widgets import Checkbox, Input, Label, Select, Static

from app.model import levels, md_names
from app.plans.geometry import PlanError, parse_size
from app.plans.plan import Plan
from app.plans.wizards.create_array import (
    CHUNK_GUIDANCE,
    CreateArrayParams,
    build_create_array,
    read_conf_and_scan,
)
from app.plans.wizards.filesystem import (
    FilesystemParams,
)
from app.ui.screens.wizards.base import DevicePicker, _WizardBase

LEVELS = levels.CREATE_CHOICES


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
