"""SMART as findings: a failed health check, pre-fail counters, endurance used.

Article 000 (/work/shared/seeds/000_*.txt) read smartctl after a RAID-5 rebuild and found one
resync had written a whole SSD and cost a percent of Wear_Leveling_Count; these findings put
the same counters next to the alignment audit. Readings come from ``AuditInputs.smart`` (filled
by callers that already read SMART, e.g. ``raidman report``; the audit itself does not run
smartctl).
"""

from __future__ import annotations

from collections.abc import Iterator

from app.model.devices import Machine
from app.model.smart import SmartReading
from app.model.smart_units import tbw_used, wear_used_percent
from app.rules.finding import Finding, FindingSeverity
from app.rules.inputs import AuditInputs

# ATA attributes that count sectors the drive could not handle; any non-zero raw is a warning
PREFAIL_COUNTS = {
    5: "reallocated sectors",
    197: "sectors pending reallocation",
    198: "offline uncorrectable sectors",
}
CRC_ERRORS = 199  # UDMA_CRC_Error_Count: the link (cable, backplane), not the media
WEAR_WARN = 80
# bytes written against the model's rated TBW (app.model.endurance): share -> severity
TBW_LEVELS: tuple[tuple[int, FindingSeverity], ...] = (
    (100, "error"),
    (80, "warning"),
    (50, "advice"),
)


def replace_advice(machine: Machine, disk: str) -> str:
    """How to replace ``disk`` as its members stand: mdadm --replace copies from a working
    member (mdadm(8) --replace; md.c state_store sets want_replacement only on a working rdev),
    so a member already faulty (or gone) is replaced by a recovery onto a new disk instead."""
    found = [
        (a, m)
        for a in machine.arrays
        for m in a.members
        if m.device == disk or disk in machine.disks_under(m.device)
    ]
    if not found:
        return "Back up, and replace it."
    a, m = found[0]
    cmd = f"raidman plan member replace --array {a.name} --device {m.device} --with NEW"
    busy = [x.device for x in a.members if x.role == "rebuilding"]
    if not m.working and busy:
        return (
            f"Its member {m.device} of {a.name} is already {m.role} and {a.name} rebuilds onto "
            f"{busy[0]}: once that ends, retire this disk (raidman plan retire --device {disk}) "
            f"and give {a.name} a new spare (raidman plan member spare --array {a.name} "
            "--device NEW)."
        )
    if not m.working:
        return (
            f"Its member {m.device} of {a.name} is already {m.role}: nothing can be copied from "
            f"it, so replace it by adding a new disk — the rebuild goes onto it ({cmd}; "
            "mdadm --replace needs a working member)."
        )
    return f"Replace it ({cmd}): mdadm --replace keeps redundancy while copying."


def _role(machine: Machine, disk: str) -> str:
    arrays = machine.arrays_of_disk(disk)
    return f" (member of {', '.join(a.name for a in arrays)})" if arrays else ""


def _reading(machine: Machine, r: SmartReading) -> Iterator[Finding]:
    d = r.device
    role = _role(machine, d)
    if (r.health or "").upper() == "FAILED":
        yield Finding(
            "error",
            "smart-failed",
            d,
            f"{d}: SMART health check FAILED",
            f"{d}{role} reports its overall SMART health as FAILED: the drive itself predicts "
            f"failure. {replace_advice(machine, d)}",
        )
    for a in r.attributes:
        if a.failing:
            yield Finding(
                "error",
                "smart-attribute-failing",
                d,
                f"{d}: SMART attribute {a.id} {a.name} at its threshold",
                f"{d}{role}: attribute {a.id} {a.name} has the normalized value {a.value}, at "
                f"or below its failure threshold {a.thresh} (raw {a.raw_string or a.raw}).",
            )
    found = [
        (a, PREFAIL_COUNTS[a.id])
        for a in r.attributes
        if a.id in PREFAIL_COUNTS and a.raw is not None and a.raw > 0
    ]
    if found:
        what = "; ".join(f"{a.raw} {label} ({a.id} {a.name})" for a, label in found)
        yield Finding(
            "warning",
            "smart-prefail",
            d,
            f"{d}: {found[0][0].raw} {found[0][1]}",
            f"{d}{role} counts {what}. Growing counts precede failures; an md check "
            "(echo check > /sys/block/mdX/md/sync_action) makes the drive read every sector "
            "and md rewrite unreadable ones from redundancy.",
        )
    crc = r.attribute(CRC_ERRORS)
    if crc is not None and crc.raw:
        yield Finding(
            "advice",
            "smart-crc-errors",
            d,
            f"{d}: {crc.raw} interface CRC errors",
            f"{d}{role} counts {crc.raw} UDMA CRC errors: data corrupted on the cable or "
            "backplane, retried by the link. Reseat or replace the SATA cable — a member "
            "that drops out from a loose cable is rebuilt, and the rebuild rewrites the whole SSD.",
        )
    media = r.nvme.get("media_errors")
    if media:
        yield Finding(
            "warning",
            "smart-prefail",
            d,
            f"{d}: {media} NVMe media errors",
            f"{d}{role} reports {media} media and data integrity errors in its NVMe health log.",
        )
    crit = r.nvme.get("critical_warning")
    if crit:
        yield Finding(
            "error",
            "smart-failed",
            d,
            f"{d}: NVMe critical warning {crit:#x}",
            f"{d}{role} sets critical_warning {crit:#x} in its health log (spare below "
            "threshold, temperature, reliability degraded, read-only or backup failed).",
        )
    wear = wear_used_percent(r)
    if wear is not None and wear.used_percent >= WEAR_WARN:
        yield Finding(
            "error" if wear.used_percent >= 100 else "warning",
            "smart-wear",
            d,
            f"{d}: {wear.used_percent}% of rated endurance used",
            f"{d}{role} reports {wear.used_percent}% of its rated write endurance used "
            f"({wear.source}). Every full resync or rebuild without a bitmap rewrites a whole "
            "member (one RAID-5 resync writes an entire SSD); plan its replacement.",
        )


def _tbw(machine: Machine, r: SmartReading) -> Iterator[Finding]:
    """Host writes against the rated TBW, for drives without NVMe's own percentage_used."""
    if r.nvme.get("percentage_used") is not None:
        return
    used = tbw_used(r)
    if used is None:
        return
    pct = used.used_percent
    severity = next((sev for limit, sev in TBW_LEVELS if pct >= limit), None)
    if severity is None:
        return
    d = r.device
    beyond = (
        "past its rated endurance: the maker's warranty ends here and the flash may wear out"
        if pct >= 100
        else "plan its replacement before it reaches the rating"
    )
    yield Finding(
        severity,
        "smart-tbw",
        d,
        f"{d}: {used.text}",
        f"{d}{_role(machine, d)} ({used.rating.name}) has "
        f"{used.text} ({used.counter}); {beyond}. Each full resync or rebuild without a "
        f"bitmap writes a whole member. Rating: {used.rating.source}.",
    )


def check(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    for name in sorted(inputs.smart):
        r = inputs.smart[name]
        if r.available:
            yield from _reading(machine, r)
            yield from _tbw(machine, r)
