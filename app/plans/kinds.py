"""The kinds of plan raidman makes (``Plan.kind``: which wizard or rule built it).

A kind decides nothing about confirmation (whether a plan destroys data comes from its argv,
app.plans.destroys); ``apply`` refuses an unknown kind, and a kind in ``NEVER_DESTROY`` whose
steps destroy data (``plan_devices.plan_problems``).
"""

from __future__ import annotations

KNOWN_KINDS = frozenset(
    {
        "create-array",
        "filesystem",
        "member-add",
        "member-spare",
        "member-fail",
        "member-remove",
        "member-re-add",
        "member-replace",
        "member-grow",
        "sync-action",
        "scheduled-check",
        "check-schedule",
        "sync-limits",
        "sync-bitmap",
        "stripe-cache",
        "boost",
        "boost-restore",
        "audit-ext4-stride",
        "audit-fstrim",
        "audit-md-alerts",
        "audit-md-bitmap",
        "audit-md-monitor",
        "audit-mdadm-conf",
        "audit-scheduler",
        "audit-stripe-cache",
        "persist-remove",
        "benchmark",
        "smart-test",
        "prepare",
        "array-stop",
        "array-assemble",
        "array-delete",
        "wipe",
        "mount",
        "qualify",
        "locate",
        "retire",
        "lv-sync",
        "lv-repair",
        "lv-sync-limits",
        "lv-replace",
    }
)

# kinds whose plans change settings or membership state but never overwrite a device
NEVER_DESTROY = frozenset(
    {
        "member-fail",
        "member-remove",
        "sync-action",
        "scheduled-check",
        "check-schedule",
        "sync-limits",
        "sync-bitmap",
        "stripe-cache",
        "boost",
        "boost-restore",
        "persist-remove",
        "smart-test",
        "array-stop",
        "array-assemble",
        "mount",
        "locate",
        "lv-sync",
        "lv-repair",
        "lv-sync-limits",
        "lv-replace",
        *(k for k in KNOWN_KINDS if k.startswith("audit-")),
    }
)
