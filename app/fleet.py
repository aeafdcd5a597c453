"""Many machines at a glance: one line per host, and one line for the fleet.

"fleet2: degraded: md3 (raid5, 1 missing)", "fleet1: syncing: md127 resync 16.3% …, ETA 20m",
"fleet3: unreachable: no answer from fleet3 within 8 s". What a host's line says comes from the
machine roll-up (``app.rollup``) and, once the host has been audited, its worst finding. UI-free:
the TUI's hosts view and its banner use it; a host's reason for being unreachable (ssh's own
words: untrusted) is shown with control characters escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.model.devices import Machine
from app.plans.plan import escape_controls
from app.rollup import degraded_part, rollup, syncing_part
from app.rules.finding import Finding


@dataclass(frozen=True, slots=True)
class HostStatus:
    """What is known of one host: its last probe, why it could not be reached (the last try
    failed; the machine, if any, is older), and its findings once audited (None: not yet)."""

    host: str
    machine: Machine | None = None
    unreachable: str | None = None
    findings: tuple[Finding, ...] | None = None

    @property
    def degraded(self) -> bool:
        return self.unreachable is None and bool(rollup(self.machine).degraded)

    @property
    def syncing(self) -> bool:
        return self.unreachable is None and bool(rollup(self.machine).syncing)


def worst_finding(findings: Sequence[Finding] | None) -> Finding | None:
    if not findings:
        return None
    return min(findings, key=lambda f: f.sort_key())


def finding_text(f: Finding) -> str:
    where = f" ({f.device})" if f.device else ""
    return escape_controls(f"{f.severity}: {f.title}{where}")


def host_line(s: HostStatus) -> str:
    """The roll-up of one host, one line: unreachable, probing, or what is wrong (degraded
    arrays, syncing arrays with the slowest ETA, the worst finding), else that all is calm."""
    if s.unreachable is not None:
        return "unreachable: " + escape_controls(s.unreachable)
    if s.machine is None:
        return "probing…"
    r = rollup(s.machine)
    parts: list[str] = []
    if r.degraded:
        parts.append("degraded: " + degraded_part(r))
    if r.syncing:
        parts.append("syncing: " + syncing_part(r))
    worst = worst_finding(s.findings)
    if worst is not None and worst.severity != "advice":
        parts.append(finding_text(worst))
    if parts:
        return " · ".join(parts)
    arrays = [a for a in s.machine.arrays if not a.is_container]
    n = len(arrays)
    return f"{n} array{'s' if n != 1 else ''}, none degraded or syncing" if n else "no md arrays"


def _names(hosts: Sequence[str]) -> str:
    return ", ".join(hosts)


def fleet_line(statuses: Sequence[HostStatus]) -> str:
    """Which hosts have a degraded array, which are syncing, which cannot be reached."""
    degraded = [s.host for s in statuses if s.degraded]
    syncing = [s.host for s in statuses if s.syncing]
    unreachable = [s.host for s in statuses if s.unreachable is not None]
    waiting = [s.host for s in statuses if s.machine is None and s.unreachable is None]
    parts = []
    if degraded:
        parts.append(f"degraded: {_names(degraded)}")
    if syncing:
        parts.append(f"syncing: {_names(syncing)}")
    if unreachable:
        parts.append(f"unreachable: {_names(unreachable)}")
    if waiting:
        parts.append(f"probing: {_names(waiting)}")
    n = len(statuses)
    head = f"{n} host{'s' if n != 1 else ''}"
    return f"{head} · " + " · ".join(parts) if parts else f"{head}, all calm"


def others_line(statuses: Sequence[HostStatus], shown: str | None) -> str | None:
    """The trouble on the hosts other than ``shown`` (the one open), for that host's banner:
    "other hosts: degraded fleet2 · unreachable gone"; None when they are calm."""
    others = [s for s in statuses if s.host != shown]
    parts = []
    for what, hosts in (
        ("degraded", [s.host for s in others if s.degraded]),
        ("syncing", [s.host for s in others if s.syncing]),
        ("unreachable", [s.host for s in others if s.unreachable is not None]),
    ):
        if hosts:
            parts.append(f"{what} {_names(hosts)}")
    return "other hosts: " + " · ".join(parts) if parts else None


def severity(s: HostStatus) -> str:
    """ "error" (unreachable or degraded), "warning" (syncing), "ok" or "unknown" (not probed):
    how the hosts view colours the host."""
    if s.unreachable is not None or s.degraded:
        return "error"
    if s.syncing:
        return "warning"
    return "unknown" if s.machine is None else "ok"


def unreachable_reason(backend: object) -> str | None:
    """Why the last probe through an ssh source could not reach its host (None: it did, or
    the backend is not remote). An ssh probe does not raise: it returns a machine with notes."""
    source = getattr(backend, "source", None)
    reason = getattr(source, "unreachable", None)
    return reason if isinstance(reason, str) else None
