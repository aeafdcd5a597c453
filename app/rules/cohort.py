"""Cohorts inside one array: members of one model and firmware that are the same age (power-on
hours within :data:`HOURS_BOUND` of each other) or came off one production run (serials equal
but for their last :data:`SERIAL_TAIL` characters). Such drives wear out together, and a
firmware fault that strikes at a fixed power-on hour fails them at once; a rebuild after the
first failure loads the rest hardest. A cohort larger than the failures the array survives is
a warning, else advice. Readings come from ``AuditInputs.smart`` (model, firmware, hours,
serial); without SMART the kernel's model and serial are used, and age is unknown.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from app.model import levels
from app.model.devices import Machine, MdArray
from app.model.endurance import normalise
from app.rules.finding import Finding
from app.rules.inputs import AuditInputs

HOURS_BOUND = 720  # 30 days of power-on time: drives bought and installed together
SERIAL_TAIL = 4


@dataclass(frozen=True, slots=True)
class _Drive:
    member: str
    disk: str
    model: str  # normalised (the grouping key)
    shown: str  # as the drive says it
    firmware: str | None
    serial: str | None
    hours: int | None


def _drives(machine: Machine, a: MdArray, inputs: AuditInputs) -> list[_Drive]:
    out: list[_Drive] = []
    for m in a.members_by_slot:
        if m.role == "faulty":
            continue
        under = machine.disks_under(m.device)
        if len(under) != 1:
            continue
        d = machine.disk(under[0])
        r = inputs.smart.get(under[0])
        ok = r is not None and r.available
        model = (r.model if ok and r is not None else None) or (d.model if d else None)
        if not model:
            continue
        out.append(
            _Drive(
                m.device,
                under[0],
                normalise(model),
                model,
                r.firmware if ok and r is not None else None,
                (r.serial if ok and r is not None else None) or (d.serial if d else None),
                r.power_on_hours if ok and r is not None else None,
            )
        )
    return out


def _by_hours(group: list[_Drive]) -> list[_Drive]:
    """The largest set whose power-on hours lie within HOURS_BOUND of each other."""
    known = sorted((x for x in group if x.hours is not None), key=lambda x: x.hours or 0)
    best: list[_Drive] = []
    lo = 0
    for hi in range(len(known)):
        while (known[hi].hours or 0) - (known[lo].hours or 0) > HOURS_BOUND:
            lo += 1
        if hi - lo + 1 > len(best):
            best = known[lo : hi + 1]
    return best


def _by_serial(group: list[_Drive]) -> list[_Drive]:
    """The largest set whose serials are equal but for their last SERIAL_TAIL characters."""
    runs: dict[tuple[int, str], list[_Drive]] = {}
    for x in group:
        s = (x.serial or "").strip()
        if len(s) > SERIAL_TAIL + 3:
            runs.setdefault((len(s), s[:-SERIAL_TAIL]), []).append(x)
    return max(runs.values(), key=len, default=[])


def check(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    for a in machine.arrays:
        if a.is_container or a.level not in levels.REDUNDANT or not a.raid_disks:
            continue
        groups: dict[tuple[str, str | None], list[_Drive]] = {}
        for x in _drives(machine, a, inputs):
            groups.setdefault((x.model, x.firmware), []).append(x)
        for (_model, fw), group in groups.items():
            hours, serial = _by_hours(group), _by_serial(group)
            cohort = hours if len(hours) >= len(serial) else serial
            if len(cohort) < 2:
                continue
            yield _finding(a, fw, cohort, hours is cohort)


def _finding(a: MdArray, fw: str | None, cohort: list[_Drive], by_hours: bool) -> Finding:
    n = len(cohort)
    model = cohort[0].shown
    survives = levels.failures_survived(a.level, a.raid_disks or 0, a.layout)
    disks = ", ".join(x.disk for x in cohort)
    firmware = f"firmware {fw}" if fw else "firmware not reported"
    if by_hours:
        hs = [x.hours or 0 for x in cohort]
        why = (
            f"all at {hs[0]} power-on hours"
            if min(hs) == max(hs)
            else f"power-on hours {min(hs)}–{max(hs)}, within {max(hs) - min(hs)} h of each "
            f"other (the bound is {HOURS_BOUND} h)"
        )
    else:
        stem = (cohort[0].serial or "")[:-SERIAL_TAIL]
        why = f"serials from one run ({stem}…)"
    exposed = (
        f"more than the {survives} failure{'s' if survives != 1 else ''} "
        f"{levels.label(a.level)} survives"
        if n > survives
        else f"within the {survives} failures {levels.label(a.level)} survives"
    )
    return Finding(
        "warning" if n > survives else "advice",
        "md-cohort",
        a.name,
        f"{a.name}: {n} members are one cohort ({model})",
        f"{disks} in {a.name} are {model}, {firmware}, {why}: {n} drives, {exposed}. Drives "
        "of one model, firmware and age wear out together, a firmware fault that strikes at "
        "a fixed power-on hour fails them at once, and the rebuild after the first failure "
        "loads the others hardest. Stagger replacements (replace one or two now with another "
        "batch or model, not all at the end of their life), and mix batches or makers when "
        "buying.",
    )
