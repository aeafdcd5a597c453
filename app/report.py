"""The model as JSON (``raidman report --json``) and as plain text (``raidman report``).

Shape (every key always present; unknown values are ``null``)::

    {"host", "kernel", "taken_at", "is_root",
     "disks": [{"name", "model", "serial", "vendor", "wwn", "size_bytes", "logical_sector",
                "physical_sector", "min_io", "optimal_io", "alignment_offset", "rotational",
                "transport", "kind", "discard_granularity", "discard_max_bytes", "scheduler",
                "removable", "read_only", "partition_table", "ptuuid", "ata_port"}],
     "partitions": [{"name", "parent", "number", "start_sector", "size_bytes", "type",
                     "type_name", "label", "uuid", "alignment_offset"}],
     "arrays": [{"name", "level", "state", "chunk_bytes", "layout", "bitmap",
                 "members": [{"device", "slot", "state", "role", "errors",
                              "data_offset_sectors", "size_kib", "recovery_start",
                              "superblock": {"device", "array_uuid", "name", "level", "events",
                                             "array_events", "events_behind", "update_time",
                                             "device_role", "array_state", "bitmap",
                                             "recovery_offset_sectors", "bad_blocks",
                                             "metadata"} | null  (full report only)}],
                 "outside": [superblock, ...]  (devices with its superblock it does not list),
                 "sync": {"action", "done_sectors", "total_sectors", "speed_kib_s", "eta_s",
                          "min_speed_kib_s", "max_speed_kib_s", "reshape_position",
                          "mismatch_cnt", "targets", "at_ceiling", "queued",
                          (delayed/pending:) "waits_for", "shares", "starts_in_s", "then_s",
                          "waiting_text"} | null,
                 "size_bytes", "raid_disks", "previous_raid_disks", "metadata", "array_name",
                 "uuid", "degraded" (null for a container),
                 "stripe_cache_size", "container", "member_index", "consistency_policy",
                 "read_only", "mismatch_cnt", "last_sync_action", "speed_min_local",
                 "speed_max_local",
                 "syncs": [{"array", "array_uuid", "action", "start", "end", "outcome",
                            "fraction", "members": [{"device", "disk", "serial",
                            "member_bytes", "kernel_bytes_written", "kernel_capacity_share",
                            "kernel_scope", "kernel_counter", "disk_kernel_bytes_written",
                            "disk_bytes", "smart_scope",
                            "bytes_written", "smart_counter", "smart_unit", "smart_unit_bytes",
                            "smart_coarser_than_written", "smart_pair", "capacity_share",
                            "wear_points"}],
                            "forecast": {"duration_s", "members": [{"device", "bytes_written",
                            "bytes_written_low"}], "duration_s_high", "speed_kib_s",
                            "speed_why", "action", "source", "why"} | null,
                            "forecast_vs_actual"}],
                 "checks": [{"action", "start", "end", "duration_s", "outcome",
                             "mismatch_cnt", "speed_kib_s", "resumed", "windows": [{"start",
                             "end", "from_sector", "to_sector", "mismatch_cnt"}],
                             "members": [{"device", "bytes_written"}]}]
                 (syncs and checks with the wear database only)}],
     "lvm": {"pvs": [{"device", "vg", "size_bytes", "free_bytes", "pe_start", "uuid", "missing"}],
             "vgs": [{"name", "size_bytes", "free_bytes", "extent_size", "extent_count",
                      "free_count", "uuid", "pv_count", "lv_count"}],
             "lvs": [{"name", "vg", "size_bytes", "segtype", "attr", "kernel_name", "uuid",
                      "active", "hidden", "pool", "origin", "stripes", "stripe_size",
                      "data_percent", "devices",
                      "raid": {"sync_percent", "sync_action", "mismatches", "min_rate_kib_s",
                               "max_rate_kib_s", "health_status", "health_bit",
                               "integrity_mismatches", "images": [{"index", "image", "meta",
                               "pvs", "health"}], "dm": {"raid_type", "devices", "health",
                               "done_sectors", "total_sectors", "sync_action", "mismatch_cnt",
                               "data_offset", "journal"} | null} | null,
                      "sync": (as arrays[].sync; speed from report's second look) | null}]},
     "crypts": [{"name", "kernel_name", "backing", "type"}],
     "filesystems": [{"device", "fstype", "uuid", "label", "mountpoints", "size_bytes",
                      "used_bytes", "avail_bytes", "block_size", "stride", "stripe_width",
                      "sunit_bytes", "swidth_bytes"}],
     "edges": [[parent, child], ...],
     "notes": [{"source", "message", "severity"}],
     "stray_superblocks": [{"uuid", "name", "level", "events", "devices": [superblock]}]
                          (full report only: arrays no one assembled)}

``raidman report`` adds to each disk ``smart`` (app.wear.report.smart_json: health, bytes written,
wear, and app.model.smart_tables' ``attributes``, ``nvme_health``, ``self_tests``,
``last_self_test``, ``error_count``, ``errors``) and ``workload`` (app.model.workload: ``tb_per_year``,
``rated_tb_per_year`` or ``rated_tbw``, ``check_tb_per_year``, ... with their sources), and to
each array ``risk`` (app.model.risk: ``read_bytes``, ``ure_rate``, ``ure_expected``,
``corrects_one``, ``window_s``, ``survivors``, ``members``' SMART evidence; null without
redundancy); ``--io`` adds ``io`` to disks, arrays and
members (app/report_io.py), ``--log`` a top-level ``kernel_log`` (app/kernel_log.py).

``sync`` is ``null`` when the array is idle. ``extra`` (e.g. ``{"findings": [...]}`` or
``{"smart": {"sda": {...}}}``) is merged at the top level. No Textual here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from app.backend import Backend
from app.escape import escape_controls
from app.format import (
    array_summary,
    duration,
    human_bytes,
    member_marks,
    percent,
    speed,
)
from app.kernel_log import degraded_since, read_kernel_log
from app.model import sync_model
from app.model.devices import LogicalVolume, Machine, MdArray, MdMember, SyncStatus
from app.model.smart import SmartReading
from app.model.smart_tables import self_test_text
from app.model.smart_units import bytes_written, tbw_used, wear_used_percent
from app.plans.superblocks import add_superblocks_json, read_superblocks, superblock_lines
from app.report_lvm import raid_lines, raid_syncs
from app.report_risk import add_json, disk_workloads, risk_text, risks, workload_text
from app.rules.engine import audit
from app.rules.finding import Finding
from app.rules.inputs import gather
from app.sync.dm_raid import raid_sync
from app.wear.check_findings import DEFAULT_MAX_AGE_DAYS, check_findings
from app.wear.checks import checks_json
from app.wear.report import smart_json, syncs_json, syncs_text
from app.wear.snapshots import SnapshotStore
from app.wear.waiting import sync_wait


def _plain(obj: Any) -> dict[str, Any]:
    """A frozen dataclass as a JSON-ready dict (tuples become lists)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        out[f.name] = list(v) if isinstance(v, tuple) else v
    return out


