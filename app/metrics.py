"""Prometheus metrics in node_exporter's textfile-collector format (``raidman metrics``,
``raidman monitor --textfile-dir DIR``).

Conventions (https://prometheus.io/docs/practices/naming/ and node_exporter's own md/diskstats
collectors): every name starts with ``raidman_``, values are in base units (bytes, seconds,
ratios 0..1), counters end in ``_total``, every family has ``# HELP`` and ``# TYPE`` lines, no
sample carries a timestamp (the textfile collector refuses them), label values are escaped
(``\\``, ``"``, newline). States are state sets: one series per possible state, the current one 1,
the others 0, so an alert can match ``{action="recover"} == 1``.

Domain only: no Textual. Everything read from the system comes through a ``Backend``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app import statefiles
from app.backend import Backend
from app.model import Machine
from app.model.devices import MdArray
from app.model.live import DiskIO
from app.model.smart import SmartReading
from app.model.smart_units import bytes_written, endurance_used_percent
from app.rules.engine import audit
from app.rules.finding import Finding
from app.rules.inputs import gather
from app.statefiles import StateFileError
from app.wear.delta import MemberWear, sync_wear
from app.wear.records import Snapshot, SyncEvent
from app.wear.snapshots import SnapshotStore

TEXTFILE_NAME = "raidman.prom"  # node_exporter reads DIR/*.prom

# md's sync_action words (Documentation/admin-guide/md.rst) plus raidman's pending/delayed
SYNC_ACTIONS = (
    "idle",
    "resync",
    "recover",
    "check",
    "repair",
    "reshape",
    "frozen",
    "pending",
    "delayed",
)
# MdMember.role words
MEMBER_STATES = ("in_sync", "rebuilding", "spare", "faulty", "journal", "replacement", "unknown")


# ---- the exposition format ------------------------------------------------------------------
def escape_label(value: str) -> str:
    """A label value as the text format wants it: backslash, double quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(v: float) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


Labels = tuple[tuple[str, str], ...]


@dataclass
class Family:
    name: str
    help: str
    type: str = "gauge"  # gauge | counter
    samples: list[tuple[Labels, float]] = field(default_factory=list)

    def add(self, value: float | None, **labels: str | None) -> None:
        """One series; ``None`` values are left out (unknown is absent, never 0)."""
        if value is None:
            return
        self.samples.append((tuple((k, v or "") for k, v in labels.items()), value))

    def render(self) -> str:
        lines = [f"# HELP {self.name} {escape_help(self.help)}", f"# TYPE {self.name} {self.type}"]
        seen: set[Labels] = set()
        for labels, value in self.samples:
            if labels in seen:  # one series per label set, whatever the input held twice
                continue
            seen.add(labels)
            lab = ",".join(f'{k}="{escape_label(v)}"' for k, v in labels)
            lines.append(
                f"{self.name}{{{lab}}} {format_value(value)}"
                if lab
                else f"{self.name} {format_value(value)}"
            )
        return "\n".join(lines) + "\n"


def render(families: Iterable[Family]) -> str:
    """The text exposition of every family that has at least one sample."""
    return "".join(f.render() for f in families if f.samples)


# ---- what goes in ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DiskHealth:
    """One disk's SMART figures, from a fresh reading or from the latest stored snapshot."""

    available: bool
    healthy: bool | None = None  # PASSED -> True, FAILED -> False, unknown -> None
    bytes_written: int | None = None  # the device's own counter, converted to bytes
    wear_used_percent: int | None = None

    @classmethod
    def from_reading(cls, r: SmartReading) -> DiskHealth:
        if not r.available:
            return cls(False)
        w = bytes_written(r)
        return cls(True, _healthy(r.health), w.bytes if w else None, endurance_used_percent(r))

    @classmethod
    def from_snapshot(cls, s: Snapshot) -> DiskHealth:
        h = s.counters.get("health")
        e = s.counters.get("endurance_used")  # older snapshots have only wear_used
        used = e if isinstance(e, int) else s.wear_used
        return cls(True, _healthy(h if isinstance(h, str) else None), s.bytes_written, used)


def _healthy(word: str | None) -> bool | None:
    if not word:
        return None
    w = word.strip().upper()
    if w in ("PASSED", "OK", "PASS"):
        return True
    if w in ("FAILED", "FAIL"):
        return False
    return None


