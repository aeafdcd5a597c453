"""A sync waiting its turn, in words: what it waits for, which disks they share, about when it
starts and how long it then takes. md holds a sync back while another array on a shared whole
disk syncs (md.c md_do_sync: "delaying %s of %s until %s has finished (they share one or more
physical units)"; mdstat ``resync=DELAYED``, sync_completed "delayed"): that is a wait, never a
stuck sync. The banner, the tree, the Sync card and ``report --json`` (``arrays[].sync``) all
say it through :func:`sync_wait` (the words: :class:`app.sync.waiting.SyncWait`).
"""

from __future__ import annotations

from app.model import Machine
from app.model.sync_model import WAITING_ACTIONS, wait_of
from app.sync.waiting import SyncWait
from app.wear.forecast import model_forecast

__all__ = ["SyncWait", "sync_wait"]


def sync_wait(machine: Machine | None, array: str) -> SyncWait | None:
    """The wait of ``array``'s sync, None when it is not waiting (or unknown to ``machine``)."""
    a = machine.array(array) if machine is not None else None
    if machine is None or a is None or a.sync is None or a.sync.action not in WAITING_ACTIONS:
        return None
    reason = a.sync.action
    action = a.sync.queued
    members = [m.device for m in a.members if m.role != "faulty"]
    w = wait_of(machine, array, members) if reason == "delayed" else None
    then = None
    if action is not None:
        # a recovery's targets: the slotted members not in sync (md's "spare" being rebuilt)
        targets = [
            m.device
            for m in a.members
            if m.slot is not None and "in_sync" not in m.state and "faulty" not in m.state
        ]
        fc = model_forecast(machine, array, action, a.sync, targets=targets)  # its limits
        then = fc.duration_s_low if fc is not None else None
    return SyncWait(
        array=array,
        reason=reason,
        action=action,
        waits_for=w.arrays if w else (),
        shares=w.disks if w else (),
        starts_in_s=w.wait_s if w else None,
        then_s=then,
    )
