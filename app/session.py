"""The live session: one machine watched over time, the same for the TUI and ``raidman monitor``.

Feed it what the backend returned and when — :meth:`Session.probed` (a probe),
:meth:`Session.sampled` (a 1 Hz ``LiveSample``), :meth:`Session.tick` (the clock) — and read back
an immutable :class:`SessionView` plus :class:`Effects`: what the caller should do next (re-probe,
SMART reads to make, boost restores to run, an audit to start). No Textual, no threads, no
backend calls: the TUI runs the effects in workers, the monitor in its loop and a SMART thread.

It owns, once for both front ends:

* the probed machine with the last live sample folded in (:func:`merge_live`);
* the one sync-edge detector (:class:`~app.sync.tracker.SyncTracker`) and per-member throughput;
* boost records whose sync has ended (their restore plans are effects);
* the audit cadence;
* wear recording (:class:`~app.wear.recorder.WearRecorder`): the tracker's sync edges open and
  close the database records, with the kernel's per-disk write counters at the window's edges
  and SMART reads asked for at both ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from app.model.devices import Machine, MdArray
from app.model.live import LiveSample, MdLive
from app.model.sync_model import SyncForecast
from app.plans.executor import ExecutionReport
from app.sync.boost import BoostRecord, BoostStore, due_restores
from app.sync.throughput import Rate, ThroughputMeter
from app.sync.tracker import ArrayEvent, FinishedSync, SyncTracker, SyncView
from app.wear.recorder import WearRecorder
from app.wear.smart_reads import SmartRead
from app.wear.snapshots import SnapshotStore
from app.wear.waiting import sync_wait

AUDIT_EVERY_S = 60.0  # the audit runs tune2fs/xfs_info/...: not at every probe
SMART_EVERY_S = 15 * 60.0  # periodic SMART snapshots of every disk
SHAPE_EVENTS = frozenset({"array-appeared", "array-vanished", "member-added", "member-removed"})


# ---- merging a live sample into the probed machine ---------------------------------------------
def _merge_array(a: MdArray, live: MdLive) -> MdArray:
    """``a`` with ``live`` folded in; ``a`` itself when the sample changes nothing in it (so
    that whoever shows it can skip it by identity)."""
    states = dict(live.member_states)
    members = tuple(
        replace(m, state=states[m.device])
        if m.device in states and states[m.device] != m.state
        else m
        for m in a.members
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
    if live.mismatch_cnt is not None:
        changes["mismatch_cnt"] = live.mismatch_cnt
    if live.last_sync_action is not None:
        changes["last_sync_action"] = live.last_sync_action
    if live.sync is not None and live.mismatch_cnt is not None and live.sync.mismatch_cnt is None:
        changes["sync"] = replace(live.sync, mismatch_cnt=live.mismatch_cnt)
    if all(getattr(a, k) == v for k, v in changes.items()):
        return a
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
    if all(x is y for x, y in zip(arrays, machine.arrays, strict=True)):
        return machine
    return replace(machine, arrays=arrays)


class LiveMerger:
    """:func:`merge_live` for a stream of samples over one probed machine, with work only for
    the arrays whose live state moved: per array it keeps what it folded in last, and an array
    whose live state is that same one (or an equal one) keeps its merged object. A sample that
    moves nothing gives back the machine it gave last time (so widgets skip it by identity).
    The result is always equal to ``merge_live(machine, sample)``."""

    def __init__(self) -> None:
        self._probed: Machine | None = None
        self._by_name: dict[str, MdArray] = {}
        self._folded: dict[str, tuple[MdLive, MdArray | None]] = {}  # array -> (live, merged)
        self._last: Machine | None = None
        # the merged arrays in the probed machine's order, where each name stands in it, and
        # the places whose array is not the probed one (issue 44: big's 250 arrays were put
        # in a new tuple and compared each second for the 16 a sync moved)
        self._arrays: list[MdArray] = []
        self._at: dict[str, list[int]] = {}
        self._moved: set[int] = set()

    def merge(self, machine: Machine, sample: LiveSample) -> Machine:
        if not sample.arrays:
            return machine
        if machine is not self._probed:  # a new probe: start over (once per probe)
            self._probed = machine
            self._by_name = {a.name: a for a in machine.arrays}
            self._folded = {}
            self._last = None
            self._arrays = list(machine.arrays)
            self._at = {}
            for i, a in enumerate(machine.arrays):
                self._at.setdefault(a.name, []).append(i)
            self._moved = set()
        folded, by_name = self._folded, self._by_name
        moved = False
        for live in sample.arrays:
            had = folded.get(live.name)
            if had is not None and (had[0] is live or had[0] == live):
                continue
            probed = by_name.get(live.name)
            merged = _merge_array(probed, live) if probed is not None else None
            folded[live.name] = (live, merged)
            if had is None or had[1] is not merged:
                moved = True
                self._place(live.name, merged)
        if len(folded) != len(sample.arrays):  # an array left the sample: fold only the rest
            named = {a.name for a in sample.arrays}
            for name in [n for n in folded if n not in named]:
                del folded[name]
                self._place(name, None)
            moved = True
        if not moved and self._last is not None:
            return self._last
        if not self._moved:
            self._last = machine
        else:
            self._last = replace(machine, arrays=tuple(self._arrays))
        return self._last

    def _place(self, name: str, merged: MdArray | None) -> None:
        """``merged`` (None: the probed array) in each place the probed machine has ``name``."""
        probed = self._probed
        assert probed is not None
        for i in self._at.get(name, ()):
            a = merged if merged is not None else probed.arrays[i]
            self._arrays[i] = a
            if a is probed.arrays[i]:
                self._moved.discard(i)
            else:
                self._moved.add(i)


# ---- when to sample -----------------------------------------------------------------------------
class SampleGate:
    """Polling never overlaps: one sample in flight at a time. A wake-up (an md event) that comes
    while a sample is in flight is kept, and one more sample is taken as soon as that one lands
    (it may have been read before the event); any number of wake-ups meanwhile make one sample.
    A timer tick while busy is simply dropped (the next tick comes anyway)."""

    def __init__(self) -> None:
        self.busy = False
        self._again = False

    def want(self, *, event: bool = False) -> bool:
        """True: start a sample now (and call :meth:`done` when it lands or fails)."""
        if self.busy:
            self._again = self._again or event
            return False
        self.busy = True
        return True

    def done(self) -> bool:
        """The sample in flight landed (or failed). True: start the coalesced one now."""
        if self._again:
            self._again = False
            return True  # still busy: the next one is in flight
        self.busy = False
        return False


# ---- what the session hands back ---------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Effects:
    """What the caller should do after feeding the session (all optional)."""

    events: tuple[ArrayEvent, ...] = ()  # to announce (notifications, the event log, the log)
    reprobe: bool = False  # the stack changed shape: probe again now
    smart_reads: tuple[SmartRead, ...] = ()  # run beside sampling, never in its way
    restores: tuple[BoostRecord, ...] = ()  # boosts whose sync ended: run restore_plan(rec)
    audit: bool = False  # start an audit of ``view.probed`` now
    log: tuple[str, ...] = ()  # lines for a log (the monitor prints them)

    def __bool__(self) -> bool:
        return bool(
            self.events
            or self.reprobe
            or self.smart_reads
            or self.restores
            or self.audit
            or self.log
        )


_EMPTY: Mapping[str, object] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class SessionView:
    """Everything the widgets show, as of the last probe/sample. Immutable."""

    machine: Machine | None = None  # the last probe with the last sample folded in
    probed: Machine | None = None  # the last probe as it was
    live: LiveSample | None = None
    syncs: tuple[SyncView, ...] = ()
    finished: tuple[FinishedSync, ...] = ()
    rates: Mapping[str, Rate] = field(default_factory=lambda: MappingProxyType({}))
    slow: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    boosted: frozenset[str] = frozenset()
    boost_records: Mapping[str, BoostRecord] = field(  # array -> its boost (what was raised)
        default_factory=lambda: MappingProxyType({})
    )
    # array -> ((disk, bytes the kernel wrote to it since the running sync began), ...)
    sync_writes: Mapping[str, tuple[tuple[str, int], ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    probe_count: int = 0
    sample_count: int = 0
    # what the tracker saw in the last sample (``live``): the alerts' syncs come from these
    events: tuple[ArrayEvent, ...] = ()


class Session:
    """One watched machine. Not thread-safe: call it from one thread (the UI's, the monitor's)."""

    def __init__(
        self,
        *,
        store: SnapshotStore | None = None,
        boosts: BoostStore | None = None,
        audit_every_s: float | None = AUDIT_EVERY_S,
        smart_every_s: float | None = SMART_EVERY_S,
        restore_boosts: bool = True,
        shows: bool = True,
    ) -> None:
        """``shows=False``: nothing shows this session's running syncs, per-disk speeds, slow
        members or a running sync's bytes so far (the headless monitor records the syncs
        through its recorder): they are not computed each sample (``view.syncs``,
        ``view.rates``, ``view.slow`` and ``view.sync_writes`` stay empty)."""
        self.tracker = SyncTracker()
        self._shows = shows
        self.meter = ThroughputMeter(rates=shows)
        self.boosts = boosts
        self.recorder = WearRecorder(store, smart_every_s=smart_every_s) if store else None
        self._audit_every = audit_every_s
        self._audited_at: float | None = None
        self._audit_busy = False
        self._audit_pending = False  # asked for while one ran: runs as soon as it ends
        self._restore = restore_boosts
        self._restoring: set[str] = set()
        self._rates: dict[str, Rate] = {}
        self._merger = LiveMerger()
        self._view = SessionView()

    # ---- reading ----------------------------------------------------------------------------
    @property
    def view(self) -> SessionView:
        return self._view

    def kernel_count(self, disk: str) -> tuple[int, float] | None:
        """``disk``'s cumulative bytes written by the kernel's count and the time of the sample
        it comes from (the last one); None before a sample shows it. Safe from any thread (the
        view is immutable and replaced whole): SMART reads store it with their reading."""
        live = self._view.live
        if live is None:
            return None
        for d in live.disk_io:
            if d.name == disk:
                return d.write_bytes, live.taken_at
        return None

    # ---- feeding ----------------------------------------------------------------------------
    def probed(self, machine: Machine, now: float) -> Effects:
        v = self._view
        merged = machine
        if v.live is not None and v.live.taken_at >= machine.taken_at:
            merged = self._merger.merge(machine, v.live)
        self._view = replace(v, machine=merged, probed=machine, probe_count=v.probe_count + 1)
        reads: tuple[SmartRead, ...] = ()
        if self.recorder is not None:
            reads = self.recorder.probed(machine, now)
        self._refresh()
        return Effects(smart_reads=reads, audit=self._audit_due(now))

    def sampled(self, sample: LiveSample, now: float | None = None) -> Effects:
        """A live sample arrived; ``now`` defaults to when it was taken (its own clock), so
        whoever feeds the session records the same times."""
        if now is None:
            now = sample.taken_at
        v = self._view
        events = tuple(self.tracker.update(sample))
        self._rates = self.meter.update(sample)
        machine = self._merger.merge(v.probed, sample) if v.probed is not None else v.machine
        self._view = replace(
            v, live=sample, machine=machine, sample_count=v.sample_count + 1, events=events
        )
        reads: tuple[SmartRead, ...] = ()
        log: tuple[str, ...] = ()
        if self.recorder is not None:
            reads, log = self.recorder.sampled(
                sample,
                events,
                self.tracker.finished,
                v.probed,
                now,
                prev=v.live,
                counters=self.meter.counters,
            )
        restores: tuple[BoostRecord, ...] = ()
        if self.boosts is not None and self._restore:
            due = [r for r in due_restores(self.boosts, sample) if r.array not in self._restoring]
            self._restoring.update(r.array for r in due)
            restores = tuple(due)
        self._refresh()
        return Effects(
            events=events,
            reprobe=any(e.kind in SHAPE_EVENTS for e in events)
            or (self.recorder is not None and self.recorder.wants_probe(now)),
            smart_reads=reads,
            restores=restores,
            log=log,
        )

    def tick(self, now: float) -> Effects:
        """The clock moved: periodic SMART snapshots and the audit cadence."""
        reads = self.recorder.tick(now) if self.recorder is not None else ()
        return Effects(smart_reads=reads, audit=self._audit_due(now))

    def expect_forecasts(self, forecasts: tuple[SyncForecast, ...], now: float) -> None:
        """A plan is about to run the step that starts these syncs: their records keep the
        plan's forecasts (``source: "plan"``) instead of the model's made when they are seen
        to begin. Without a wear store nothing is recorded, so nothing is kept."""
        if self.recorder is not None:
            for fc in forecasts:
                self.recorder.expect_forecast(fc.array, fc, now)

    def withdraw_forecasts(self, arrays: tuple[str, ...]) -> None:
        """The step that was to start those arrays' syncs failed: their forecasts are dropped."""
        if self.recorder is not None:
            for a in arrays:
                self.recorder.withdraw_forecast(a)

    # ---- results of effects ------------------------------------------------------------------
    def restored(self, record: BoostRecord, ok: bool) -> None:
        """A restore plan ran; the record goes when it succeeded (else it is retried later)."""
        self._restoring.discard(record.array)
        if ok and self.boosts is not None:
            self.boosts.forget(record.array)  # may raise StateFileError: retried next time
        self._refresh()

    def boost_starting(self, record: BoostRecord) -> None:
        """Before a boost plan is offered to run: its restore record goes to disk as pending, so
        a crash right after Run still leaves the limits to be put back. Raises StateFileError or
        ValueError when it cannot be stored; then nothing may be raised."""
        if self.boosts is None:
            raise ValueError("no boost store: the limits could not be put back")
        self.boosts.begin(record)
        self._refresh()

    def boost_ran(self, record: BoostRecord, report: ExecutionReport | None) -> BoostRecord | None:
        """A boost plan ran (or was closed without running: ``report`` None or empty): keep what
        to restore for every step that succeeded, even if a later one failed; drop the pending
        record when nothing changed. Returns the record kept. Raises StateFileError when the
        store cannot be written (the pending record still restores everything)."""
        if self.boosts is None:
            return None
        ran = {o.step.argv for o in report.executed if o.exit_code == 0} if report else set()
        kept = {
            k: v
            for k, v in record.previous.items()
            if any(k.split(":", 1)[1] in " ".join(argv) for argv in ran)
        }
        if not kept:
            self.boosts.forget(record.array)
            self._refresh()
            return None
        rec = BoostRecord(record.array, record.action, record.started_at, kept, record.applied)
        self.boosts.commit(rec)
        self._refresh()
        return rec

    @property
    def audit_idle(self) -> bool:
        """No audit runs and none waits to: the findings shown are the last ones asked for."""
        return not self._audit_busy and not self._audit_pending

    def audit_finished(self, now: float) -> bool:
        """An audit ended. True: start another now (one was asked for while it ran, and what it
        was asked for, a plan that ran or new SMART readings, came after its inputs were read)."""
        self._audit_busy = False
        self._audited_at = now
        if self._audit_pending and self._view.probed is not None:
            self._audit_pending = False
            self._audit_busy = True
            return True
        return False

    def audit_now(self, now: float) -> bool:
        """Force an audit (after a plan ran, on new SMART readings). False when one is already
        running: it is then kept pending and :meth:`audit_finished` asks for it, never lost."""
        if self._view.probed is None:
            return False
        if self._audit_busy:
            self._audit_pending = True
            return False
        self._audit_busy = True
        self._audited_at = now
        return True

    # ---- internals ---------------------------------------------------------------------------
    def _audit_due(self, now: float) -> bool:
        if self._audit_every is None or self._audit_busy or self._view.probed is None:
            return False
        if self._audited_at is not None and now - self._audited_at < self._audit_every:
            return False
        self._audit_busy = True
        self._audited_at = now
        return True

    def _refresh(self) -> None:
        v = self._view
        syncs = tuple(self.tracker.views()) if self._shows else ()
        if any(s.waiting for s in syncs):  # what each waits for, from the machine
            syncs = tuple(
                replace(s, wait=sync_wait(v.machine, s.array)) if s.waiting else s for s in syncs
            )
        slow: dict[str, tuple[str, ...]] = {}
        if v.machine is not None and syncs:  # slow members matter only in a running sync
            syncing = {s.array for s in syncs}
            for a in v.machine.arrays:
                if a.name not in syncing:
                    continue
                working = tuple(m.device for m in a.members if m.working)
                slow[a.name] = self.meter.slowest(working)
        writes = (
            self.recorder.running_writes(v.live, counters=self.meter.counters)
            if self.recorder is not None and self._shows
            else {}
        )
        self._view = replace(
            v,
            syncs=syncs,
            finished=tuple(self.tracker.finished),
            # the meter never changes a dict it handed out: no copy of 1,000 rates per sample
            rates=MappingProxyType(self._rates),
            slow=MappingProxyType(slow),
            boosted=frozenset(r.array for r in self.boosts.records) if self.boosts else frozenset(),
            boost_records=MappingProxyType(
                {r.array: r for r in self.boosts.records} if self.boosts else {}
            ),
            sync_writes=MappingProxyType(writes),
        )
