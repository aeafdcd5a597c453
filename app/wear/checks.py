"""Check history: every check and repair (scheduled or started by hand) as one record.

The wear database keeps one ``sync_events`` row per window a check ran in (the recorder writes
it as md's ``sync_action`` goes to check/repair and back); a window that resumed where an
unfinished one stopped (``md/sync_min``, app.wear.check_window) continues that record. Here
the windows are put together: start, end, time spent checking, average speed, outcome, md's
``mismatch_cnt`` summed over the windows (md resets it as each window begins), bytes written
per member, how many times it was resumed. Shown in ``report --json`` (``arrays[].checks``),
the Sync tab, the metrics and the findings (app.wear.check_findings).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.format import duration
from app.model import Machine
from app.model.live import MdLive
from app.wear.check_window import CheckWindow
from app.wear.snapshots import SnapshotStore, SyncEvent

CHECK_ACTIONS = ("check", "repair")
FINISHED = "finished"


def window_at_start(earlier: Sequence[SyncEvent], action: str, live: MdLive | None) -> CheckWindow:
    """The window of a check/repair that just began: where md starts it (sync_completed), and
    the record it continues when the array's last check of the same kind did not finish and this
    one begins past sector 0 (md begins a requested sync at ``resync_min``: md.c md_do_sync).
    Where md does not say the position yet ("none"/"delayed" for a moment), the continuation is
    kept tentatively and dropped if the first position seen is 0 (:func:`window_seen`)."""
    sync = live.sync if live is not None else None
    ours = sync is not None and sync.action == action
    # where md began it: md/sync_min while it runs (resync_min); else the first position seen
    began = live.sync_min if live is not None and ours else None
    start = began if began is not None else (sync.done_sectors if ours and sync else None)
    total = sync.total_sectors if ours and sync is not None else None
    prev = _last_window(earlier)
    continues = None
    if (
        prev is not None
        and prev.action == action
        and prev.ended_at is not None
        and prev.outcome != FINISHED
        and (start is None or start > 0)
    ):
        continues = prev.window.continues if prev.window and prev.window.continues else prev.id
    return CheckWindow(from_sector=start, to_sector=start, total_sectors=total, continues=continues)


def _last_window(earlier: Sequence[SyncEvent]) -> SyncEvent | None:
    return next(
        (
            ev
            for ev in reversed(earlier)
            if ev.action in CHECK_ACTIONS and not (ev.window and ev.window.skipped)
        ),
        None,
    )


def reached_before(earlier: Sequence[SyncEvent], w: CheckWindow) -> tuple[int, CheckWindow] | None:
    """The window ``w`` continues, its end raised to where ``w`` resumes when the last look at
    it saw less: md resumes an interrupted requested sync at ``resync_min``, set to
    ``curr_resync_completed`` as it stopped (md.c md_do_sync), so it had checked at least that
    far; the last sample before the stop can be behind (VM: seen 80640, resumed at 81320).
    None when there is nothing to raise."""
    prev = _last_window(earlier)
    if w.continues is None or not w.from_sector or prev is None or prev.window is None:
        return None
    pw = prev.window
    if pw.to_sector is not None and pw.to_sector >= w.from_sector:
        return None
    return prev.id, replace(pw, to_sector=w.from_sector)


def window_seen(
    w: CheckWindow, live: MdLive | None, action: str, *, finished: bool = False
) -> CheckWindow:
    """The window after one more sample: how far md got, what ``mismatch_cnt`` says (md keeps
    it after the check ends, until the next one begins); ``finished``: it reached the end."""
    if live is None:
        return w
    frm, to, total, cont = w.from_sector, w.to_sector, w.total_sectors, w.continues
    sync = live.sync
    if sync is not None and sync.action == action and sync.done_sectors is not None:
        if frm is None:
            frm = sync.done_sectors
            if frm == 0:
                cont = None  # began at 0: a new check, not the rest of the last one
        to = max(to or 0, sync.done_sectors)
        total = sync.total_sectors or total
    if finished and total is not None:
        to = total
    mism = live.mismatch_cnt if live.mismatch_cnt is not None else w.mismatch_cnt
    return CheckWindow(frm, to, total, mism, cont, w.skipped)


@dataclass(frozen=True)
class CheckRecord:
    """One check or repair: its windows (one per time md ran it) in order."""

    id: int
    array: str
    action: str
    windows: tuple[SyncEvent, ...]

    @property
    def start(self) -> float:
        return self.windows[0].started_at

    @property
    def end(self) -> float | None:
        return self.windows[-1].ended_at

    @property
    def outcome(self) -> str | None:
        last = self.windows[-1]
        if last.window is not None and last.window.skipped:
            return f"not started: {last.window.skipped}"
        return last.outcome

    @property
    def skipped(self) -> bool:
        last = self.windows[-1].window
        return last is not None and last.skipped is not None

    @property
    def finished(self) -> bool:
        return self.outcome == FINISHED

    @property
    def duration_s(self) -> float | None:
        """Time md spent checking: the windows' durations summed (the gaps between them not)."""
        if self.end is None:
            return None
        return sum((ev.ended_at or ev.started_at) - ev.started_at for ev in self.windows)

    @property
    def mismatch_cnt(self) -> int | None:
        found = [ev.window.mismatch_cnt for ev in self.windows if ev.window is not None]
        known = [n for n in found if n is not None]
        return sum(known) if known else None

    @property
    def sectors(self) -> int | None:
        done = [ev.window.sectors for ev in self.windows if ev.window is not None]
        known = [n for n in done if n is not None]
        return sum(known) if known else None

    @property
    def speed_kib_s(self) -> int | None:
        """Average: sectors gone over ÷ time spent (KiB/s, as md's sync_speed)."""
        secs, sec = self.duration_s, self.sectors
        if not secs or sec is None:
            return None
        return int(sec / 2 / secs)

    @property
    def resumed(self) -> int:
        return len(self.windows) - 1

    def members_written(self) -> dict[str, int | None]:
        """Per member device: the kernel's bytes written to it, summed over the windows."""
        out: dict[str, int | None] = {}
        for ev in self.windows:
            for m in ev.members:
                n, _own = ev.member_written(m)
                if m.device not in out:
                    out[m.device] = n
                elif n is not None:
                    out[m.device] = (out[m.device] or 0) + n
        return out