def sync_to_json(sync: SyncStatus | None) -> dict[str, Any] | None:
    if sync is None or sync.action == "idle":
        return None
    eta = sync.eta_s
    return {
        "action": sync.action,
        "done_sectors": sync.done_sectors,
        "total_sectors": sync.total_sectors,
        "speed_kib_s": sync.speed_kib_s,
        "eta_s": None if eta is None else round(eta),
        "min_speed_kib_s": sync.min_speed_kib_s,
        "max_speed_kib_s": sync.max_speed_kib_s,
        "reshape_position": sync.reshape_position,
        "mismatch_cnt": sync.mismatch_cnt,
        "targets": list(sync.targets),
        # the max limit holds the sync back (app.model.sync_model: md compares the progress
        # rate, sync_speed's own unit, with it); null when the speed or the limit is unknown
        "at_ceiling": sync_model.at_ceiling(
            sync.speed_kib_s, sync.max_speed_kib_s, sync.min_speed_kib_s
        ),
        "queued": sync.queued,  # delayed/pending: the sync md runs when its turn comes
    }


def member_to_json(m: MdMember) -> dict[str, Any]:
    return {
        "device": m.device,
        "slot": m.slot,
        "state": list(m.state),
        "role": m.role,
        "errors": m.errors,
        "data_offset_sectors": m.data_offset_sectors,
        "size_kib": m.size_kib,
        "recovery_start": m.recovery_start,
    }


