"""SMART logs as findings: a self-test never run, a failed one, interface CRC errors rising.

Pending and offline-uncorrectable sectors (ATA 197/198) are ``smart-prefail`` in
app/rules/smart.py; a standing CRC count is ``smart-crc-errors`` there. CRC errors *rising*
needs an earlier count: ``AuditInputs.smart_crc_before`` (the first one the state database
recorded for the disk's serial, from the session's SMART snapshots).
"""

from __future__ import annotations

from collections.abc import Iterator

from app.model.devices import Machine
from app.model.smart import SmartReading
from app.model.smart_tables import last_self_test
from app.plans.builders.smart_test import build_smart_test
from app.plans.geometry import PlanError
from app.rules.finding import Finding
from app.rules.inputs import AuditInputs
from app.rules.smart import CRC_ERRORS, replace_advice


def _role(machine: Machine, disk: str) -> str:
    arrays = machine.arrays_of_disk(disk)
    return f" (member of {', '.join(a.name for a in arrays)})" if arrays else ""


def _self_tests(machine: Machine, r: SmartReading) -> Iterator[Finding]:
    d = r.device
    if r.self_tests is None or r.self_test_remaining is not None:
        return  # log not read, or a test runs now: its result decides
    last = last_self_test(r)
    if last is not None and last.passed is False:
        lba = f" at LBA {last.lba_first_error}" if last.lba_first_error is not None else ""
        when = f" (at {last.lifetime_hours} power-on hours)" if last.lifetime_hours else ""
        yield Finding(
            "error",
            "smart-selftest-failed",
            d,
            f"{d}: last SMART self-test failed{lba}",
            f"{d}{_role(machine, d)}: its last {last.kind} self-test ended "
            f"'{last.status}'{lba}{when}. The drive found a sector it cannot read. "
            f"{replace_advice(machine, d)}",
        )
    elif not r.self_tests:
        try:
            fix = build_smart_test(machine, d, "short")
        except PlanError:
            fix = None
        yield Finding(
            "advice",
            "smart-selftest-never",
            d,
            f"{d}: no SMART self-test ever run",
            f"{d}{_role(machine, d)} has an empty self-test log: the drive has never checked "
            "itself. A short test takes about 2 minutes and changes nothing; a long one reads "
            "every sector (schedule one with smartd's -s option).",
            fix=fix,
        )


def _crc_rising(machine: Machine, r: SmartReading, inputs: AuditInputs) -> Iterator[Finding]:
    crc = r.attribute(CRC_ERRORS)
    before = inputs.smart_crc_before.get(r.device)
    if crc is None or crc.raw is None or before is None or crc.raw <= before:
        return
    d = r.device
    yield Finding(
        "warning",
        "smart-crc-rising",
        d,
        f"{d}: interface CRC errors rising ({before} -> {crc.raw})",
        f"{d}{_role(machine, d)}: UDMA_CRC_Error_Count went from {before} (first recorded) to "
        f"{crc.raw}: the link between the controller and the drive corrupts frames now. "
        "Reseat or replace the SATA cable (or the backplane slot) before the member drops out.",
    )


def check(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    for name in sorted(inputs.smart):
        r = inputs.smart[name]
        if r.available:
            yield from _self_tests(machine, r)
            yield from _crc_rising(machine, r, inputs)
