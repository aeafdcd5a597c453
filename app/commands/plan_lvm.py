"""``raidman plan lv-sync|lv-repair|lv-replace``: LVM RAID LVs' scrub, rates, repair and
replacement as plans.

raidman plan lv-sync check|repair --lv VG/LV
raidman plan lv-sync limits --lv VG/LV [--min KIB_S] [--max KIB_S]
raidman plan lv-repair --lv VG/LV [--pvs PV ...]
raidman plan lv-replace --lv VG/LV --pv OLD [--to NEW ...]
"""

from __future__ import annotations

import argparse
from typing import Any

from app.backend import Backend
from app.model import Machine
from app.plans.builders.lv_raid import (
    build_lv_limits,
    build_lv_repair,
    build_lv_replace,
    build_lv_sync,
)
from app.plans.geometry import PlanError
from app.plans.ops.lvm_raid import LV_SYNC_ACTIONS
from app.plans.plan import Plan

WIZARDS = ("lv-sync", "lv-repair", "lv-replace")


def add_parsers(wiz: Any, common: Any) -> None:
    s = wiz.add_parser(
        "lv-sync",
        help="scrub an LVM RAID LV (lvchange --syncaction check|repair VG/LV) or set its "
        "recovery rates (limits: lvchange --min/--maxrecoveryrate)",
    )
    s.add_argument("action", choices=(*LV_SYNC_ACTIONS, "limits"))
    s.add_argument("--lv", required=True, help="the raid LV as VG/LV")
    s.add_argument("--min", type=int, default=None, help="limits: min KiB/s per device (0: unset)")
    s.add_argument("--max", type=int, default=None, help="limits: max KiB/s per device (0: unset)")
    common(s)
    r = wiz.add_parser(
        "lv-repair", help="rebuild an LVM RAID LV's failed images: lvconvert --repair VG/LV"
    )
    r.add_argument("--lv", required=True, help="the raid LV as VG/LV")
    r.add_argument("--pvs", nargs="+", default=(), help="only these PVs take the new images")
    common(r)
    p = wiz.add_parser(
        "lv-replace", help="move an LVM RAID LV's image off a PV: lvconvert --replace PV VG/LV"
    )
    p.add_argument("--lv", required=True, help="the raid LV as VG/LV")
    p.add_argument("--pv", required=True, help="the PV whose image leaves the LV")
    p.add_argument("--to", nargs="+", default=(), help="only these PVs take the new image")
    common(p)


def build(args: argparse.Namespace, machine: Machine, backend: Backend) -> Plan:
    if args.wizard == "lv-sync":
        if args.action == "limits":
            return build_lv_limits(machine, args.lv, args.min, args.max)
        if args.min is not None or args.max is not None:
            raise PlanError("--min/--max belong to lv-sync limits, not to a check or repair")
        return build_lv_sync(machine, args.lv, args.action)
    if args.wizard == "lv-replace":
        return build_lv_replace(machine, args.lv, args.pv, tuple(args.to))
    if args.wizard == "lv-repair":
        return build_lv_repair(machine, args.lv, tuple(args.pvs))
    raise PlanError(f"unknown wizard {args.wizard!r}")  # pragma: no cover - argparse restricts
