"""Findings from the check history (app.wear.checks): an array never checked, a last check too
old, mismatches on a parity level or rising from one check to the next, a check that keeps being
interrupted.

md's own documentation (Documentation/admin-guide/md.rst, "mismatch_cnt") says a non-zero count
on RAID-1 and RAID-10 is not necessarily a problem: a page written while in flight (swap, and
some file systems) can reach the copies differently, and md cannot tell which one is right. On
RAID-4/5/6 parity is computed from the data of the stripe: any mismatch means parity and data
disagree.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from app.format import duration
from app.model.devices import Machine, MdArray
from app.model.levels import PARITY
from app.rules.finding import Finding
from app.wear.checks import CheckRecord, ago, checks_of
from app.wear.snapshots import SnapshotStore

DEFAULT_MAX_AGE_DAYS = 35.0
INTERRUPTED_IN_A_ROW = 3  # this many checks in a row that never finished


def _findings(
    a: MdArray,
    recs: Sequence[CheckRecord],
    now: float,
    max_age_days: float,
    watched_since: float | None,
) -> Iterator[Finding]:
    done = [r for r in recs if r.finished]
    # "never" once raidman has recorded for longer than checks may be apart (before that, a
    # check made before raidman watched is as likely as none), or from day one when md says
    # it has run no sync since the array was assembled
    watched_long = watched_since is not None and now - watched_since > max_age_days * 86400
    begun = [r for r in recs if not r.skipped]  # one under way (resumed window by window)
    # md has run no sync on it since it was assembled (md_do_sync sets last_sync_action as
    # any sync begins): with no check in raidman's records either, it is unchecked from day one
    never = a.last_sync_action == "none" and not a.is_degraded  # (degraded: no check runs)
    if not begun and never and not watched_long:
        yield Finding(
            "warning",
            "md-never-checked",
            a.name,
            f"{a.name} has never been checked",
            f"raidman has no check of {a.name} in its records, and md has run no check, "
            "repair or resync on it since it was assembled (last_sync_action none). A check "
            "reads every block of every member and compares the copies or the parity: it "
            "finds unreadable sectors while the redundancy to rewrite them is still there. "
            "`raidman monitor` runs scheduled checks (the monthly default), or start one now.",
        )
    elif not begun and watched_long:
        yield Finding(
            "warning",
            "md-never-checked",
            a.name,
            f"{a.name} has not been checked in the {duration(now - (watched_since or now))} "
            "raidman has recorded",
            "A check reads every block of every member and compares the copies or the parity: "
            "it finds unreadable sectors while the redundancy to rewrite them is still there. "
            "`raidman monitor` runs scheduled checks (the monthly default), or start one now.",
        )
    elif done:
        last = done[-1]
        age = now - (last.end or last.start)
        if age > max_age_days * 86400:
            yield Finding(
                "warning",
                "md-check-overdue",
                a.name,
                f"{a.name} was last checked {ago(age)}",
                f"The last finished check of {a.name} is older than {max_age_days:g} days: "
                "unreadable sectors found by a check can still be rewritten from the redundancy; "
                "found by a rebuild they cannot.",
            )
        n = last.mismatch_cnt
        counts = [r.mismatch_cnt for r in done if r.mismatch_cnt is not None]
        rising = len(counts) >= 2 and counts[-1] > counts[-2]
        if n and a.level in PARITY:
            yield Finding(
                "error" if rising else "warning",
                "md-check-mismatches",
                a.name,
                f"the last check of {a.name} found {n} mismatched sectors"
                + (f" (the one before: {counts[-2]})" if rising else ""),
                f"On {a.level} parity is computed from the stripe's data: mismatches mean parity "
                "and data disagree (a member returning wrong data, a bad cable, an unclean "
                "shutdown without a bitmap or journal). Look at the members' SMART and the "
                "kernel log; a repair rewrites the parity from the data.",
            )
        elif rising:
            yield Finding(
                "warning",
                "md-check-mismatches-rising",
                a.name,
                f"mismatches of {a.name} rose from {counts[-2]} to {counts[-1]} between checks",
                f"On {a.level} a few mismatches can be harmless: md's documentation says a page "
                "written while in flight (swap, some file systems) can reach the copies "
                "differently. A count that grows from one check to the next is the early sign of "
                "a failing member or a bad cable: look at the members' SMART and the kernel log.",
            )
    tail = [r for r in recs if r.end is not None and not r.skipped][-INTERRUPTED_IN_A_ROW:]
    if len(tail) == INTERRUPTED_IN_A_ROW and not any(r.finished for r in tail):
        yield Finding(
            "warning",
            "md-check-interrupted",
            a.name,
            f"the last {INTERRUPTED_IN_A_ROW} checks of {a.name} never finished",
            "Each was stopped before the end (" + ", ".join(str(r.outcome) for r in tail) + "): "
            "parts of the array have not been read for a long time. Give the check a longer "
            "window, or let the scheduled windows resume it from where it stopped.",
        )


def check_findings(
    store: SnapshotStore,
    machine: Machine,
    now: float,
    *,
    max_age_days: float = DEFAULT_MAX_AGE_DAYS,
) -> list[Finding]:
    out: list[Finding] = []
    since = store.first_record_at()
    for a in machine.arrays:
        if a.is_container or not a.has_redundancy:
            continue
        watched = _watched_since(store, machine, a, since)
        out.extend(_findings(a, checks_of(store, a.name, a.uuid), now, max_age_days, watched))
    return out


def _watched_since(
    store: SnapshotStore, machine: Machine, a: MdArray, since: float | None
) -> float | None:
    """Since when raidman has watched this array: its own oldest record (a sync of it, or a
    SMART snapshot of a disk under it), never before raidman recorded at all. None: raidman
    has no record of it (an array made since, or on disks it never read): it cannot say the
    array went unchecked. Seen in the VM: a RAID-10 made a minute before was "not checked in
    the 1106 days raidman has recorded" because other disks' records were that old."""
    if since is None:
        return None
    times = [s.started_at for s in store.syncs_for(a.name, a.uuid)[:1]]
    for disk in {d for m in a.members for d in machine.disks_under(m.device)}:
        serial = getattr(machine.disk(disk), "serial", None)
        first = store.first_snapshot_ts(serial) if serial else None
        if first is not None:
            times.append(first)
    return max(since, min(times)) if times else None