@dataclass(frozen=True)
class MetricsInput:
    machine: Machine
    disk_io: Mapping[str, DiskIO] = field(default_factory=dict)
    health: Mapping[str, DiskHealth] = field(default_factory=dict)  # by disk kernel name
    syncs: Sequence[tuple[str, str | None, str, MemberWear]] = ()  # (array, uuid, action, wear)
    findings: Sequence[Finding] | None = None  # None: the audit did not run


# ---- the families ---------------------------------------------------------------------------
def _array_labels(a: MdArray) -> dict[str, str | None]:
    return {"array": a.name, "uuid": a.uuid, "level": a.level}


def collect(inp: MetricsInput) -> list[Family]:
    m = inp.machine
    f_degraded = Family(
        "raidman_md_degraded", "Number of missing or failed devices md counts (md/degraded)."
    )
    f_required = Family("raidman_md_disks_required", "Devices the array is made of (raid_disks).")
    f_disks = Family(
        "raidman_md_disks",
        "Member devices of the array by state (active as mdstat's [n/m] counts them, "
        "failed, spare, rebuilding).",
    )
    f_size = Family("raidman_md_size_bytes", "Usable size of the array in bytes.")
    f_action = Family(
        "raidman_md_sync_action",
        "The array's background activity: 1 for the current sync_action, 0 for the others.",
    )
    f_done = Family("raidman_md_sync_completed_bytes", "Bytes the running sync has done.")
    f_total = Family("raidman_md_sync_total_bytes", "Bytes the running sync has to do in all.")
    f_speed = Family(
        "raidman_md_sync_speed_bytes_per_second", "The kernel's current sync speed in bytes/s."
    )
    f_eta = Family(
        "raidman_md_sync_remaining_seconds",
        "Seconds until the running sync ends at the current speed (the kernel's finish=).",
    )
    f_mismatch = Family(
        "raidman_md_mismatch_bytes",
        "md/mismatch_cnt in bytes (it counts 512-byte sectors): what the last check or repair "
        "found inconsistent.",
    )
    f_member = Family(
        "raidman_md_member_state",
        "State of each member of an array: 1 for the current state, 0 for the others.",
    )
    f_member_err = Family(
        "raidman_md_member_errors", "Read errors md corrected on the member (md/dev-*/errors)."
    )
    for a in m.arrays:
        if a.is_container:
            continue
        al = _array_labels(a)
        f_degraded.add(a.degraded, **al)
        f_required.add(a.raid_disks, **al)
        roles = [mem.role for mem in a.members]
        # "active" as mdstat's [n/m] counts it: m = raid_disks - degraded (md.c md_seq_show),
        # so a member still being rebuilt is not active yet: it is "rebuilding"
        active = (
            a.raid_disks - a.degraded
            if a.raid_disks is not None
            else sum(1 for r in roles if r == "in_sync")
        )
        f_disks.add(max(0, active), **al, state="active")
        f_disks.add(roles.count("faulty"), **al, state="failed")
        f_disks.add(roles.count("spare"), **al, state="spare")
        building = sum(1 for r in roles if r in ("rebuilding", "replacement"))
        f_disks.add(building, **al, state="rebuilding")
        f_size.add(a.size_bytes, **al)
        s = a.sync
        current = s.action if s is not None else "idle"
        for act in SYNC_ACTIONS if current in SYNC_ACTIONS else (*SYNC_ACTIONS, current):
            f_action.add(1 if act == current else 0, **al, action=act)
        if s is not None and s.active:
            if s.done_sectors is not None:
                f_done.add(s.done_sectors * 512, **al)
            if s.total_sectors is not None:
                f_total.add(s.total_sectors * 512, **al)
            if s.speed_kib_s is not None:
                f_speed.add(s.speed_kib_s * 1024, **al)
            eta = s.eta_s
            f_eta.add(None if eta is None else round(eta, 1), **al)
        if s is not None:
            f_mismatch.add(None if s.mismatch_cnt is None else s.mismatch_cnt * 512, **al)
        for mem in a.members:
            disk = (m.disks_under(mem.device) or (mem.device,))[0]
            ml = {"array": a.name, "uuid": a.uuid, "member": mem.device, "disk": disk}
            role = mem.role if mem.role in MEMBER_STATES else "unknown"
            for st in MEMBER_STATES:
                f_member.add(1 if st == role else 0, **ml, state=st)
            f_member_err.add(mem.errors, **ml)

    f_dsize = Family("raidman_disk_size_bytes", "Size of the disk in bytes.")
    f_dev_w = Family(
        "raidman_disk_device_written_bytes_total",
        "Bytes written as the device's own SMART counter reports them (lifetime).",
        "counter",
    )
    f_kern_w = Family(
        "raidman_disk_kernel_written_bytes_total",
        "Bytes the kernel has written to the disk since boot (/proc/diskstats).",
        "counter",
    )
    f_smart_ok = Family(
        "raidman_disk_smart_available", "1 if SMART could be read from the disk, else 0."
    )
    f_health = Family(
        "raidman_disk_smart_healthy", "SMART overall health: 1 passed, 0 failed (absent: unknown)."
    )
    f_wear = Family(
        "raidman_disk_endurance_used_ratio",
        "Share of the rated endurance used (1 = 100 %): NVMe percentage_used, else the larger of "
        "the ATA wear attribute and bytes written against the model's rated TBW.",
    )
    for d in m.disks:
        if d.kind != "disk":
            continue
        dl = {"disk": d.name, "serial": d.serial, "model": d.model}
        f_dsize.add(d.size_bytes, **dl)
        io = inp.disk_io.get(d.name)
        if io is not None:
            f_kern_w.add(io.write_bytes, **dl)
        h = inp.health.get(d.name)
        if h is None:
            continue
        f_smart_ok.add(1 if h.available else 0, **dl)
        if h.healthy is not None:
            f_health.add(1 if h.healthy else 0, **dl)
        f_dev_w.add(h.bytes_written, **dl)
        if h.wear_used_percent is not None:
            f_wear.add(h.wear_used_percent / 100, **dl)

    f_sync_w = Family(
        "raidman_sync_written_bytes",
        "Bytes written to a member during the last recorded sync of that kind (SMART counters "
        "at the sync's start and end; while it runs, up to now).",
    )
    f_sync_cap = Family(
        "raidman_sync_member_capacity_bytes", "Capacity of the member's disk, for ratios."
    )
    f_sync_start = Family("raidman_sync_start_time_seconds", "Unix time the recorded sync started.")
    f_sync_run = Family("raidman_sync_running", "1 while the recorded sync is still running.")
    for array, uuid, action, mw in inp.syncs:
        sl = {
            "array": array,
            "uuid": uuid,
            "action": action,
            "member": mw.member.device,
            "disk": mw.member.disk,
        }
        f_sync_w.add(mw.bytes_written, **sl)
        f_sync_cap.add(mw.capacity_bytes, **sl)
        f_sync_start.add(mw.start.ts if mw.start else None, **sl)
        f_sync_run.add(1 if mw.running else 0, **sl)

    f_find = Family(
        "raidman_finding",
        "An audit finding (alignment, tuning, health): 1 while it holds.",
    )
    f_audit = Family("raidman_audit_ran", "1 if the audit ran for this output, else 0.")
    if inp.findings is not None:
        f_audit.add(1)
        for fd in inp.findings:
            f_find.add(1, code=fd.code, severity=fd.severity, device=fd.device)
    else:
        f_audit.add(0)
    f_notes = Family("raidman_probe_notes", "Things the probe could not do, by severity.")
    for sev in ("info", "warning", "error"):
        f_notes.add(sum(1 for n in m.notes if n.severity == sev), severity=sev)

    return [
        f_degraded,
        f_required,
        f_disks,
        f_size,
        f_action,
        f_done,
        f_total,
        f_speed,
        f_eta,
        f_mismatch,
        f_member,
        f_member_err,
        f_dsize,
        f_dev_w,
        f_kern_w,
        f_smart_ok,
        f_health,
        f_wear,
        f_sync_w,
        f_sync_cap,
        f_sync_start,
        f_sync_run,
        f_find,
        f_audit,
        f_notes,
    ]


