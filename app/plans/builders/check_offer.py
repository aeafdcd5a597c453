"""The check offered once a rebuild is done: what ``raidman plan sync check --array MD`` would
cost on the array as it will be (no sync running), from the same model as every forecast
(``app.model.sync_model`` through the check plan's consequences)."""

from __future__ import annotations

from dataclasses import replace

from app.format import duration, speed
from app.model import Machine
from app.plans.builders.sync_actions import build_sync_action
from app.plans.geometry import PlanError


def check_offer(machine: Machine, array: str) -> str:
    """One line: the command and its forecast ("" when the array cannot be checked)."""
    a = machine.array(array)
    if a is None or not a.has_redundancy:
        return ""
    idle = replace(machine, arrays=tuple(replace(x, sync=None) if x.name == a.name else x
                                         for x in machine.arrays))  # fmt: skip
    try:
        plan = build_sync_action(idle, a.name, "check")
    except PlanError:
        return ""
    c = plan.consequences
    fc = next((s for s in (c.syncs if c is not None else ()) if s.action == "check"), None)
    cost = ""
    if fc is not None and fc.duration_s_high:
        low = fc.duration_s_low or fc.duration_s_high
        span = (
            duration(fc.duration_s_high)
            if abs(fc.duration_s_high - low) < 60
            else f"{duration(low)} to {duration(fc.duration_s_high)}"
        )
        at = f" at {speed(fc.speed_kib_s)}" if fc.speed_kib_s else ""
        cost = f": about {span}{at}, reading every member in full"
    return (
        f"once the rebuild has finished, check {a.name} (md reads every copy and counts "
        f"mismatches): raidman plan sync check --array {a.name}{cost}"
    )
