"""A SMART reading in full: the attribute table, the NVMe health log, the self-test and error
logs, as JSON (``raidman report --json``: ``disks[].smart``) and as the rows the TUI's Wear
view and ``raidman report`` print. One place for both, so they say the same."""

from __future__ import annotations

from typing import Any

from app.model.smart import SelfTest, SmartAttribute, SmartReading

# the NVMe health log fields an admin reads first (smartctl JSON names), in this order
NVME_HEALTH = (
    ("critical_warning", "critical warning"),
    ("media_errors", "media and data integrity errors"),
    ("percentage_used", "percentage used"),
    ("available_spare", "available spare %"),
    ("available_spare_threshold", "available spare threshold %"),
    ("unsafe_shutdowns", "unsafe shutdowns"),
    ("num_err_log_entries", "error log entries"),
    ("power_cycles", "power cycles"),
    ("power_on_hours", "power-on hours"),
    ("temperature", "temperature"),
)


def attribute_mark(a: SmartAttribute) -> str:
    """ "FAILING" at/below its threshold, "pre-fail" for the drive's pre-fail ones, else ""."""
    if a.failing:
        return "FAILING"
    return "pre-fail" if a.prefail else ""


def attribute_json(a: SmartAttribute) -> dict[str, Any]:
    return {
        "id": a.id,
        "name": a.name,
        "value": a.value,
        "worst": a.worst,
        "thresh": a.thresh,
        "raw": a.raw,
        "raw_string": a.raw_string,
        "prefail": a.prefail,
        "failing": a.failing,
    }


def self_test_json(t: SelfTest) -> dict[str, Any]:
    return {
        "kind": t.kind,
        "status": t.status,
        "passed": t.passed,
        "lifetime_hours": t.lifetime_hours,
        "lba_first_error": t.lba_first_error,
        "remaining_percent": t.remaining_percent,
    }


def last_self_test(r: SmartReading) -> SelfTest | None:
    """The newest finished entry of the self-test log (passed or failed), if any."""
    for t in r.self_tests or ():
        if t.passed is not None:
            return t
    return None


def self_test_text(r: SmartReading) -> str:
    """One line for the tree and the Details: running / passed / failed at LBA / never run."""
    if r.self_test_remaining is not None:
        return f"self-test running, {r.self_test_remaining}% left"
    if r.self_tests is None:
        return "self-test log not read"
    t = last_self_test(r)
    if t is None:
        return "no self-test ever run" if not r.self_tests else "no self-test completed"
    when = ""
    if t.lifetime_hours is not None:
        when = f" at {t.lifetime_hours} h"
        if r.power_on_hours is not None and r.power_on_hours >= t.lifetime_hours:
            when += f" ({r.power_on_hours - t.lifetime_hours} h ago)"
    if t.passed:
        return f"last self-test ({t.kind}) passed{when}"
    lba = f" at LBA {t.lba_first_error}" if t.lba_first_error is not None else ""
    return f"last self-test ({t.kind}) FAILED{lba}{when}: {t.status}"


def smart_tables_json(r: SmartReading) -> dict[str, Any]:
    return {
        "protocol": r.protocol,
        "attributes": [attribute_json(a) for a in r.attributes],
        "nvme_health": {k: r.nvme[k] for k, _ in NVME_HEALTH if k in r.nvme} or None,
        "self_tests": None if r.self_tests is None else [self_test_json(t) for t in r.self_tests],
        "self_test_remaining": r.self_test_remaining,
        "last_self_test": self_test_text(r) if r.available else None,
        "error_count": r.error_count,
        "errors": [{"lifetime_hours": e.lifetime_hours, "text": e.text} for e in r.errors],
    }
