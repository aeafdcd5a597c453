"""One audit finding: what is wrong (or could be better), where, why, and the plan that fixes it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from app.plans.plan import Plan

FindingSeverity = Literal["error", "warning", "advice"]
SEVERITIES: tuple[FindingSeverity, ...] = ("error", "warning", "advice")
SEVERITY_RANK: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass(frozen=True, slots=True)
class Finding:
    """``fix`` is a plan that can be run as is (never destructive). A fix that would destroy
    data is described in ``detail`` and flagged by ``fix_destroys_data``; it is not offered
    as a plan."""

    severity: FindingSeverity
    code: str  # stable identifier, e.g. "partition-misaligned"
    device: str  # kernel name the finding concerns (or "" for machine-wide)
    title: str
    detail: str
    fix: Plan | None = None
    fix_destroys_data: bool = False

    def __post_init__(self) -> None:
        if self.severity not in SEVERITY_RANK:
            raise ValueError(f"unknown severity {self.severity!r}")
        if self.fix is not None and self.fix.destructive:
            raise ValueError(f"{self.code}: a destructive fix is never offered as a plan")

    @property
    def rank(self) -> int:
        return SEVERITY_RANK[self.severity]

    @property
    def key(self) -> tuple[str, str]:
        return (self.code, self.device)

    def sort_key(self) -> tuple[int, str, str]:
        return (self.rank, self.device, self.code)

    def to_json(self, *, with_plan: bool = False) -> dict[str, Any]:
        """The ``raidman report --json`` form. ``fix`` is the list of argv lists, or null.
        ``with_plan`` adds ``fix_plan`` (the full plan, with stdin values for ``tee`` steps)."""
        d: dict[str, Any] = {
            "severity": self.severity,
            "code": self.code,
            "device": self.device,
            "title": self.title,
            "detail": self.detail,
            "fix": None if self.fix is None else [list(s.argv) for s in self.fix.steps],
        }
        if with_plan:
            d["fix_plan"] = None if self.fix is None else self.fix.to_json()
            d["fix_destroys_data"] = self.fix_destroys_data
        return d


def worst(findings: tuple[Finding, ...] | list[Finding]) -> FindingSeverity | None:
    """The most severe severity among ``findings`` (for tree badges), or None."""
    if not findings:
        return None
    return min(findings, key=lambda f: f.rank).severity


def badges(findings: tuple[Finding, ...] | list[Finding]) -> dict[str, FindingSeverity]:
    """device -> its worst severity, for ``StorageTree.set_badges``."""
    out: dict[str, FindingSeverity] = {}
    for f in findings:
        if not f.device:
            continue
        cur = out.get(f.device)
        if cur is None or SEVERITY_RANK[f.severity] < SEVERITY_RANK[cur]:
            out[f.device] = f.severity
    return out
