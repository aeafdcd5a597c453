"""``raidman plan qualify|locate|retire``: a disk's arrival and departure as plans.

raidman plan qualify --device sdg [--zones N] [--for md0]
raidman plan locate --device sdb [--off] [--seconds 30]
raidman plan retire --device sdb [--sanitize]

What each reads through the backend before the plan is made (self-test support, the enclosure
slot, ledctl, erase support, mdadm.conf, the superblocks) is read by ``app.plans.disk_plans``,
which the TUI's wizards call in their worker too.
"""

from __future__ import annotations

import argparse
from typing import Any

from app.backend import Backend
from app.model import Machine
from app.plans.builders.qualify import DEFAULT_ZONES
from app.plans.disk_plans import locate_plan, qualify_plan, retire_plan
from app.plans.geometry import PlanError
from app.plans.plan import Plan

WIZARDS = ("qualify", "locate", "retire")


def add_parsers(wiz: Any, common: Any) -> None:
    q = wiz.add_parser(
        "qualify",
        help="burn-in of a new disk: SMART self-tests, a write + verify of every block, a verdict",
    )
    q.add_argument("--device", required=True, help="the new whole disk (it must hold nothing)")
    q.add_argument("--zones", type=int, default=DEFAULT_ZONES, help="zones of the surface pass")
    q.add_argument("--for", dest="for_", metavar="MD", help="compare with this array's members")
    common(q)
    o = wiz.add_parser("locate", help="light the disk's bay (enclosure LED, ledctl, or a blink)")
    o.add_argument("--device", required=True)
    o.add_argument("--off", action="store_true", help="turn the locate (and fault) LED off")
    o.add_argument("--seconds", type=int, default=30, help="how long the activity blink lasts")
    common(o)
    r = wiz.add_parser(
        "retire", help="remove an old disk: out of its array, superblock, signatures, mdadm.conf"
    )
    r.add_argument("--device", required=True, help="the old whole disk")
    r.add_argument("--sanitize", action="store_true", help="also erase it by its transport")
    common(r)


def host_of(args: argparse.Namespace) -> str | None:
    hosts = getattr(args, "host", None)
    return str(hosts[0]) if hosts else None


def build(args: argparse.Namespace, machine: Machine, backend: Backend) -> Plan:
    w = args.wizard
    if w == "qualify":
        return qualify_plan(
            machine, backend, args.device, zones=args.zones, peers_of=args.for_,
            host=host_of(args),
        )  # fmt: skip
    if w == "locate":
        return locate_plan(machine, backend, args.device, off=args.off, seconds=args.seconds)
    if w == "retire":
        return retire_plan(machine, backend, args.device, sanitize=args.sanitize)
    raise PlanError(f"unknown wizard {w!r}")  # pragma: no cover - argparse restricts it
