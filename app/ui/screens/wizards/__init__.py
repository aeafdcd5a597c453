"""Wizard screens: forms over the current Machine → a Plan (pure builders in app.plans.wizards) →
pre-flight → PlanPreviewScreen (confirm, run with live status). One module per wizard, mirroring
``app.plans.wizards``; what they share (the screen base, the device picker, array choices) is in
``base``.

* ``CreateArrayWizard(machine, backend)``: level, devices (+ spares), chunk, RAID-10 layout,
  bitmap, metadata, name, mdadm.conf / initramfs, filesystem (ext4/XFS) with optional LVM.
* ``MemberWizard(machine, backend, array=None)``: add, spare, fail, remove, re-add, replace, grow.
* ``SyncWizard(machine, backend, array=None)``: check/repair/idle/frozen, speed limits, stripe cache.
* ``FilesystemWizard(machine, backend, array=None)``: optional LVM (PV, VG, LV) and ext4/XFS on an
  existing array, aligned to its geometry; arrays already carrying something are shown with why.

Each dismisses with the ExecutionReport of the preview (None when cancelled) so the App can
re-probe after a run.
"""

from app.ui.screens.wizards.base import (
    MEMBER_ACTIONS,
    CreateArrayWizard,
    FilesystemWizard,
    MemberWizard,
    SyncWizard,
)

__all__ = ["MEMBER_ACTIONS", "CreateArrayWizard", "FilesystemWizard", "MemberWizard", "SyncWizard"]