def check_records(events: Sequence[SyncEvent]) -> list[CheckRecord]:
    """The array's syncs (oldest first) -> its check records, oldest first."""
    groups: dict[int, list[SyncEvent]] = {}
    for ev in events:
        if ev.action not in CHECK_ACTIONS:
            continue
        head = ev.window.continues if ev.window is not None and ev.window.continues else ev.id
        if head not in groups:
            head = ev.id if head not in groups else head
        groups.setdefault(head, []).append(ev)
    recs = [CheckRecord(k, w[0].array, w[0].action, tuple(w)) for k, w in groups.items()]
    return sorted(recs, key=lambda r: (r.start, r.id))


def check_number(events: Sequence[SyncEvent], head: int) -> tuple[int, int] | None:
    """Which check of the array the record ``head`` is (1 for its first check or repair,
    whatever other syncs were recorded) and how many windows it has: what a resumed window
    is called ("check #1, window 2"). None when ``head`` is not among ``events``."""
    for n, rec in enumerate(check_records(events), start=1):
        if rec.id == head:
            return n, len(rec.windows)
    return None


def checks_of(store: SnapshotStore, array: str, uuid: str | None) -> list[CheckRecord]:
    return check_records(store.syncs_for(array, uuid))


def checks_json(store: SnapshotStore, array: str, uuid: str | None) -> list[dict[str, Any]]:
    """``report --json`` ``arrays[].checks``: ``{start, end, duration_s, outcome, mismatch_cnt,
    windows: [{start, end, from_sector, to_sector}], members: [{device, bytes_written}]}`` plus
    ``action``, ``speed_kib_s`` (average) and ``resumed`` (windows after the first)."""
    out = []
    for r in checks_of(store, array, uuid):
        out.append(
            {
                "action": r.action,
                "start": r.start,
                "end": r.end,
                "duration_s": r.duration_s,
                "outcome": r.outcome,
                "mismatch_cnt": r.mismatch_cnt,
                "speed_kib_s": r.speed_kib_s,
                "resumed": r.resumed,
                "windows": [
                    {
                        "start": ev.started_at,
                        "end": ev.ended_at,
                        "from_sector": ev.window.from_sector if ev.window else None,
                        "to_sector": ev.window.to_sector if ev.window else None,
                        "mismatch_cnt": ev.window.mismatch_cnt if ev.window else None,
                    }
                    for ev in r.windows
                ],
                "members": [
                    {"device": d, "bytes_written": n} for d, n in r.members_written().items()
                ],
            }
        )
    return out


def ago(seconds: float) -> str:
    s = max(0.0, seconds)
    if s < 120:
        return "just now"
    if s < 7200:
        return f"{int(s // 60)} minutes ago"
    if s < 2 * 86400:
        return f"{int(s // 3600)} hours ago"
    return f"{int(s // 86400)} days ago"


def history_line(records: Sequence[CheckRecord], now: float) -> str:
    """ "last check 3 days ago, 2h 41m, 0 mismatches; before: 0, 0, 128 ↑" (the mismatch counts
    of the checks before it, oldest first; ↑ when the count rose from one check to the next)."""
    done = [r for r in records if r.end is not None and not r.skipped]
    running = [r for r in records if r.end is None]
    if not done and not running:
        return "never checked"
    parts: list[str] = []
    if running:
        r = running[-1]
        parts.append(f"{r.action} running since {ago(now - r.start)}")
    if done:
        last = done[-1]
        n = last.mismatch_cnt
        found = "mismatches unknown" if n is None else f"{n} mismatch{'es' if n != 1 else ''}"
        how = "" if last.finished else f", {last.outcome}"
        parts.append(
            f"last {last.action} {ago(now - (last.end or last.start))}, "
            f"{duration(last.duration_s)}, {found}{how}"
        )
        counts = [r.mismatch_cnt for r in done if r.finished]
        before = counts[-4:-1] if last.finished else counts[-3:]
        if before:
            shown = ", ".join("?" if c is None else str(c) for c in before)
            seq = [c for c in counts[-4:] if c is not None]
            rising = any(b > a for a, b in itertools.pairwise(seq))
            parts[-1] += f"; before: {shown}{' ↑' if rising else ''}"
    return "; ".join(parts)


def history_lines(store: SnapshotStore, machine: Machine, now: float) -> dict[str, str]:
    """Per array with a check on record: its :func:`history_line` (the Sync tab's lines)."""
    out: dict[str, str] = {}
    for a in machine.arrays:
        if a.is_container:
            continue
        recs = checks_of(store, a.name, a.uuid)
        if recs:
            out[a.name] = history_line(recs, now)
    return out
