"""Guest side of test_session_monitor.py: the wear database as the shipped monitor left it."""

from __future__ import annotations

from typing import Any


def records(state_dir: str) -> list[dict[str, Any]]:
    """Every recorded sync (all arrays, all UUIDs), oldest first, with the kernel's per-disk
    writes and each disk's capacity."""
    import os

    os.environ["RAIDMAN_STATE_DIR"] = state_dir
    from app.wear.snapshots import SnapshotStore

    store = SnapshotStore.open()
    try:
        out = []
        for ev in store.all_syncs():
            disks = sorted({m.disk for m in ev.members} | set(ev.kernel_start))
            out.append(
                {
                    "id": ev.id,
                    "array": ev.array,
                    "array_uuid": ev.array_uuid,
                    "action": ev.action,
                    "outcome": ev.outcome,
                    "fraction": ev.fraction,
                    "ended": ev.ended_at is not None,
                    "members": sorted({m.disk for m in ev.members}),
                    "written": {d: ev.kernel_written(d) for d in disks},
                    "capacity": dict(ev.capacities),
                }
            )
        return out
    finally:
        store.close()
