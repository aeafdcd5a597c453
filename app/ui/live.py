"""Fold a cheap ``LiveSample`` into the last probed ``Machine`` (no Textual here)."""

from __future__ import annotations

from dataclasses import replace

from app.model.devices import Machine, MdArray
from app.model.live import LiveSample, MdLive


def _merge_array(a: MdArray, live: MdLive) -> MdArray:
    states = dict(live.member_states)
    members = tuple(
        replace(m, state=states[m.device]) if m.device in states else m for m in a.members
    )
    changes: dict[str, object] = {
        "array_state": live.array_state if live.array_state is not None else a.array_state,
        "degraded": live.degraded,
        "sync": live.sync,
        "members": members,
    }
    if live.stripe_cache_size is not None:
        changes["stripe_cache_size"] = live.stripe_cache_size
    if live.raid_disks is not None:
        changes["raid_disks"] = live.raid_disks
    if live.sync is not None and live.mismatch_cnt is not None and live.sync.mismatch_cnt is None:
        changes["sync"] = replace(live.sync, mismatch_cnt=live.mismatch_cnt)
    return replace(a, **changes)  # type: ignore[arg-type]


def merge_live(machine: Machine, sample: LiveSample) -> Machine:
    """``machine`` with each array's state, degraded count, sync and member states taken from
    ``sample``. Arrays the sample does not mention are left as probed; new arrays wait for the
    next probe (the tree's structure only changes on a probe)."""
    by_name = {a.name: a for a in sample.arrays}
    if not by_name:
        return machine
    arrays = tuple(
        _merge_array(a, by_name[a.name]) if a.name in by_name else a for a in machine.arrays
    )
    return replace(machine, arrays=arrays)
