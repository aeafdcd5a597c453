"""Wizard screens: forms over the current Machine → a Plan (pure builders in app.plans.builders) →
pre-flight → PlanPreviewScreen (confirm, run with live status). One module per wizard, mirroring
``app.plans.builders``; what they share (the screen base, the device picker, array choices) is in
``base``.

* ``CreateArrayWizard(machine, backend)``: level, devices (+ spares), chunk, RAID-10 layout,
  bitmap, metadata, name, mdadm.conf / initramfs, filesystem (ext4/XFS) with optional LVM.
* ``MemberWizard(machine, backend, array=None)``: add, spare, fail, remove, re-add, replace, grow.
* ``SyncWizard(machine, backend, array=None)``: check/repair/idle/frozen, speed limits, stripe cache.
* ``FilesystemWizard(machine, backend, array=None)``: optional LVM (PV, VG, LV) and ext4/XFS on an
  existing array, aligned to its geometry; arrays already carrying something are shown with why.
* ``DiskWizard(machine, backend, device=None, action=None)``: qualify, locate, retire, SMART
  self-test, wipe, prepare, benchmark.
* ``ArrayWizard(machine, backend, array=None, action=None)``: stop, assemble, delete, mount, the
  scheduled checks.

Each dismisses with the ExecutionReport of the preview (None when cancelled) so the App can
re-probe after a run.
"""

from app.ui.screens.wizards.arrays import ARRAY_ACTIONS, ArrayWizard
from app.ui.screens.wizards.base import (
    DevicePicker,
    array_choices,
    candidate_label,
    container_volumes,
    default_array,
    media,
)
from app.ui.screens.wizards.create_array import LEVELS, CreateArrayWizard
from app.ui.screens.wizards.disks import DISK_ACTIONS, DiskWizard
from app.ui.screens.wizards.filesystem import (
    FilesystemWizard,
    filesystem_array_choices,
    geometry_line,
)
from app.ui.screens.wizards.members import MEMBER_ACTIONS, MemberWizard
from app.ui.screens.wizards.sync_actions import SYNC_ACTIONS, SyncWizard

__all__ = [
    "ARRAY_ACTIONS",
    "DISK_ACTIONS",
    "LEVELS",
    "MEMBER_ACTIONS",
    "SYNC_ACTIONS",
    "ArrayWizard",
    "CreateArrayWizard",
    "DevicePicker",
    "DiskWizard",
    "FilesystemWizard",
    "MemberWizard",
    "SyncWizard",
    "array_choices",
    "candidate_label",
    "container_volumes",
    "default_array",
    "filesystem_array_choices",
    "geometry_line",
    "media",
]
