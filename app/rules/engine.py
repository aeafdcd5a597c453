"""Runs every rule module over a Machine + AuditInputs and returns the findings, worst first."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from app.model.devices import Machine
from app.rules import (
    alerts,
    alignment,
    array_health,
    cohort,
    crypt,
    discard,
    fs_geometry,
    fstab,
    lvm_raid,
    md,
    queue,
    smart,
    smart_logs,
    ssd,
)
from app.rules.finding import Finding
from app.rules.inputs import AuditInputs

Rule = Callable[[Machine, AuditInputs], Iterable[Finding]]

RULES: tuple[tuple[str, Rule], ...] = (
    ("alignment", alignment.check),
    ("optimal I/O", alignment.check_arrays),
    ("md", md.check),
    ("array health", array_health.check),
    ("cohorts", cohort.check),
    ("alerts", alerts.check),
    ("fs_geometry", fs_geometry.check),
    ("discard", discard.check),
    ("crypt", crypt.check),
    ("LVM RAID", lvm_raid.check),
    ("fstab", fstab.check),
    ("queue", queue.check),
    ("ssd", ssd.check),
    ("smart", smart.check),
    ("smart_logs", smart_logs.check),
)


def _run(name: str, rule: Rule, machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    try:
        yield from list(rule(machine, inputs))
    except Exception as e:  # one broken rule must not hide the others' findings
        yield Finding(
            "advice",
            "audit-rule-failed",
            "",
            f"The {name} checks failed",
            f"{type(e).__name__}: {e}. The other checks ran; please report this.",
        )


def audit(machine: Machine, inputs: AuditInputs | None = None) -> tuple[Finding, ...]:
    """All findings, sorted by severity (error, warning, advice), then device, then code."""
    inputs = inputs if inputs is not None else AuditInputs()
    seen: set[tuple[str, str, str]] = set()
    out: list[Finding] = []
    for name, rule in RULES:
        for f in _run(name, rule, machine, inputs):
            k = (f.code, f.device, f.title)
            if k in seen:
                continue
            seen.add(k)
            out.append(f)
    out.sort(key=Finding.sort_key)
    return tuple(out)
