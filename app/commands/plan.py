"""``raidman plan WIZARD [options] [--json] [--out FILE] [--demo SCENARIO | --replay DIR]``

Builds a plan against the probed machine and prints it (numbered, copyable command lines, why,
destructive marks, notes, pre-flight refusals/warnings) WITHOUT running anything.

  raidman plan create-array --level 10 --devices nvme0n1,nvme1n1,nvme2n1,nvme3n1 \\
      --chunk 32K --layout n2 --bitmap none --name 127 [--conf] [--initramfs] \\
      [--fs ext4|xfs] [--lvm --vg VG --lv LV --lv-size 100%FREE]
  raidman plan filesystem --array md127 --fs ext4 [--lvm ...]
  raidman plan member add|spare|fail|remove|re-add|replace|grow --array md127 \\
      [--device DEV] [--with NEW] [--raid-devices N] [--add DEV,...] [--backup-file PATH]
  raidman plan sync check|repair|idle|frozen|limits|stripe-cache --array md127 \\
      [--min KIB_S] [--max KIB_S] [--entries N] [--persist]
  raidman plan persist --remove stripe-cache|speed-limits|scheduler
  raidman plan benchmark --devices nvme0n1,nvme1n1,nvme2n1,nvme3n1 --chunks 32K,512K \\
      [--level 10 --layout n2] [--runs 3] [--numjobs 1,4] [--size 256M] [--runtime 60]
  raidman plan check-schedule [--every monthly|off|7d] [--window 6h] | --remove
  raidman plan smart-test --device nvme0n1 --test short|long
  raidman plan prepare|stop|assemble|delete|wipe|mount ... (app/commands/plan_lifecycle.py)
  raidman plan qualify|locate|retire --device D ... (app/commands/plan_disks.py)
  raidman plan lv-sync check|repair|limits --lv VG/LV [--min/--max KiB/s], lv-repair --lv VG/LV
  [--pvs PV...], lv-replace --lv VG/LV --pv OLD [--to NEW...] (plan_lvm.py)

Exit status: 0 plan printed; 2 the inputs cannot make a plan; 3 pre-flight refuses a device.
``--json`` prints ``Plan.to_json()`` (with the ``digest`` of its steps) plus a ``preflight`` object; save it and run it with
``raidman apply PLAN.json``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from app import statefiles
from app.backend import Backend
from app.commands import plan_disks, plan_lifecycle, plan_lvm
from app.commands.backend_options import add_backend_options, make_backend
from app.commands.refusal import refuse
from app.model import Machine
from app.plans.builders import persist
from app.plans.builders.benchmark import WORKLOADS, BenchmarkParams, build_benchmark
from app.plans.builders.check_schedule import schedule_plan, unschedule_plan
from app.plans.builders.create_array import (
    CreateArrayParams,
    build_create_array,
    read_conf_and_scan,
)
from app.plans.builders.filesystem import FilesystemParams, build_filesystem
from app.plans.builders.members import build_add, build_fail, build_grow, build_re_add, build_remove
from app.plans.builders.replace import REPLACE_METHODS
from app.plans.builders.smart_test import SMART_TESTS
from app.plans.builders.sync_actions import (
    build_bitmap,
    build_speed_limits,
    build_stripe_cache,
    build_sync_action,
)
from app.plans.disk_plans import replace_plan, smart_test_plan
from app.plans.geometry import PlanError, parse_size
from app.plans.guards.allowlist import plan_step_problems
from app.plans.guards.identity import record_disks
from app.plans.plan import Plan, escape_controls
from app.plans.render import current_consequences, format_plan, plan_file_text, preflight_for
from app.statefiles import StateFileError


def _csv(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip())


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the plan as JSON (for apply)")
    p.add_argument("--out", metavar="FILE", help="also save the plan JSON to FILE")
    p.add_argument(
        "--format",
        choices=("text", "json", "ansible"),
        help="text (default), json (= --json), or ansible: a playbook of the same plan",
    )
    p.add_argument("--hosts", default="all", help="ansible: the play's hosts (default all)")
    p.add_argument(
        "--become",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="ansible: become root (default yes)",
    )
    add_backend_options(p)


def _fs_options(p: argparse.ArgumentParser, default_fs: str) -> None:
    p.add_argument("--fs", choices=("ext4", "xfs", "none"), default=default_fs)
    p.add_argument("--lvm", action="store_true", help="pvcreate/vgcreate/lvcreate before mkfs")
    p.add_argument("--vg", help="volume group name (default vgNNN)")
    p.add_argument("--lv", default="data", help="logical volume name (default data)")
    p.add_argument("--lv-size", default="100%FREE", help="e.g. 200G or 100%%FREE (default)")
    p.add_argument("--label", help="filesystem label")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "plan", help="print the plan of a wizard without running it"
    )
    wiz = p.add_subparsers(dest="wizard", required=True)

    c = wiz.add_parser("create-array", help="mdadm --create (+ mdadm.conf, initramfs, LVM, fs)")
    c.add_argument("--level", required=True, help="0, 1, 4, 5, 6, 10 or linear")
    c.add_argument("--devices", required=True, type=_csv, help="comma-separated kernel names")
    c.add_argument("--spares", type=_csv, default=(), help="comma-separated spare devices")
    c.add_argument(
        "--chunk",
        help="chunk size, e.g. 32K (small random I/O) or 512K (mdadm default, large sequential)",
    )
    c.add_argument(
        "--chunk-for",
        choices=tuple(WORKLOADS),
        help="take the chunk that won the last `plan benchmark` of these devices for a workload",
    )
    c.add_argument("--layout", help="RAID-10: n2, f2, o2; RAID-5/6: left-symmetric, ...")
    c.add_argument(
        "--bitmap",
        default=None,
        help="internal, none, or a file (default: none for RAID-10 of SSDs, else internal)",
    )
    c.add_argument("--metadata", default="1.2")
    c.add_argument("--name", help="array name; a 3-digit number (e.g. 127) keeps /dev/mdNNN stable")
    c.add_argument("--conf", action="store_true", help="append the ARRAY line to mdadm.conf")
    c.add_argument("--conf-path", default="/etc/mdadm/mdadm.conf")
    c.add_argument("--initramfs", action="store_true", help="update-initramfs -u afterwards")
    _fs_options(c, "none")
    _common(c)

    f = wiz.add_parser("filesystem", help="LVM and/or ext4/XFS aligned to an existing array")
    f.add_argument("--array", required=True)
    _fs_options(f, "ext4")
    _common(f)

    m = wiz.add_parser("member", help="add, spare, fail, remove, re-add, replace, grow")
    m.add_argument(
        "action", choices=("add", "spare", "fail", "remove", "re-add", "replace", "grow")
    )
    m.add_argument("--array", required=True)
    m.add_argument("--device", help="the member (or new device for add/spare)")
    m.add_argument("--with", dest="with_", metavar="NEW", help="replace: the new device")
    m.add_argument(
        "--method",
        choices=REPLACE_METHODS,
        default="auto",
        help="replace: hot (--replace, keeps redundancy), fail-remove-add, or auto (hot while "
        "the member works)",
    )
    m.add_argument(
        "--unqualified",
        metavar="SERIAL",
        help="replace: use a new disk without a passing qualify verdict (type its serial)",
    )
    m.add_argument("--raid-devices", type=int, help="grow: the new number of raid devices")
    m.add_argument("--add", type=_csv, default=(), help="grow: devices to add first")
    m.add_argument("--backup-file", help="grow: reshape backup file (outside the array)")
    _common(m)

    s = wiz.add_parser("sync", help="check/repair/idle/frozen, speed limits, stripe cache")
    s.add_argument(
        "action",
        choices=("check", "repair", "idle", "frozen", "limits", "stripe-cache", "bitmap"),
    )
    s.add_argument("--array", help="the array (limits without --array: global sysctl)")
    s.add_argument("--min", help="limits: minimum KiB/s ('system' per array)")
    s.add_argument("--max", help="limits: maximum KiB/s ('system' per array)")
    s.add_argument("--entries", type=int, help="stripe-cache: entries (17..32768)")
    s.add_argument("--bitmap", help="bitmap: internal, none, or a file outside the array")
    s.add_argument("--bitmap-chunk", help="bitmap: bytes per bitmap bit, e.g. 128M")
    s.add_argument(
        "--persist",
        action="store_true",
        help="limits: also keep the global limits at boot (/etc/sysctl.d)",
    )
    _common(s)

    b = wiz.add_parser(
        "benchmark", help="measure chunk sizes with fio on empty disks (destroys their data)"
    )
    b.add_argument("--devices", type=_csv, required=True, help="the members, e.g. sdb,sdc,sdd,sde")
    b.add_argument("--chunks", type=_csv, default=("32K", "64K", "512K"), help="e.g. 32K,512K")
    b.add_argument("--level", default="10", help="RAID level to measure (default 10)")
    b.add_argument("--layout", default="n2", help="RAID-10 layout (default n2)")
    b.add_argument("--runs", type=int, default=3, help="runs of each measurement (default 3)")
    b.add_argument("--numjobs", type=_csv, default=("1", "4"), help="fio jobs (default 1,4)")
    b.add_argument(
        "--runtime", type=int, default=60, help="seconds each run may take at most (default 60)"
    )
    b.add_argument("--size", default="256M", help="bytes each fio job covers (default 256M)")
    _common(b)

    k = wiz.add_parser("persist", help="remove a setting raidman keeps at boot")
    k.add_argument("--remove", required=True, choices=tuple(persist.FILES))
    _common(k)

    t = wiz.add_parser("smart-test", help="a SMART short or long self-test (smartctl -t)")
    t.add_argument("--device", required=True, help="the whole disk (kernel name)")
    t.add_argument("--test", choices=SMART_TESTS, default="short")
    _common(t)
    plan_lifecycle.add_parsers(wiz, _common)
    plan_disks.add_parsers(wiz, _common)
    plan_lvm.add_parsers(wiz, _common)

    k = wiz.add_parser(
        "check-schedule", help="raidman monitor's scheduled checks: install or remove"
    )
    k.add_argument("--every", default="monthly", help="monthly (default), off, or 7d, 2m...")
    k.add_argument("--window", default="6h", help="how long a check runs per window (6h)")
    k.add_argument("--remove", action="store_true", help="remove the schedule's drop-in")
    _common(k)
    return p


def _need(value: Any, opt: str) -> Any:
    if value in (None, "", ()):
        raise PlanError(f"{opt} is required here")
    return value


def _fs_params(args: argparse.Namespace) -> FilesystemParams:
    return FilesystemParams(
        fstype=args.fs,
        lvm=args.lvm,
        vg=args.vg,
        lv=args.lv,
        lv_size=args.lv_size,
        label=args.label,
    )


def _benchmarked_chunk(devices: tuple[str, ...], workload: str) -> int:
    """The chunk that won ``workload`` in the newest kept benchmark of exactly ``devices``."""
    from app.wear.benchmarks import winning_chunk
    from app.wear.snapshots import SnapshotStore

    store = SnapshotStore.open()
    try:
        chunk = winning_chunk(store, devices, workload)
    finally:
        store.close()
    if chunk is None:
        names = ", ".join(sorted(d.removeprefix("/dev/") for d in devices))
        raise PlanError(
            f"no kept benchmark of {names}: run raidman plan benchmark on them first, or give "
            "--chunk"
        )
    return chunk


def cli_defaults_note(left_out: list[str]) -> str:
    """The TUI's create wizard has mdadm.conf and the initramfs ticked; the CLI adds them only
    when asked: said, so the two do not differ without a word."""
    what = {"--conf": "append the ARRAY line to mdadm.conf", "--initramfs": "update the initramfs"}
    return (
        f"not in this plan: {' and '.join(what[o] for o in left_out)} (the TUI's create wizard "
        f"does both by default; here add {' '.join(left_out)}): without them the array may come "
        "back under another md number after a reboot, or not be assembled in early boot"
    )


def build(args: argparse.Namespace, machine: Machine, backend: Backend) -> Plan:
    """The plan the parsed options ask for. Raises PlanError for unusable input."""
    w = args.wizard
    if w in plan_lifecycle.WIZARDS:
        return plan_lifecycle.build(args, machine, backend)
    if w in plan_disks.WIZARDS:
        return plan_disks.build(args, machine, backend)
    if w in plan_lvm.WIZARDS:
        return plan_lvm.build(args, machine, backend)
    if w == "create-array":
        conf = scan = None
        if args.conf:
            conf, scan = read_conf_and_scan(backend, args.conf_path)
        fs = _fs_params(args)
        plan = build_create_array(
            machine,
            CreateArrayParams(
                level=args.level,
                devices=args.devices,
                spares=args.spares,
                chunk_bytes=(
                    parse_size(args.chunk)
                    if args.chunk
                    else _benchmarked_chunk(args.devices, args.chunk_for)
                    if args.chunk_for
                    else None
                ),
                layout=args.layout,
                bitmap=args.bitmap,
                metadata=args.metadata,
                name=args.name,
                update_conf=args.conf,
                conf_path=args.conf_path,
                update_initramfs=args.initramfs,
                filesystem=fs if (fs.fstype != "none" or fs.lvm) else None,
            ),
            current_conf=conf,
            current_scan=scan,
        )
        left_out = [
            o for o, on in (("--conf", args.conf), ("--initramfs", args.initramfs)) if not on
        ]
        if left_out:
            plan = replace(plan, notes=(*plan.notes, cli_defaults_note(left_out)))
        return plan
    if w == "filesystem":
        return build_filesystem(machine, args.array, _fs_params(args))
    if w == "member":
        a, act = args.array, args.action
        if act in ("add", "spare"):
            return build_add(machine, a, _need(args.device, "--device"), spare=act == "spare")
        if act == "fail":
            return build_fail(machine, a, _need(args.device, "--device"))
        if act == "remove":
            return build_remove(machine, a, _need(args.device, "--device"))
        if act == "re-add":
            return build_re_add(machine, a, _need(args.device, "--device"))
        if act == "replace":
            return replace_plan(
                machine,
                backend,
                a,
                _need(args.device, "--device"),
                _need(args.with_, "--with"),
                method=args.method,
                override=args.unqualified,
                host=_host(args),
            )
        return build_grow(
            machine,
            a,
            _need(args.raid_devices, "--raid-devices"),
            add=args.add,
            backup_file=args.backup_file,
        )
    if w == "sync":
        act = args.action
        if act == "limits":
            existing: str | bool | None = False
            if args.persist:
                existing = backend.read_text(persist.SPEED_LIMITS_CONF)
            return build_speed_limits(
                machine,
                min_kib_s=args.min,
                max_kib_s=args.max,
                array=args.array,
                persist_file=existing,
            )
        if act == "stripe-cache":
            return build_stripe_cache(
                machine, _need(args.array, "--array"), _need(args.entries, "--entries")
            )
        if act == "bitmap":
            return build_bitmap(
                machine,
                _need(args.array, "--array"),
                _need(args.bitmap, "--bitmap"),
                chunk=args.bitmap_chunk,
            )
        return build_sync_action(machine, _need(args.array, "--array"), act)
    if w == "benchmark":
        try:
            numjobs = tuple(int(x) for x in args.numjobs)
        except ValueError:
            raise PlanError("--numjobs: whole numbers, e.g. 1,4") from None
        return build_benchmark(
            machine,
            BenchmarkParams(
                devices=args.devices,
                chunks=tuple(parse_size(c) for c in args.chunks),
                level=args.level,
                layout=args.layout,
                runs=args.runs,
                numjobs=numjobs,
                size=args.size,
                runtime=args.runtime,
            ),
        )
    if w == "persist":
        return persist.build_remove(args.remove)
    if w == "check-schedule":
        return unschedule_plan() if args.remove else schedule_plan(args.every, args.window)
    if w == "smart-test":
        return smart_test_plan(machine, backend, args.device, args.test)
    raise PlanError(f"unknown wizard {w!r}")  # pragma: no cover - argparse restricts it


def _host(args: argparse.Namespace) -> str | None:
    hosts = getattr(args, "host", None)
    return str(hosts[0]) if hosts else None


def run(args: argparse.Namespace) -> int:
    backend = make_backend(args)
    try:
        machine = backend.probe()
    except Exception as e:
        print(f"raidman: probe failed: {e}", file=sys.stderr)
        return 1
    try:
        plan = build(args, machine, backend)
        problems = plan_step_problems(plan)  # what apply would refuse is not offered at all
        if problems:
            raise PlanError("; ".join(problems))
    except PlanError as e:
        return refuse("plan", [str(e)])
    plan = record_disks(plan, machine)  # serial/WWN of the disks it writes to: apply checks them
    plan = current_consequences(plan, machine, backend)
    pf = preflight_for(plan, machine, backend)
    host = _host(args)
    text = plan_file_text(plan, pf, host=host, backend=backend.name)
    if args.out:
        try:  # never through a symlink, never over another user's file (app.statefiles)
            statefiles.write_text(Path(args.out), text, mode=0o600, what="plan file", output=True)
        except StateFileError as e:
            print(f"raidman plan: {escape_controls(str(e))}", file=sys.stderr)
            return 1
    if args.format == "ansible":
        from app.plans.ansible import playbook

        sys.stdout.write(playbook(plan, machine, pf, hosts=args.hosts, become=args.become))
    elif args.json or args.format == "json":
        sys.stdout.write(text)
    else:
        if host is not None:
            sys.stdout.write(f"on host: {host} (over ssh)\n")
        sys.stdout.write(format_plan(plan, pf))
        if args.out:
            on = f" --host {host}" if host is not None else ""
            sys.stdout.write(f"\nsaved: {args.out} (run it with: raidman apply {args.out}{on})\n")
        else:
            sys.stdout.write("\nnothing was run.\n")
    if pf.refusals:  # said in the plan above; and as every refusal is, last, on stderr
        sys.stdout.flush()
        return refuse("plan", (f"{r} [{r.code}] (pre-flight)" for r in pf.refusals))
    return 0
