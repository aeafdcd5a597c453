"""``raidman plan lv-sync|lv-repair``: LVM RAID LVs' scrub and repair as plans.

raidman plan lv-sync check|repair --lv VG/LV
raidman plan lv-repair --lv VG/LV [--pvs PV ...]
"""

from __future__ import annotations

import argparse
from typing import Any

from app.backend import Backend
from app.model import Machine
from app.plans.builders.lv_raid import build_lv_repair, build_lv_sync
from app.plans.geometry import PlanError
from app.plans.ops.lvm_raid import LV_SYNC_ACTIONS
from app.plans.plan import Plan

WIZARDS = ("lv-sync", "lv-repair")


def add_parsers(wiz: Any, common: Any) -> None:
    s = wiz.add_parser(
        "lv-sync", help="scrub an LVM RAID LV: lvchange --syncaction check|repair VG/LV"
    )
    s.add_argument("action", choices=LV_SYNC_ACTIONS)
    s.add_argument("--lv", required=True, help="the raid LV as VG/LV")
    common(s)
    r = wiz.add_parser(
        "lv-repair", help="rebuild an LVM RAID LV's failed images: lvconvert --repair VG/LV"
    )
    r.add_argument("--lv", required=True, help="the raid LV as VG/LV")
    r.add_argument("--pvs", nargs="+", default=(), help="only these PVs take the new images")
    common(r)


def build(args: argparse.Namespace, machine: Machine, backend: Backend) -> Plan:
    if args.wizard == "lv-sync":
        return build_lv_sync(machine, args.lv, args.action)
    if args.wizard == "lv-repair":
        return build_lv_repair(machine, args.lv, tuple(args.pvs))
    raise PlanError(f"unknown wizard {args.wizard!r}")  # pragma: no cover - argparse restricts