def recorded_syncs(
    store: SnapshotStore, machine: Machine
) -> list[tuple[str, str | None, str, MemberWear]]:
    """Per array, action and member: the wear of the LAST recorded sync of that action (one
    series per label set; older syncs are in ``raidman report --json``)."""
    out: list[tuple[str, str | None, str, MemberWear]] = []
    names = [a.name for a in machine.arrays if not a.is_container]
    for name in names:
        a = machine.array(name)
        latest: dict[str, SyncEvent] = {}
        for ev in store.syncs_for(name):  # oldest first: later ones overwrite
            latest[ev.action] = ev
        for ev in latest.values():
            sw = sync_wear(store, ev)
            for mw in sw.members:
                out.append((name, a.uuid if a else None, sw.sync.action, mw))
    return out


def health_from_store(store: SnapshotStore, machine: Machine) -> dict[str, DiskHealth]:
    """The latest stored SMART snapshot of each disk (what ``raidman monitor`` records)."""
    out: dict[str, DiskHealth] = {}
    for d in machine.disks:
        if d.kind != "disk":
            continue
        snap = store.latest_snapshot(d.serial or f"dev:{d.name}")
        if snap is not None:
            out[d.name] = DiskHealth.from_snapshot(snap)
    return out


def gather_input(
    backend: Backend,
    machine: Machine,
    store: SnapshotStore | None,
    *,
    smart: str = "live",
    findings: bool = True,
) -> MetricsInput:
    """Read what the metrics need. ``smart``: "live" runs smartctl per disk, "store" uses the
    latest snapshot ``raidman monitor`` recorded (cheap, for every cycle), "none" leaves it out.
    Blocking."""
    try:
        io = {d.name: d for d in backend.sample().disk_io}
    except Exception:  # the kernel's counters are a bonus; the rest must still be written
        io = {}
    health: dict[str, DiskHealth] = {}
    if smart == "live":
        for d in machine.disks:
            if d.kind != "disk":
                continue
            try:
                health[d.name] = DiskHealth.from_reading(backend.smart(d.name))
            except Exception:
                health[d.name] = DiskHealth(False)
    elif smart == "store" and store is not None:
        health = health_from_store(store, machine)
    found = audit(machine, gather(backend, machine)) if findings else None
    return MetricsInput(
        machine=machine,
        disk_io=io,
        health=health,
        syncs=recorded_syncs(store, machine) if store is not None else (),
        findings=found,
    )


