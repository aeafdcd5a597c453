"""Which step of a plan starts each sync its consequences forecast, so that the forecast can be
handed to whoever records the sync right before that step runs (the TUI's session, or the file
``raidman monitor`` reads: ``app.wear.expected``).

A sync starts at the step that creates the array (``mdadm --create``: md begins the initial
resync or recovery at once), puts a device in (``--add``, ``--re-add``, ``--add-spare``: md
recovers onto it when a slot is vacant, ``md_check_recovery`` → ``remove_and_add_spares``),
``--replace``s a member, ``--grow``s it, or writes ``check``/``repair`` to ``md/sync_action``.
A forecast of a sync already running (a boost plan's) has no such step: it is not handed over
(the record keeps the forecast made when that sync began).
"""

from __future__ import annotations

from app.model import Machine
from app.model.sync_model import SyncForecast
from app.plans import ops
from app.plans.plan import Plan, Step


def array_paths(machine: Machine | None, array: str) -> set[str]:
    """The paths a step may name ``array`` by (/dev/md127, /dev/md/127, /dev/md/NAME)."""
    out = {f"/dev/{array}", f"/dev/md/{array}", array}
    if array.startswith("md") and array[2:].isdigit():
        out.add(f"/dev/md/{array[2:]}")
    a = machine.array(array) if machine is not None else None
    if a is not None:
        out.add(a.path)
        if a.array_name:
            out.add(f"/dev/md/{a.array_name.rsplit(':', 1)[-1]}")
    return out


def _starts(step: Step, paths: set[str]) -> bool:
    op = step.op
    if isinstance(op, ops.CreateArray):
        return op.path in paths
    if isinstance(op, (ops.GrowDevices, ops.AddMember, ops.ReAddMember, ops.ReplaceMember)):
        return op.array_path in paths
    if isinstance(op, ops.SetSyncAction):
        return f"/dev/{op.md}" in paths and op.action in ("check", "repair")
    return False


def sync_starting_steps(plan: Plan, machine: Machine | None) -> dict[int, tuple[SyncForecast, ...]]:
    """Step index → the forecasts of the syncs that step starts: for each forecast, the last
    step that can start a sync on its array (a fail → remove → re-add plan: the re-add)."""
    out: dict[int, list[SyncForecast]] = {}
    for fc in plan.consequences.syncs if plan.consequences is not None else ():
        paths = array_paths(machine, fc.array)
        idx = [i for i, s in enumerate(plan.steps) if _starts(s, paths)]
        if idx:
            out.setdefault(idx[-1], []).append(fc)
    return {i: tuple(v) for i, v in out.items()}
