"""``raidman plan prepare|stop|assemble|delete|wipe|mount``: the array's life as plans.

raidman plan prepare --devices sdb,sdc [--leave-free PCT]
raidman plan stop --array md127
raidman plan assemble (--array md127|/dev/md/127|NAME|UUID | --scan)
raidman plan delete --array md127
raidman plan wipe --device sdb1
raidman plan mount --device md127 --mountpoint /srv/data [--fstab] [--options OPTS]
"""

from __future__ import annotations

import argparse
from typing import Any

from app.backend import Backend
from app.model import Machine
from app.plans.builders.assemble import StrayArray, build_assemble
from app.plans.builders.file_edit import file_now
from app.plans.builders.lifecycle import (
    build_delete,
    build_mount,
    build_prepare,
    build_stop,
    build_wipe,
)
from app.plans.builders.mdconf_edit import read_mdadm_conf
from app.plans.geometry import PlanError
from app.plans.ops.system_files import FSTAB
from app.plans.plan import Plan
from app.plans.superblocks import read_superblocks
from app.rules.fstab import mount_options_now

WIZARDS = ("prepare", "stop", "assemble", "delete", "wipe", "mount")


def _csv(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip())


def add_parsers(wiz: Any, common: Any) -> None:
    p = wiz.add_parser("prepare", help="GPT + one 1 MiB-aligned Linux RAID partition per disk")
    p.add_argument("--devices", required=True, type=_csv, help="comma-separated whole disks")
    p.add_argument(
        "--leave-free", type=int, default=0, metavar="PCT", help="percent left unpartitioned"
    )
    common(p)
    s = wiz.add_parser("stop", help="mdadm --stop (refused while mounted, in an active VG, held)")
    s.add_argument("--array", required=True)
    common(s)
    a = wiz.add_parser("assemble", help="mdadm --assemble --scan, or one array by UUID/name")
    g = a.add_mutually_exclusive_group(required=True)
    g.add_argument(
        "--array",
        help="the array not assembled: md127, /dev/md/127, its name (host:name or name) or UUID",
    )
    g.add_argument("--scan", action="store_true", help="every array mdadm finds")
    common(a)
    d = wiz.add_parser("delete", help="stop, zero every member's superblock, wipefs -a each")
    d.add_argument("--array", required=True)
    common(d)
    w = wiz.add_parser("wipe", help="wipefs -a one device (a retired member)")
    w.add_argument("--device", required=True)
    common(w)
    m = wiz.add_parser("mount", help="mount a filesystem; --fstab adds its line by UUID")
    m.add_argument("--device", required=True)
    m.add_argument("--mountpoint", required=True)
    m.add_argument("--fstab", action="store_true", help="add a UUID= line with nofail")
    m.add_argument("--options", help="mount options (default: what the audit recommends)")
    common(m)


def strays_of(machine: Machine, backend: Backend) -> tuple[StrayArray, ...]:
    sbs = read_superblocks(machine, backend)
    return tuple(StrayArray(s.uuid, s.name, tuple(x.device for x in s.devices)) for s in sbs.strays)


def build(args: argparse.Namespace, machine: Machine, backend: Backend) -> Plan:
    w = args.wizard
    if w == "prepare":
        return build_prepare(machine, args.devices, args.leave_free)
    if w == "stop":
        return build_stop(machine, args.array)
    if w == "assemble":
        return build_assemble(
            machine, strays_of(machine, backend), None if args.scan else args.array
        )
    if w == "delete":
        return build_delete(
            machine, args.array, read_superblocks(machine, backend), read_mdadm_conf(backend)
        )
    if w == "wipe":
        return build_wipe(machine, args.device)
    if w == "mount":
        dev = args.device.removeprefix("/dev/")
        if args.options:
            opts, why = args.options, ""
        else:
            opts, why = mount_options_now(machine, backend, dev)
        text, in_place = file_now(backend, FSTAB) if args.fstab else (None, False)
        return build_mount(
            machine,
            dev,
            args.mountpoint,
            options=opts,
            fstab=args.fstab,
            fstab_text=text,
            fstab_in_place=in_place,
            why_options=why,
        )
    raise PlanError(f"unknown wizard {w!r}")  # pragma: no cover - argparse restricts it