def metrics_text(
    backend: Backend,
    store: SnapshotStore | None,
    *,
    smart: str = "live",
    findings: bool = True,
) -> str:
    """``raidman metrics``: one probe, the whole exposition."""
    machine = backend.probe()
    return render(collect(gather_input(backend, machine, store, smart=smart, findings=findings)))


class TextfileWriter:
    """What ``raidman monitor --textfile-dir DIR`` calls every cycle: at most every
    ``every_s`` a probe and the file rewritten; the audit (it runs tools) at most every
    ``audit_every_s``, its last result reused in between. SMART comes from the snapshot store
    the monitor fills, so no smartctl runs here."""

    def __init__(
        self,
        backend: Backend,
        store: SnapshotStore | None,
        directory: str | os.PathLike[str],
        *,
        every_s: float = 15.0,
        audit_every_s: float = 300.0,
    ) -> None:
        self.backend = backend
        self.store = store
        self.directory = Path(directory)
        self.every_s = every_s
        self.audit_every_s = audit_every_s
        self._last: float | None = None
        self._last_audit: float | None = None
        self._findings: Sequence[Finding] | None = None

    def tick(self) -> Path | None:
        now = self.backend.now()
        if self._last is not None and now - self._last < self.every_s:
            return None
        self._last = now
        machine = self.backend.probe()
        if self._last_audit is None or now - self._last_audit >= self.audit_every_s:
            try:
                self._findings = audit(machine, gather(self.backend, machine))
            except Exception:
                self._findings = None
            self._last_audit = now
        inp = gather_input(self.backend, machine, self.store, smart="store", findings=False)
        inp = MetricsInput(inp.machine, inp.disk_io, inp.health, inp.syncs, self._findings)
        return write_textfile(self.directory, render(collect(inp)))


# ---- writing the textfile -------------------------------------------------------------------
class TextfileError(Exception):
    pass


_SURROGATE = re.compile("[\ud800-\udfff]")


def write_textfile(directory: str | os.PathLike[str], text: str, name: str = TEXTFILE_NAME) -> Path:
    """Write ``DIR/name`` the one way raidman writes a file (:func:`app.statefiles.write_text`):
    a temp file in DIR (O_EXCL, not a ``.prom`` name, so the collector never reads it
    half-written), fsync, mode 0644, rename over the old one, all relative to one descriptor of
    DIR. Refuses a DIR that is a symlink or that everyone can write into (not sticky), and a
    ``name`` that is a symlink, a FIFO or another user's file. A lone surrogate (a label read
    from a device that is not UTF-8) is written as U+FFFD: the collector wants UTF-8."""
    d = Path(directory)
    if "/" in name or not name.endswith(".prom"):
        raise TextfileError(f"bad file name {name!r}")
    if os.path.islink(d):
        raise TextfileError(f"{d} is a symlink; give the real directory")
    text = _SURROGATE.sub("\ufffd", text)
    try:
        statefiles.write_text(d / name, text, mode=0o644, what="metrics file", output=True)
    except StateFileError as e:
        raise TextfileError(str(e)) from None
    return d / name