def array_to_json(a: MdArray) -> dict[str, Any]:
    return {
        "name": a.name,
        "level": a.level,
        "state": a.array_state,
        "chunk_bytes": a.chunk_bytes,
        "layout": a.layout,
        "bitmap": a.bitmap,
        "members": [member_to_json(m) for m in a.members],
        "sync": sync_to_json(a.sync),
        "size_bytes": a.size_bytes,
        "raid_disks": a.raid_disks,
        "previous_raid_disks": a.previous_raid_disks,  # the old count during a reshape
        "metadata": a.metadata,
        "array_name": a.array_name,
        "uuid": a.uuid,
        "degraded": None if a.is_container else a.degraded,  # a container has no redundancy
        "stripe_cache_size": a.stripe_cache_size,
        "container": a.container,
        "member_index": a.member_index,
        "consistency_policy": a.consistency_policy,
        "read_only": a.read_only,
        "mismatch_cnt": a.mismatch_cnt,
        "last_sync_action": a.last_sync_action,
        "speed_min_local": a.speed_min_local,  # the array's own md/sync_speed_min, if set
        "speed_max_local": a.speed_max_local,
    }


def lv_to_json(lv: LogicalVolume, sync: SyncStatus | None = None) -> dict[str, Any]:
    """An LV's JSON; a raid LV's images, health and dm-raid status under "raid", its running
    sync in the arrays' shape under "sync" (speed and ETA from report's second look)."""
    j = _plain(lv)
    j["raid"] = lv.raid.to_json() if lv.raid is not None else None
    j["sync"] = sync_to_json(sync or raid_sync(lv))
    return j


def _with_wait(m: Machine, a: MdArray) -> dict[str, Any]:
    """The array's JSON; a sync md holds back says what it waits for (app.wear.waiting)."""
    j = array_to_json(a)
    w = sync_wait(m, a.name) if j["sync"] is not None else None
    if w is not None:
        j["sync"].update(w.to_json())
    return j


