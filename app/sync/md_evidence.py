"""What md leaves behind of a sync the looks did not see running, and when a sync that went
away was over (the tracker's rules, from md.c; app.sync.tracker applies them)."""

from __future__ import annotations

from dataclasses import dataclass

from app.model.live import MdLive
from app.model.sync_model import WAITING_ACTIONS, md_sync


@dataclass(frozen=True, slots=True)
class Unseen:
    action: str
    outcome: str  # "finished" or "ended between two looks"
    completed: bool
    evidence: str  # what showed it: "nvme3n1 in sync, md127 degraded 1 -> 0"


def unseen_sync(name: str, live: MdLive, prev: MdLive | None) -> Unseen | None:
    """A sync that began and ended between two looks, from what md left behind: a member that
    was not in sync (a spare, or absent: a re-add) is in sync now while the array's
    ``degraded`` count fell — only md_do_sync's recovery does that (the personality's
    ``spare_active`` after it) —, or md's ``last_sync_action`` changed. A recovery that left
    the array whole (or a resync) counts as finished; a check or repair cannot be told from a
    stopped one (md keeps no record), so it is said as such. None: nothing ran unseen."""
    if md_sync(live.sync) is not None:
        return None
    rebuilt = _rebuilt(prev, live)
    lsa = live.last_sync_action
    lsa_moved = lsa not in (None, "none") and (prev is None or lsa != prev.last_sync_action)
    if prev is not None and prev.sync is not None and prev.sync.action in WAITING_ACTIONS:
        # seen only waiting (md_do_sync sets last_sync_action before it waits its turn):
        # a recovery that then ran and ended unseen left the array whole
        if not (lsa == "recovery" and live.degraded == 0 < prev.degraded) and not rebuilt:
            return None
        lsa_moved = True
    elif prev is not None and md_sync(prev.sync) is not None:
        return None  # seen running at the last look: its run recorded it
    if not rebuilt and not lsa_moved:
        return None
    if rebuilt:
        action = "recover"
    else:
        assert lsa is not None
        action = {"recovery": "recover"}.get(lsa, lsa)
    if action == "recover" and live.degraded > 0 and not rebuilt:
        # A recovery that stopped short while the array still misses a member is not over:
        # md_check_recovery starts it again (remove_and_add_spares finds the spare again;
        # 1.x metadata resumes from the member's recovery_offset), and that run is the one
        # recorded. Seen in the VM: mdadm creating a RAID-5 let md start its recovery, stop
        # it within the second and start it again; counting the first as a sync of its own
        # made two records of one rebuild.
        return None
    if rebuilt or (action in ("recover", "resync", "reshape") and live.degraded == 0):
        outcome, completed = "finished", True
    else:
        outcome, completed = "ended between two looks", False
    if rebuilt:
        was = prev.degraded if prev is not None else "?"
        evidence = f"{', '.join(rebuilt)} in sync, {name} degraded {was} -> {live.degraded}"
    else:
        evidence = f"md's last_sync_action became {lsa}"
    return Unseen(action, outcome, completed, evidence)


def resync_done(action: str, live: MdLive) -> bool:
    """A resync gone while md may run one is over: an interrupted resync leaves recovery_cp
    short of the end and md_check_recovery starts it again at once ("recovery_cp < MaxSector":
    MD_RECOVERY_SYNC), unless the array is frozen or read-only. (VM: a 32 MiB RAID-1 resync
    ended within two looks, last seen at 90 %.)"""
    return (
        action == "resync"
        and live.sync is None
        and live.array_state not in ("readonly", "read-auto", "inactive", "clear", None)
    )


def _rebuilt(prev: MdLive | None, live: MdLive) -> tuple[str, ...]:
    """Members in sync now that were not at the last look (a spare, or not there: a re-add)
    while the array's degraded count fell: what a recovery leaves behind."""
    if prev is None or live.degraded >= prev.degraded:
        return ()
    before = dict(prev.member_states)
    return tuple(
        dev
        for dev, flags in live.member_states
        if "in_sync" in flags and "faulty" not in flags and "in_sync" not in before.get(dev, ())
    )
