"""Guest side of test_session_monitor.py: the wear database as the shipped monitor left it."""

from __future__ import annotations

from typing import Any


def records(state_dir: str) -> list[dict[str, Any]]:
    """Every recorded sync (all arrays, all UUIDs), oldest first, with the kernel's per-disk
    writes and each disk's capacity."""
    import os

    os.environ["RAIDMAN_STATE_DIR"] = state_dir
    from app.wear.delta import sync_wear
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
                    "devices": sorted({m.device for m in ev.members}),
                    "started_at": ev.started_at,
                    "ended_at": ev.ended_at,
                    "seen_after": ev.seen_after,
                    "written": {d: ev.kernel_written(d) for d in disks},
                    "capacity": dict(ev.capacities),
                    # the device's own counter: a true pair is read before the sync began (by
                    # its own kernel counter, not only its time: md may begin a sync before the
                    # first look that sees it) and after it ended; a late "before" is corrected
                    # by what the kernel counted before it
                    "smart": {
                        m.member.disk: {
                            "bytes": m.bytes_written,
                            "corrected": m.corrected_bytes,
                            "late": m.start_late,
                            "true_pair": m.start is not None
                            and m.end is not None
                            and not m.start_late
                            and m.start.ts <= ev.started_at
                            and ev.ended_at is not None
                            and m.end.ts >= ev.ended_at,
                            "unit": m.unit_bytes,
                            "after": m.end is not None,
                        }
                        for m in sync_wear(store, ev).members
                    },
                }
            )
        return out
    finally:
        store.close()


def executed(audit_log: str) -> list[list[Any]]:
    """[argv, exit code] of every step the audit log says was executed, in order."""
    from app.plans.audit_log import read_entries

    return [[list(e.argv), e.exit_code] for e in read_entries(audit_log) if e.event == "executed"]