def machine_to_json(machine: Machine, *, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The whole model in the shape documented above."""
    m = machine
    out: dict[str, Any] = {
        "host": m.host,
        "kernel": m.kernel,
        "taken_at": m.taken_at,
        "is_root": m.is_root,
        "disks": [_plain(d) for d in m.disks],
        "partitions": [_plain(p) for p in m.partitions],
        "arrays": [_with_wait(m, a) for a in m.arrays],
        "lvm": {
            "pvs": [_plain(pv) for pv in m.pvs],
            "vgs": [_plain(vg) for vg in m.vgs],
            "lvs": [lv_to_json(lv) for lv in m.lvs],
        },
        "crypts": [_plain(c) for c in m.crypts],
        "filesystems": [_plain(f) for f in m.filesystems],
        "edges": [list(e) for e in m.edges],
        "notes": [_plain(n) for n in m.notes],
    }
    if extra:
        out.update(extra)
    return out


def _clean(text: object) -> str:
    """Text from tools or the model, safe for a terminal or a mail: control characters escaped."""
    return escape_controls(str(text))


def smart_line(reading: SmartReading | None) -> str:
    """``SMART PASSED  written 1.2 TiB (241 Total_LBAs_Written × 512 B)  wear 3%  34 °C``."""
    if reading is None:
        return "SMART not read"
    if not reading.available:
        return f"SMART unavailable: {_clean(reading.reason or 'no answer')}"
    parts = [f"SMART {_clean(reading.health or 'health unknown')}"]
    w = bytes_written(reading)
    if w is None:
        parts.append("written: no write counter")
    elif w.bytes is None:
        why = f"; {w.note}" if w.note else ""
        parts.append(f"written: {w.raw} ({_clean(w.source)}, unit unknown{_clean(why)})")
    else:
        nand = ", flash writes" if w.kind == "nand" else ""
        parts.append(f"written {human_bytes(w.bytes)} ({_clean(w.source)}, {_clean(w.unit)}{nand})")
    # the drive's own wear figure and the host writes against the rated TBW: two figures,
    # each said for what it is (issue 41: "wear 64 % used" beside "150 TBW rated: 85 % used")
    wear = wear_used_percent(reading)
    if wear is not None:
        parts.append(
            f"wear reported by the drive: {wear.used_percent}% of its rated life used "
            f"({_clean(wear.source)})"
        )
    tbw = tbw_used(reading)
    if tbw is not None:
        parts.append(
            f"host writes against the rated {tbw.rating.tbw} TBW: {tbw.used_percent}% used"
        )
    if reading.temperature_c is not None:
        parts.append(f"{reading.temperature_c} °C")
    return "  ".join(parts)


def read_smart(backend: Backend, machine: Machine) -> dict[str, SmartReading]:
    """One SMART reading per disk the report covers (blocking: runs smartctl). A backend error
    for one disk becomes an unavailable reading with the reason, never a lost report."""
    out: dict[str, SmartReading] = {}
    for d in machine.disks:
        if d.kind != "disk" or not d.is_storage:
            continue
        try:
            out[d.name] = backend.smart(d.name)
        except Exception as e:
            out[d.name] = SmartReading(d.name, False, f"SMART read failed: {e}")
    return out


def machine_to_text(
    machine: Machine,
    *,
    smart: Mapping[str, SmartReading] | None = None,
    findings: Sequence[Finding] | None = None,
    notes: Sequence[str] = (),
    recorded: Sequence[str] = (),
    sections: Sequence[tuple[str, Sequence[str]]] = (),
    lv_syncs: Mapping[str, SyncStatus] | None = None,
) -> str:
    """A compact human report: one line per device, grouped by layer. With ``smart``, each disk's
    SMART health, bytes written (and from which counter), wear and temperature; with
    ``findings``, the audit's findings (the same as ``report --json``, for cron mail)."""
    m = machine
    lines = [f"{m.host}  kernel {m.kernel}" + ("" if m.is_root else "  (not root)")]
    disks = [d for d in m.disks if d.is_storage]
    if disks:
        lines.append("")
        lines.append("Disks")
        for d in disks:
            kind = {True: "HDD", False: "SSD"}.get(d.rotational) if d.rotational is not None else ""
            lines.append(
                f"  {d.name:<12} {human_bytes(d.size_bytes):>10}  {_clean(d.model_text)}"
                f"  {d.transport_text} {kind}  sectors {d.logical_sector}/{d.physical_sector}"
                f"  io {d.min_io}/{d.optimal_io}"
            )
            if smart is not None and d.kind == "disk":
                lines.append(f"    {smart_line(smart.get(d.name))}")
                reading = smart.get(d.name)
                if reading is not None and reading.available and reading.self_tests is not None:
                    lines.append(f"    {self_test_text(reading)}")
            for p in m.partitions:
                if p.parent == d.name:
                    lines.append(
                        f"    {p.name:<12} {human_bytes(p.size_bytes):>10}  start {p.start_sector}"
                        + (f"  {p.type_name}" if p.type_name else "")
                    )
    if m.arrays:
        lines.append("")
        lines.append("Arrays")
        for a in m.arrays:
            if a.is_container:
                vols = [v.name for v in m.arrays if v.container == a.name and not v.is_container]
                lines.append(
                    f"  {a.name:<8} {array_summary(a)}  holds {', '.join(vols) or 'no volume'}"
                )
            else:
                lines.append(
                    f"  {a.name:<8} {array_summary(a)}  {human_bytes(a.size_bytes)}"
                    f"  state {a.array_state or '?'}  bitmap {a.bitmap or 'none'}"
                )
            for mem in a.members_by_slot:
                slot = "-" if mem.slot is None else str(mem.slot)
                role = "container member" if a.is_container else f"{mem.role} {member_marks(mem)}"
                lines.append(f"    slot {slot:>2}  {mem.device:<12} {role}".rstrip())
            s = a.sync
            w = sync_wait(m, a.name)
            if w is not None:  # held back by md: what for, never "? ETA ?"
                lines.append(f"    {s.queued if s and s.queued else 'sync'} {w.text()}")
            elif s is not None and s.active:
                held = sync_model.at_ceiling(s.speed_kib_s, s.max_speed_kib_s)
                lines.append(
                    f"    {s.action} {percent(s.fraction)}  speed {speed(s.speed_kib_s)}"
                    f"  ETA {duration(s.eta_s)}"
                    + (f"  at its ceiling (max {speed(s.max_speed_kib_s)})" if held else "")
                )
    if m.vgs or m.lvs:
        lines.append("")
        lines.append("LVM")
        for vg in m.vgs:
            pvs = ", ".join(pv.device for pv in m.pvs if pv.vg == vg.name)
            lines.append(
                f"  VG {vg.name}  {human_bytes(vg.size_bytes)}  free {human_bytes(vg.free_bytes)}  PVs {pvs}"
            )
            for lv in m.lvs:
                if lv.vg == vg.name:
                    lines.append(
                        f"    LV {lv.name:<12} {human_bytes(lv.size_bytes):>10}  {lv.segtype}"
                        f"  {lv.kernel_name or 'inactive'}"
                    )
                    lines.extend(raid_lines(lv, lv_syncs or {}))
    if m.filesystems:
        lines.append("")
        lines.append("Filesystems")
        for f in m.filesystems:
            used = ""
            if f.size_bytes and f.used_bytes is not None:
                used = f"  used {human_bytes(f.used_bytes)} of {human_bytes(f.size_bytes)}"
            lines.append(
                f"  {f.device:<12} {f.fstype:<6} {', '.join(f.mountpoints) or 'not mounted'}{used}"
            )
    if recorded:  # app.wear.report.syncs_text
        lines.append("")
        lines.append("Recorded syncs")
        lines.extend(f"  {_clean(ln)}" for ln in recorded)
    for title, body in sections:  # app.report_risk: rebuild risk, workload
        if body:
            lines += ["", title, *(f"  {ln}" for ln in body)]
    if findings is not None:
        lines.append("")
        lines.append(f"Findings ({len(findings)})" if findings else "Findings: none")
        for fd in findings:
            where = "" if not fd.device or fd.title.startswith(fd.device) else f"{fd.device}: "
            lines.append(f"  [{fd.severity}] {_clean(where)}{_clean(fd.title)}")
            for dl in fd.detail.splitlines():
                if dl.strip():
                    lines.append(f"      {_clean(dl)}")
            if fd.fix is not None:
                for step in fd.fix.steps:
                    lines.append(f"      fix: {_clean(step.shell())}")
    if m.notes or notes:
        lines.append("")
        lines.append("Notes")
        for n in m.notes:
            lines.append(f"  [{n.severity}] {n.source}: {_clean(n.message)}")
        for text in notes:
            lines.append(f"  [warning] {_clean(text)}")
    # the model's strings are escaped where the backend built it (app/escape.py); this is the
    # terminal's side of that boundary, for any text that reached the lines another way
    return "\n".join(escape_controls(line) for line in lines) + "\n"


def recorded_sync_speeds(store: SnapshotStore, machine: Machine) -> dict[str, int]:
    """Per array, the average speed (KiB/s) of its last finished whole-member sync
    (resync/recover/repair/check) as recorded: member size / duration."""
    out: dict[str, int] = {}
    for a in machine.arrays:
        sizes = [m.size_kib for m in a.members if m.size_kib]
        if not sizes:
            continue
        for ev in reversed(store.syncs_for(a.name, a.uuid)):
            done = ev.ended_at is not None and ev.outcome == "finished"
            if done and ev.action in ("resync", "recover", "repair", "check"):
                secs = (ev.ended_at or 0) - ev.started_at
                if secs > 0:
                    out[a.name] = int(max(sizes) / secs)
                    break
    return out


def first_crc_counts(store: SnapshotStore, readings: Mapping[str, SmartReading]) -> dict[str, int]:
    """Per disk, the UDMA CRC error count first recorded for its serial (CRC errors rising)."""
    out: dict[str, int] = {}
    for disk, r in readings.items():
        if r.available and r.serial and r.attribute(199) is not None:
            first = store.first_counter(r.serial, "crc_errors")
            if first is not None:
                out[disk] = first
    return out


def full_report_json(
    backend: Backend,
    machine: Machine,
    *,
    smart: bool = True,
    findings: bool = True,
    store: SnapshotStore | None = None,
    check_max_age_days: float = DEFAULT_MAX_AGE_DAYS,
) -> dict[str, Any]:
    """``raidman report --json``: the model plus per-disk ``smart``, per-array ``syncs`` (from the
    snapshot database), each member's ``superblock`` (app.plans.superblocks) and the audit's
    ``findings``. Blocking: it runs smartctl, mdadm --examine and the audit."""
    out = machine_to_json(machine)
    add_superblocks_json(out, read_superblocks(machine, backend), machine)
    readings: dict[str, SmartReading] = {}
    if smart:
        readings = read_smart(backend, machine)
        for d in out["disks"]:
            r = readings.get(d["name"])
            d["smart"] = None if r is None else smart_json(r)
    # each array's rebuild risk and each disk's workload ledger (app.report_risk)
    add_json(out, risks(backend, machine, readings), disk_workloads(backend, machine, readings))
    # a syncing raid LV's speed and ETA: a second look at its dm-raid target (app.report_lvm)
    lv_syncs = raid_syncs(backend, machine)
    out["lvm"]["lvs"] = [lv_to_json(lv, lv_syncs.get(lv.dm_name)) for lv in machine.lvs]
    # the chunk benchmarks kept by `raidman apply` (app.plans.builders.benchmark), newest first
    out["benchmarks"] = store.benchmarks() if store is not None else []
    if store is not None:
        for a in out["arrays"]:
            a["syncs"] = syncs_json(store, a["name"], a.get("uuid"))
            a["checks"] = checks_json(store, a["name"], a.get("uuid"))
        out["notes"].extend(
            {"source": "wear", "message": n, "severity": "warning"} for n in store.notes
        )
    if findings:
        found = report_findings(
            backend, machine, readings, store, check_max_age_days=check_max_age_days
        )
        out["findings"] = [f.to_json() for f in found]
    return out


def report_findings(
    backend: Backend,
    machine: Machine,
    readings: Mapping[str, SmartReading],
    store: SnapshotStore | None,
    store_lock: AbstractContextManager[Any] | None = None,
    *,
    check_max_age_days: float = DEFAULT_MAX_AGE_DAYS,
) -> tuple[Finding, ...]:
    """The audit as both reports and the TUI give it: with the SMART readings they show and the
    sync speeds the wear database recorded (one call, so the text, the JSON and the TUI list the
    same findings). ``store_lock`` is held only while the database is read, never while the
    audit's tools run."""
    speeds: dict[str, int] = {}
    history: list[Finding] = []
    crc: dict[str, int] = {}
    if store is not None:
        with store_lock if store_lock is not None else nullcontext():
            speeds = recorded_sync_speeds(store, machine)
            history = check_findings(store, machine, backend.now(), max_age_days=check_max_age_days)
            crc = first_crc_counts(store, readings)
    since: dict[str, tuple[float, str]] = {}
    if machine.degraded_arrays:  # how long: md's failure line in this boot's kernel log
        since = degraded_since(read_kernel_log(backend), machine)
    inputs = dataclasses.replace(
        gather(backend, machine),
        smart=dict(readings),
        sync_speed_kib_s=speeds,
        smart_crc_before=crc,
        degraded_since=since,
        now=backend.now(),
    )
    found = audit(machine, inputs)
    return tuple(sorted((*found, *history), key=lambda f: f.sort_key()))


def full_report_text(
    backend: Backend,
    machine: Machine,
    *,
    smart: bool = True,
    findings: bool = True,
    store: SnapshotStore | None = None,
    check_max_age_days: float = DEFAULT_MAX_AGE_DAYS,
) -> str:
    """``raidman report``: the text form of what ``--json`` reports — the model, each disk's SMART
    health and bytes written, the findings, and the wear database's notes. Blocking."""
    readings = read_smart(backend, machine) if smart else None
    sb_lines = superblock_lines(read_superblocks(machine, backend), machine)
    sections = (
        ("Rebuild risk", risk_text(risks(backend, machine, readings or {}))),
        ("Workload", workload_text(disk_workloads(backend, machine, readings or {}))),
    )
    return machine_to_text(
        machine,
        smart=readings,
        sections=sections,
        lv_syncs=raid_syncs(backend, machine),
        findings=report_findings(
            backend, machine, readings or {}, store, check_max_age_days=check_max_age_days
        )
        if findings
        else None,
        notes=[f"wear: {n}" for n in store.notes] if store is not None else (),
        recorded=syncs_text(store, [(a.name, a.uuid) for a in machine.arrays], backend.now())
        if store is not None
        else (),
    ) + ("Superblocks:\n" + "\n".join(sb_lines) + "\n" if sb_lines else "")
