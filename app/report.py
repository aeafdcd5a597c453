"""The model as JSON (``raidman report --json``) and as plain text (``raidman report``).

Shape (every key always present; unknown values are ``null``)::

    {"host", "kernel", "taken_at", "is_root",
     "disks": [{"name", "model", "serial", "vendor", "wwn", "size_bytes", "logical_sector",
                "physical_sector", "min_io", "optimal_io", "alignment_offset", "rotational",
                "transport", "kind", "discard_granularity", "discard_max_bytes", "scheduler",
                "removable", "read_only", "partition_table", "ptuuid"}],
     "partitions": [{"name", "parent", "number", "start_sector", "size_bytes", "type",
                     "type_name", "label", "uuid", "alignment_offset"}],
     "arrays": [{"name", "level", "state", "chunk_bytes", "layout", "bitmap",
                 "members": [{"device", "slot", "state", "role", "errors",
                              "data_offset_sectors", "size_kib", "recovery_start"}],
                 "sync": {"action", "done_sectors", "total_sectors", "speed_kib_s", "eta_s",
                          "min_speed_kib_s", "max_speed_kib_s", "reshape_position",
                          "mismatch_cnt", "targets"} | null,
                 "size_bytes", "raid_disks", "metadata", "array_name", "uuid", "degraded",
                 "stripe_cache_size", "container", "member_index", "consistency_policy",
                 "read_only", "mismatch_cnt", "last_sync_action",
                 "syncs": [{"array", "array_uuid", "action", "start", "end", "outcome",
                            "fraction", "members": [{"device", "disk", "serial",
                            "kernel_bytes_written", "kernel_capacity_share", "bytes_written",
                            "smart_unit", "capacity_share", "wear_points"}]}]  (with the wear
                            database only)}],
     "lvm": {"pvs": [{"device", "vg", "size_bytes", "free_bytes", "pe_start", "uuid", "missing"}],
             "vgs": [{"name", "size_bytes", "free_bytes", "extent_size", "extent_count",
                      "free_count", "uuid", "pv_count", "lv_count"}],
             "lvs": [{"name", "vg", "size_bytes", "segtype", "attr", "kernel_name", "uuid",
                      "active", "hidden", "pool", "origin", "stripes", "stripe_size",
                      "data_percent", "devices"}]},
     "crypts": [{"name", "kernel_name", "backing", "type"}],
     "filesystems": [{"device", "fstype", "uuid", "label", "mountpoints", "size_bytes",
                      "used_bytes", "avail_bytes", "block_size", "stride", "stripe_width",
                      "sunit_bytes", "swidth_bytes"}],
     "edges": [[parent, child], ...],
     "notes": [{"source", "message", "severity"}]}

``sync`` is ``null`` when the array is idle. ``extra`` (e.g. ``{"findings": [...]}`` or
``{"smart": {"sda": {...}}}``) is merged at the top level. No Textual here.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from app.format import (
    array_summary,
    duration,
    human_bytes,
    member_marks,
    percent,
    speed,
)
from app.model.devices import Machine, MdArray, MdMember, SyncStatus
from app.rules.engine import audit
from app.rules.inputs import gather
from app.wear.report import smart_json, syncs_json
from app.wear.snapshots import SnapshotStore
from backends.base import Backend


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
        "metadata": a.metadata,
        "array_name": a.array_name,
        "uuid": a.uuid,
        "degraded": a.degraded,
        "stripe_cache_size": a.stripe_cache_size,
        "container": a.container,
        "member_index": a.member_index,
        "consistency_policy": a.consistency_policy,
        "read_only": a.read_only,
        "mismatch_cnt": a.mismatch_cnt,
        "last_sync_action": a.last_sync_action,
    }


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
        "arrays": [array_to_json(a) for a in m.arrays],
        "lvm": {
            "pvs": [_plain(pv) for pv in m.pvs],
            "vgs": [_plain(vg) for vg in m.vgs],
            "lvs": [_plain(lv) for lv in m.lvs],
        },
        "crypts": [_plain(c) for c in m.crypts],
        "filesystems": [_plain(f) for f in m.filesystems],
        "edges": [list(e) for e in m.edges],
        "notes": [_plain(n) for n in m.notes],
    }
    if extra:
        out.update(extra)
    return out


def machine_to_text(machine: Machine) -> str:
    """A compact human report: one line per device, grouped by layer."""
    m = machine
    lines = [f"{m.host}  kernel {m.kernel}" + ("" if m.is_root else "  (not root)")]
    if m.disks:
        lines.append("")
        lines.append("Disks")
        for d in m.disks:
            kind = {True: "HDD", False: "SSD"}.get(d.rotational) if d.rotational is not None else ""
            lines.append(
                f"  {d.name:<12} {human_bytes(d.size_bytes):>10}  {d.model or '?'}"
                f"  {d.transport or '?'} {kind}  sectors {d.logical_sector}/{d.physical_sector}"
                f"  io {d.min_io}/{d.optimal_io}"
            )
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
            lines.append(
                f"  {a.name:<8} {array_summary(a)}  {human_bytes(a.size_bytes)}"
                f"  state {a.array_state or '?'}  bitmap {a.bitmap or 'none'}"
            )
            for mem in a.members:
                slot = "-" if mem.slot is None else str(mem.slot)
                lines.append(
                    f"    slot {slot:>2}  {mem.device:<12} {mem.role} {member_marks(mem)}".rstrip()
                )
            s = a.sync
            if s is not None and s.active:
                lines.append(
                    f"    {s.action} {percent(s.fraction)}  speed {speed(s.speed_kib_s)}"
                    f"  ETA {duration(s.eta_s)}"
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
    if m.notes:
        lines.append("")
        lines.append("Notes")
        for n in m.notes:
            lines.append(f"  [{n.severity}] {n.source}: {n.message}")
    return "\n".join(lines) + "\n"


def full_report_json(
    backend: Backend,
    machine: Machine,
    *,
    smart: bool = True,
    findings: bool = True,
    store: SnapshotStore | None = None,
) -> dict[str, Any]:
    """``raidman report --json``: the model plus per-disk ``smart``, per-array ``syncs`` (from the
    snapshot database) and the audit's ``findings``. Blocking: it runs smartctl and the audit."""
    out = machine_to_json(machine)
    if smart:
        for d in out["disks"]:
            if d.get("kind", "disk") != "disk":
                d["smart"] = None
                continue
            try:
                d["smart"] = smart_json(backend.smart(d["name"]))
            except Exception as e:  # a backend error for one disk must not lose the report
                d["smart"] = {"available": False, "reason": f"SMART read failed: {e}"}
    if store is not None:
        for a in out["arrays"]:
            a["syncs"] = syncs_json(store, a["name"], a.get("uuid"))
        out["notes"].extend(
            {"source": "wear", "message": n, "severity": "warning"} for n in store.notes
        )
    if findings:
        out["findings"] = [f.to_json() for f in audit(machine, gather(backend, machine))]
    return out
