"""Wear recording driven by the session's sync edges (no sampler, no edge detector of its own).

``WearRecorder`` is told by :class:`app.session.Session` what the one ``SyncTracker`` saw: a sync
started → a database record (array UUID, members, the kernel's write counters from the last
sample *before* it began) and SMART reads of its members' disks; a sync ended → the record
closed with the tracker's outcome and fraction, the write counters of the first sample *after*
it ended, and SMART reads again. The kernel counters (``/proc/diskstats``, 512-byte sectors, one
line per disk and per partition) are kept for each member device and each member's whole disk:
the member's own line gives what the sync wrote to it, kept apart from another array's sync on
other partitions of the same disks; the whole disk's line is the span SMART counts (its
snapshots confirm the disk's writes in the device's own unit).

SMART reads are returned as :class:`SmartRead` effects and run by :func:`take_snapshot` (both in
:mod:`app.wear.smart_reads`), in a thread of their own in ``raidman monitor`` and in a worker in
the TUI: never in the sampler's way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.format import percent
from app.model import Machine
from app.model.devices import LogicalVolume, SyncStatus
from app.model.live import DiskIO, LiveSample, MdLive
from app.model.sync_model import SyncForecast
from app.sync.dm_raid import raid_lv
from app.sync.tracker import ArrayEvent, FinishedSync
from app.wear.check_window import CheckWindow
from app.wear.checks import (
    CHECK_ACTIONS,
    check_number,
    reached_before,
    window_at_start,
    window_seen,
)
from app.wear.expected import ExpectedForecasts, expires
from app.wear.forecast import RecordedForecast, model_forecast
from app.wear.records import SyncEvent as StoredSync
from app.wear.records import SyncMember
from app.wear.smart_reads import SmartRead, sweep_order
from app.wear.snapshots import SnapshotStore
from app.wear.sync_counts import (
    LazyCounts,
    WritesOf,
    capacities_of,
    counted,
    kernel_writes,
    members_of,
)

NOT_WATCHED = "ended while the monitor was not running"


@dataclass
class _Open:
    sync_id: int
    array: str
    action: str
    uuid: str | None
    members: tuple[SyncMember, ...]
    start: dict[str, int]
    capacities: dict[str, int]
    # for the forecast made when it began (at its start, or at the probe that shows its array):
    # where it stood then, whether it is the array's first sync, whether one is kept yet
    sync0: SyncStatus | None = None
    initial: bool = False
    forecast: bool = False
    # running already at raidman's first look: the record (and the forecast) begin part-way;
    # else the window begins at the last look before it, so the forecast is of the whole sync
    midway: bool = False
    # a check/repair's window (where it began, how far it got, md's mismatch_cnt), and
    # whether its record holds it as it is now
    window: CheckWindow | None = None
    window_stored: bool = True


IDENTITY_PROBES = 5
IDENTITY_PROBE_GAP_S = 2.0
# an array that appeared while raidman watched and began a sync within this long: that sync is
# its first one after mdadm --create (the model's "initial": e.g. a new RAID-5 recovers its last
# member); md starts it at once, a sample or two later at most
NEW_ARRAY_S = 60.0
# a running sync's figures so far (the kernel's write counters, a check's window) go into its
# record this often; what the recorder holds moves at every sample, and a sync's end writes
# its own at once
SO_FAR_EVERY_S = 5.0


class WearRecorder:
    def __init__(
        self,
        store: SnapshotStore,
        *,
        smart_every_s: float | None,
        expected: ExpectedForecasts | None = None,
    ) -> None:
        self.store = store
        # forecasts another process's plan left for the syncs it starts (raidman apply, while
        # raidman monitor records): beside the database unless told otherwise
        path = getattr(store, "path", None)
        if expected is None and path is not None:
            expected = ExpectedForecasts(path.parent)
        self._expected = expected
        self._now: float | None = None  # the time of the last probe or sample
        self._every = smart_every_s
        self._machine: Machine | None = None
        # disk -> when its SMART was last asked for: every disk keeps a recent snapshot, the
        # "before" of a sync too short for a read at its start (read when first seen, on the
        # cadence, at every sync start and end)
        self._asked: dict[str, float] = {}
        self._open: dict[str, _Open] = {}
        self._adoptable: list[StoredSync] | None = None
        # syncs over before a probe knew their array's members or UUID (one that began as
        # mdadm created the array: md's uuid is all zeros until the superblock is written),
        # with the kernel's counters at their end; filled in at the next probe, unless the
        # array left the samples in between (another array may take its name)
        self._closed_unknown: list[tuple[_Open, dict[str, int]]] = []
        # sync id -> (probes asked for to learn its array's UUID or members, when last)
        self._identity_asks: dict[int, tuple[int, float]] = {}
        # (machine, the earliest time any of its disks was asked for; None: one never was)
        self._oldest: tuple[Machine, float | None] | None = None
        # array -> when it first appeared in the samples (see NEW_ARRAY_S)
        self._born: dict[str, float] = {}
        # array -> (the forecast of the plan about to start its sync, kept until when)
        self._planned: dict[str, tuple[SyncForecast, float | None]] = {}
        self._so_far_at = float("-inf")  # when the running syncs' figures were last written

    # ---- SMART reads of many disks -------------------------------------------------------------
    def _due(self, machine: Machine, reason: str, now: float) -> list[SmartRead]:
        """``start``: the disks never read (all at the first probe, a new disk later);
        ``periodic``: those not read for the cadence. In :func:`sweep_order`: a sync that
        starts while they are read finds its members' "before" read first."""
        every = self._every
        return [
            SmartRead(d.name, reason, None, d.serial, d.size_bytes)
            for d in sweep_order(machine)
            if d.kind == "disk"
            and (
                d.name not in self._asked
                if reason == "start"
                else every is not None and now - self._asked.get(d.name, now - every) >= every
            )
        ]

    def _asking(self, reads: Sequence[SmartRead], now: float) -> tuple[SmartRead, ...]:
        for r in reads:
            self._asked[r.disk] = now
        if reads:
            self._oldest = None
        return tuple(reads)

    def _of(self, members: Sequence[SyncMember], reason: str, sync_id: int) -> list[SmartRead]:
        seen: dict[str, SmartRead] = {}
        for m in members:
            if m.disk not in seen:
                d = self._machine.disk(m.disk) if self._machine else None
                seen[m.disk] = SmartRead(
                    m.disk, reason, sync_id, m.serial, d.size_bytes if d else None
                )
        return list(seen.values())

    def _capacities(self, members: Sequence[SyncMember]) -> dict[str, int]:
        """Each member device's own size (a partition's, not its disk's) and each whole disk's."""
        return capacities_of(self._machine, members)

    # ---- fed by the session -----------------------------------------------------------------
    def probed(self, machine: Machine, now: float) -> tuple[SmartRead, ...]:
        self._machine = machine
        self._now = now
        reads: list[SmartRead] = self._due(machine, "start", now)
        waiting: list[tuple[_Open, dict[str, int]]] = []
        for o, end in self._closed_unknown:
            a = machine.array(o.array)
            if a is None or (o.uuid is not None and a.uuid != o.uuid):
                continue
            if o.uuid is None:
                if not a.uuid:  # still being created: at a later probe
                    waiting.append((o, end))
                else:
                    o.uuid = a.uuid
                    self.store.set_sync_uuid(o.sync_id, a.uuid)
            if not o.members:
                o.members = members_of(machine, o.array)
                o.capacities = self._capacities(o.members)
                o.start = _mine(o, o.start)
                self.store.set_sync_members(o.sync_id, o.members)
                self.store.set_kernel_writes(o.sync_id, o.start, _mine(o, end), o.capacities)
                reads.extend(self._of(o.members, "sync-end", o.sync_id))
            if not o.forecast:
                self._forecast(o)
        self._closed_unknown = waiting
        for name, o in self._open.items():
            a = machine.array(name)
            if a is None and raid_lv(machine, name) is None:
                continue
            if a is not None and o.uuid is None and a.uuid:
                o.uuid = a.uuid
                self.store.set_sync_uuid(o.sync_id, a.uuid)
            # the array appeared after the last probe, or a member joined it: known now
            known = {m.device for m in o.members}
            new = [m for m in members_of(machine, name) if m.device not in known]
            if new:
                o.members = (*o.members, *new)
                o.capacities = self._capacities(o.members)
                # the whole map was kept while the members were unknown: only theirs now (the
                # record of one array's sync holds its members' and their disks' counts)
                o.start = _mine(o, o.start)
                self.store.set_sync_members(o.sync_id, o.members)
                self.store.set_kernel_writes(o.sync_id, o.start, {}, o.capacities)
                reads.extend(self._of(new, "sync-start", o.sync_id))
            if not o.forecast:  # the array's facts known only now (created since the last probe)
                self._forecast(o)
        return self._asking(reads, now)

    def tick(self, now: float) -> tuple[SmartRead, ...]:
        if self._every is None or self._machine is None or not self._asked:
            return ()
        # the disk asked for longest ago decides whether any is due: one look per second, not
        # one per disk (recomputed after each read asked for and each probe)
        if self._oldest is None or self._oldest[0] is not self._machine:
            oldest = min(
                (self._asked.get(d.name) for d in self._machine.disks if d.kind == "disk"),
                key=lambda t: float("-inf") if t is None else t,
                default=None,
            )
            self._oldest = (self._machine, oldest)
        oldest = self._oldest[1]
        if oldest is not None and now - oldest < self._every:
            return ()  # the same test as _due's, for the smallest time: no disk is due
        return self._asking(self._due(self._machine, "periodic", now), now)

    def sampled(
        self,
        sample: LiveSample,
        events: Sequence[ArrayEvent],
        finished: Sequence[FinishedSync],
        machine: Machine | None,
        now: float,
        *,
        prev: LiveSample | None,
        counters: Mapping[str, DiskIO] | None = None,
    ) -> tuple[tuple[SmartRead, ...], tuple[str, ...]]:
        """``counters``: ``sample``'s per-disk counters by name when the caller keeps them (the
        session's meter does): then a sample without sync edges reads only the running syncs'
        members, never a map of every disk."""
        if machine is not None:
            self._machine = machine
        self._now = now
        first = self._adoptable is None
        if self._adoptable is None:
            self._adoptable = self.store.running_syncs()
        # the whole maps only at a sync's edges (stored then), not at every sample
        before = LazyCounts(lambda: kernel_writes(prev if prev is not None else sample))
        after = LazyCounts(lambda: kernel_writes(sample))
        reads: list[SmartRead] = []
        log: list[str] = []
        present = {a.name for a in sample.synced()}
        if (prev is not None and len(prev.arrays) != len(sample.arrays)) or self._born:
            self._note_born(sample, prev, now)
        if self._closed_unknown:  # an array gone from the samples is not asked about again
            self._closed_unknown = [x for x in self._closed_unknown if x[0].array in present]
        for e in events:
            if e.kind == "sync-ended" and e.array in self._open:
                o = self._open.pop(e.array)
                fin = e.sync or next((f for f in reversed(finished) if f.array == e.array), None)
                outcome = fin.outcome if fin is not None else "interrupted"
                fraction = fin.fraction if fin is not None else None
                self.store.set_kernel_writes(o.sync_id, o.start, _mine(o, after()), o.capacities)
                # when the tracker says it ended: a raid LV's sync held through a table reload
                # that did not come back ended at the first stopped look, not now
                self.store.end_sync(o.sync_id, fin.ended_at if fin else now, outcome, fraction)
                if fin is not None and fin.after_fact:
                    self.store.set_sync_seen(o.sync_id, fin.after_fact)
                if o.window is not None:
                    live = sample.live(e.array)
                    o.window = window_seen(o.window, live, o.action, finished=outcome == "finished")
                    self.store.set_check_window(o.sync_id, o.window)
                if (not o.members or o.uuid is None) and e.array in present:
                    # over before a probe knew the array (not with it: stopped, it is no more)
                    self._closed_unknown.append((o, after()))
                reads.extend(self._of(o.members, "sync-end", o.sync_id))
                log.append(e.message)
            elif e.kind == "sync-started":
                a = sample.live(e.array)
                action = e.action or (a.sync.action if a is not None and a.sync else None)
                if action is None or action in ("pending", "delayed"):
                    continue
                at = min(now, e.t)  # one that began between two looks: at the earlier look
                born = self._born.pop(e.array, None)
                initial = born is not None and now - born <= NEW_ARRAY_S
                started = self._start(
                    e.array, action, before(), at, log, live=a, initial=initial, midway=prev is None
                )
                if at == now:  # else SMART's start is the last snapshot before it (delta.py)
                    reads.extend(started)
        for o in self._open.values():  # a check: how far it got, what md found so far
            if o.window is not None:
                seen = window_seen(o.window, sample.live(o.array), o.action)
                if seen != o.window:
                    o.window, o.window_stored = seen, False
        # the running syncs' figures so far: in one commit for all, not synced to the disk,
        # and every SO_FAR_EVERY_S, not each second (issue 44: a commit each second was a tenth
        # of raid10-evo's main thread); each sync's end writes its own at once
        if self._open and now - self._so_far_at >= SO_FAR_EVERY_S:
            self._so_far_at = now
            with self.store.batch(durable=False):
                for o in self._open.values():
                    self._write_so_far(o, after, counters)
        if first:
            for ev in self._adoptable:
                self.store.end_sync(ev.id, now, NOT_WATCHED)
                reads.extend(self._of(ev.members, "sync-end", ev.id))
                log.append(f"{ev.array}: {ev.action} {NOT_WATCHED}")
            self._adoptable = []
        return self._asking(reads, now), tuple(log)

    def _write_so_far(
        self,
        o: _Open,
        after: LazyCounts,
        counters: Mapping[str, DiskIO] | None,
    ) -> None:
        """A running sync's check window (when it moved) and the kernel's write counters so far
        into its record."""
        if o.window is not None and not o.window_stored:
            self.store.set_check_window(o.sync_id, o.window)
            o.window_stored = True
        if not o.start:
            return
        # only the members' counters once they are known (the end of the sync writes them all):
        # on a machine of 1,000 disks the whole map is ~30 KB of JSON per running sync
        disks = counted(o.members)
        start = o.start
        if not disks:
            end = after()
        elif counters is not None:
            start = {d: start[d] for d in disks if d in start}
            end = {d: c.write_bytes for d in disks if (c := counters.get(d)) is not None}
        else:
            start = {d: start[d] for d in disks if d in start}
            end = {d: after()[d] for d in disks if d in after()}
        self.store.set_kernel_writes(o.sync_id, start, end, o.capacities)

    def _start(
        self,
        name: str,
        action: str,
        before: dict[str, int],
        now: float,
        log: list[str],
        *,
        live: MdLive | None = None,
        initial: bool = False,
        midway: bool = False,
    ) -> list[SmartRead]:
        a = self._machine.array(name) if self._machine else None
        lv = raid_lv(self._machine, name) if a is None else None
        uuid = a.uuid if a is not None else lv.uuid if lv is not None else None
        for ev in list(self._adoptable or ()):
            if (
                ev.array == name
                and ev.action == action
                and (not ev.array_uuid or not uuid or ev.array_uuid == uuid)
            ):
                # left open by a run that stopped while it was going: the same sync, adopted
                self._adoptable.remove(ev)  # type: ignore[union-attr]
                start = dict(ev.kernel_start)
                if any(before.get(d, -1) < v for d, v in start.items()):
                    start = {}  # counters went back (a reboot): the kernel figure is unknown
                caps = dict(ev.capacities) or self._capacities(ev.members)
                self._open[name] = _Open(
                    ev.id, name, action, ev.array_uuid or uuid, ev.members, start, caps
                )
                if action in CHECK_ACTIONS:
                    self._open[name].window = ev.window or CheckWindow()
                # its forecast is the one made when it began (if any): none made mid-way
                self._open[name].forecast = True
                log.append(f"{name}: {action} still running (recorded since {ev.started_at:.0f})")
                return []
        members = members_of(self._machine, name, live)
        caps = self._capacities(members)
        if members and not _rebuilds_elsewhere(lv):
            # the members' devices and disks, not every disk of the machine
            names = counted(members)
            before = {d: n for d, n in before.items() if d in names}
        sid = self.store.start_sync(
            name, action, members, now, array_uuid=uuid, kernel_start=before, capacities=caps
        )
        o = _Open(sid, name, action, uuid, members, dict(before), caps)
        if action in CHECK_ACTIONS:
            earlier = [ev for ev in self.store.syncs_for(name, uuid) if ev.id != sid]
            o.window = window_at_start(earlier, action, live)
            self.store.set_check_window(sid, o.window)
            raised = reached_before(earlier, o.window)
            if raised is not None:  # the window it continues got further than last seen
                self.store.set_check_window(*raised)
            if o.window.continues is not None:
                at = o.window.from_sector
                total = o.window.total_sectors
                where = f"{percent(at / total)} (sector {at})" if at and total else f"sector {at}"
                nth = check_number(earlier, o.window.continues)
                which = f": {action} #{nth[0]}, window {nth[1] + 1}" if nth else ""
                last = next((ev for ev in reversed(earlier) if ev.fraction is not None), None)
                again = ""
                if (
                    last is not None
                    and last.fraction
                    and at
                    and total
                    and at / total < last.fraction
                ):
                    # md resumes at resync_min = curr_resync_completed, its last checkpoint
                    # (md.c md_do_sync), which lags the position /proc/mdstat showed
                    again = (
                        f" (md's last checkpoint: the window before stopped at "
                        f"{percent(last.fraction)}, {percent(last.fraction - at / total)} "
                        "is checked again)"
                    )
                log.append(f"{name}: {action} resumes at {where}{which}{again}")
        o.sync0 = live.sync if live is not None else None
        o.initial = initial
        o.midway = midway
        self._open[name] = o
        self._forecast(o)
        log.append(f"{name}: {action} started; members {', '.join(m.device for m in members)}")
        return self._of(members, "sync-start", sid)

    # ---- forecasts ----------------------------------------------------------------------------
    def expect_forecast(self, array: str, forecast: SyncForecast, now: float | None = None) -> None:
        """The plan that starts (or just started) a sync of ``array`` hands over its forecast:
        kept with that sync's record instead of the model's made when raidman saw it start
        (the running sync's now, else the next one to start on ``array`` until
        ``app.wear.expected.expires(now, forecast.wait_s)``)."""
        o = self._open.get(array)
        if o is not None:
            self.store.set_sync_forecast(o.sync_id, RecordedForecast.of(forecast, "plan"))
            o.forecast = True
        else:
            until = expires(now, forecast.wait_s) if now is not None else None
            self._planned[array] = (forecast, until)

    def withdraw_forecast(self, array: str) -> None:
        """The step that was to start ``array``'s sync failed: its forecast is not kept."""
        self._planned.pop(array, None)

    def _plan_forecast(self, o: _Open) -> RecordedForecast | None:
        """The plan's forecast for ``o``: handed over in this process (the TUI), else left by
        ``raidman apply`` in the state directory (taken once); None when too old or none."""
        planned = self._planned.pop(o.array, None)
        now = self._now
        if planned is not None:
            fc, until = planned
            if until is None or now is None or now <= until:
                return RecordedForecast.of(fc, "plan")
        if self._expected is None or now is None or o.midway:
            return None
        try:
            return self._expected.take(o.array, o.uuid, now)
        except Exception:  # state the owner can write: never a crash of the recorder
            return None

    def _forecast(self, o: _Open) -> None:
        """Keep the forecast of a sync that began: the plan's if one was handed over, else the
        sync model's from the array's facts at that moment (as probed, where the sync stood
        when first seen); none yet while the probe does not know the array."""
        rec = self._plan_forecast(o)
        if rec is None:
            fc = model_forecast(
                self._machine,
                o.array,
                o.action,
                o.sync0,
                initial=o.initial,
                from_start=not o.midway,
            )
            if fc is None:
                return
            done = o.sync0.fraction if o.sync0 is not None and o.midway else None
            rec = RecordedForecast.of(fc, from_fraction=done if done and done < 1 else None)
        self.store.set_sync_forecast(o.sync_id, rec)
        o.forecast = True

    def _note_born(self, sample: LiveSample, prev: LiveSample | None, now: float) -> None:
        """Arrays that appeared since the last sample (created while raidman watched): their
        first sync is an initial one. Forgotten after ``NEW_ARRAY_S``."""
        if prev is not None:
            was = {a.name for a in prev.arrays}
            for a in sample.arrays:
                if a.name not in was:
                    self._born.setdefault(a.name, now)
        self._born = {k: t for k, t in self._born.items() if now - t <= NEW_ARRAY_S}

    def wants_probe(self, now: float) -> bool:
        """Whether a probe would tell a recorded sync's array UUID or members that are not
        known yet (a sync that began as mdadm created the array): at most
        ``IDENTITY_PROBES`` probes per sync, ``IDENTITY_PROBE_GAP_S`` apart; an array that
        never shows a UUID (none on record) is not probed for without end."""
        pending = [
            o
            for o in self._open.values()
            if o.uuid is None
            or not o.members
            or _rebuilds_elsewhere(raid_lv(self._machine, o.array))
        ]
        pending += [o for o, _ in self._closed_unknown]
        if not pending:  # the common case, at every sample
            self._identity_asks.clear()
            return False
        want = False
        for o in pending:
            n, last = self._identity_asks.get(o.sync_id, (0, -math.inf))
            if n < IDENTITY_PROBES and now - last >= IDENTITY_PROBE_GAP_S:
                self._identity_asks[o.sync_id] = (n + 1, now)
                want = True
        ids = {o.sync_id for o in pending}
        self._identity_asks = {k: v for k, v in self._identity_asks.items() if k in ids}
        return want

    # ---- reading ----------------------------------------------------------------------------
    def running_writes(
        self, live: LiveSample | None, *, counters: Mapping[str, DiskIO] | None = None
    ) -> dict[str, tuple[tuple[str, int], ...]]:
        """Per running sync: each member device's bytes written since it began (its own line of
        the kernel's counters: a partition's, not its disk's). ``counters``: ``live``'s counters
        by name, when the caller keeps them."""
        if not self._open:
            return {}
        if live is None:
            now: Mapping[str, int] = {}
        elif counters is not None:
            now = WritesOf(counters)
        else:
            now = kernel_writes(live)
        out: dict[str, tuple[tuple[str, int], ...]] = {}
        for name, o in self._open.items():
            disks = dict.fromkeys(m.device for m in o.members)
            out[name] = tuple(
                (d, max(0, now[d] - o.start[d])) for d in disks if d in now and d in o.start
            )
        return out

    def open_sync_id(self, array: str) -> int | None:
        o = self._open.get(array)
        return o.sync_id if o is not None else None


def _rebuilds_elsewhere(lv: LogicalVolume | None) -> bool:
    """A raid LV with a failed image as last probed: lvconvert --repair rebuilds it on a PV the
    probe does not show as its yet (the next probe does: the record keeps every disk's
    counters at its start until then, and asks for that probe)."""
    return lv is not None and lv.raid is not None and bool(lv.raid.failed_images)


def _mine(o: _Open, counts: dict[str, int]) -> dict[str, int]:
    """``counts`` of the sync's member devices and their disks only, once they are known."""
    if not o.members:
        return counts
    names = counted(o.members)
    return {d: n for d, n in counts.items() if d in names}
