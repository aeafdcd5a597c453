"""Headless wear monitor (``raidman monitor``): the live session fed from the backend.

No sampler or sync-edge detector of its own: :class:`app.session.Session` (the one the TUI runs)
decides when a sync started or ended and which SMART reads to make; this runs them — in line,
or with ``threaded=True`` on a thread of their own, so slow ``smartctl`` runs on many disks never
delay the next sample.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence

from app.backend import Backend
from app.kernel_log import md_sync_span, read_kernel_log
from app.plans.audit_log import AuditLog
from app.plans.executor import execute
from app.session import Effects, Session
from app.statefiles import StateFileError
from app.sync.boost import BoostRecord, BoostStore, restore_plan
from app.wear.delta import sync_wear
from app.wear.smart_reads import SmartRead, counters_of, take_snapshot
from app.wear.snapshots import SnapshotStore

__all__ = ["DEFAULT_INTERVAL_S", "WearMonitor", "counters_of"]

DEFAULT_INTERVAL_S = 15 * 60.0
_Batch = tuple[tuple[SmartRead, ...], tuple[int, ...], "_Tally | None"]
_Item = tuple[int, int, _Batch | None]


class _Tally:
    """A start/periodic snapshot queued one disk at a time (so that a sync's reads go between
    them, not after all of them): said once, when its last disk is done."""

    def __init__(self, reason: str, left: int) -> None:
        self.reason = reason
        self.left = left
        self.ok = 0


class WearMonitor:
    def __init__(
        self,
        backend: Backend,
        store: SnapshotStore,
        *,
        interval_s: float = DEFAULT_INTERVAL_S,
        log: Callable[[str], None] | None = None,
        threaded: bool = False,
        boosts: BoostStore | None = None,
    ) -> None:
        self.backend = backend
        self.store = store
        # boosts: the limits a boost raised are put back when its sync ends, as the TUI does
        # (a boost whose TUI was closed is restored by the service)
        self.session = Session(
            store=store,
            audit_every_s=None,
            smart_every_s=interval_s,
            boosts=boosts,
            restore_boosts=boosts is not None and not backend.read_only_reason,
            shows=False,  # no screen: no per-disk speeds, slow members or bytes so far
        )
        self._log = log or (lambda _line: None)
        for note in boosts.notes if boosts is not None else ():
            self._log(f"note: boost: {note}")
        self._lock = threading.RLock()  # one SnapshotStore user at a time
        # (priority, order, batch): a sync's start/end reads go before start/periodic ones,
        # which are queued one disk each: a sync's reads wait for at most one smartctl run
        self._queue: queue.PriorityQueue[_Item] | None = None
        self._order = 0
        self._thread: threading.Thread | None = None
        if threaded:
            self._queue = queue.PriorityQueue()
            self._thread = threading.Thread(target=self._smart_loop, name="smart", daemon=True)
            self._thread.start()

    def log(self, line: str) -> None:
        self._log(line)

    @property
    def store_lock(self) -> threading.RLock:
        """Held by whoever uses the store (the SMART thread, the scheduled checks)."""
        return self._lock

    # ---- the loop body ------------------------------------------------------------------------
    def tick(self) -> None:
        """One look: probe (first time / when the stack changed), sample, clock."""
        self.retry_store()
        now = self.backend.now()
        if self.session.view.probed is None:
            machine = self.backend.probe()
            with self._lock:
                self._apply(self.session.probed(machine, now))
        sample = self.backend.sample()
        with self._lock:
            first = self.session.view.sample_count == 0
            eff = self.session.sampled(sample)
        if first:
            lvs = f", {len(sample.lvs)} raid LV(s)" if sample.lvs else ""
            self.log(f"watching {len(sample.arrays)} array(s){lvs}")
        self._apply(eff)
        self._times_after_the_fact(eff)
        if eff.reprobe:
            machine = self.backend.probe()
            with self._lock:
                self._apply(self.session.probed(machine, self.backend.now()))
        with self._lock:
            self._apply(self.session.tick(now))

    def _times_after_the_fact(self, eff: Effects) -> None:
        """A sync that ran between two looks is recorded with the looks' times; md's own lines
        in the kernel log say when it ran (app.kernel_log.md_sync_span): its record gets those
        (the kernel log is read only then)."""
        fins = [
            e.sync
            for e in eff.events
            if e.kind == "sync-ended" and e.sync is not None and e.sync.after_fact
        ]
        if not fins:
            return
        log = read_kernel_log(self.backend)
        for fin in fins:
            span = md_sync_span(log, fin.array, fin.action, fin.started_at, fin.ended_at)
            if span is None:
                continue
            with self._lock:
                rec = next(
                    (
                        ev
                        for ev in reversed(self.store.syncs_for(fin.array))
                        if ev.action == fin.action and ev.ended_at == fin.ended_at
                    ),
                    None,
                )
                if rec is not None:
                    self.store.set_sync_times(rec.id, *span)
            self.log(
                f"{fin.array}: the kernel log says the {fin.action} ran "
                f"{span[1] - span[0]:.1f} s (md's own lines)"
            )

    def retry_store(self, *, force: bool = False) -> None:
        """History held in memory (the database was locked or full at start) is written to the
        database as soon as it accepts it (:meth:`SnapshotStore.try_attach`)."""
        with self._lock:
            line = self.store.try_attach(force=force)
        if line:
            self.log(f"note: {line}")

    def close(self) -> None:
        """Finish the queued SMART reads and stop their thread; write what is still held in
        memory if the database accepts it now."""
        if self._queue is not None and self._thread is not None:
            self._queue.put((9, self._next(), None))
            self._thread.join()
            self._queue = None
        self.retry_store(force=True)

    # ---- effects ------------------------------------------------------------------------------
    def _apply(self, eff: Effects) -> None:
        for line in eff.log:
            self.log(line)
        for rec in eff.restores:
            self._restore(rec)
        if not eff.smart_reads:
            return
        ended = tuple(
            sorted({r.sync_id for r in eff.smart_reads if r.reason == "sync-end" and r.sync_id})
        )
        if self._queue is not None:
            sync_reads = tuple(r for r in eff.smart_reads if r.sync_id is not None)
            other = tuple(r for r in eff.smart_reads if r.sync_id is None)
            if sync_reads:
                self._queue.put((0, self._next(), (sync_reads, ended, None)))
            for reason in dict.fromkeys(r.reason for r in other):
                mine = [r for r in other if r.reason == reason]
                tally = _Tally(reason, len(mine))
                for r in mine:
                    self._queue.put((1, self._next(), ((r,), (), tally)))
        else:
            self._run_reads(eff.smart_reads, ended)

    def _restore(self, rec: BoostRecord) -> None:
        """Put back what a boost raised, through the executor (audited like any step)."""
        boosts = self.session.boosts
        if boosts is None:
            return
        plan = restore_plan(rec, boosts)
        try:
            report = execute(plan, self.backend, audit=AuditLog())
        except Exception as e:  # keep watching; the restore is retried at the next sample
            self.log(f"{rec.array}: restoring the boosted limits failed: {e}")
            self.session.restored(rec, False)
            return
        try:
            self.session.restored(rec, report.ok)
        except StateFileError as e:
            self.log(f"{rec.array}: limits restored, but the record stays: {e}")
            return
        if report.ok:
            lines = "; ".join(s.shell() for s in plan.steps) or "nothing to change"
            self.log(f"{rec.array}: {rec.action} ended, boosted limits restored: {lines}")
        else:
            self.log(f"{rec.array}: could not restore the boosted limits: {report.summary()}")

    def _next(self) -> int:
        self._order += 1
        return self._order

    def _smart_loop(self) -> None:
        q = self._queue
        assert q is not None
        while True:
            _prio, _n, item = q.get()
            if item is None:
                return
            try:
                self._run_reads(*item)
            except Exception as e:  # keep the thread alive; the next batch retries
                self.log(f"error: SMART: {e.__class__.__name__}: {e}")

    def _run_reads(
        self, reads: Sequence[SmartRead], ended: Sequence[int], tally: _Tally | None = None
    ) -> None:
        n = 0
        for r in reads:
            reading_ok = False
            try:
                reading_ok = (
                    take_snapshot(
                        self.backend, self.store, r, self._lock, kernel=self.session.kernel_count
                    )
                    is not None
                )
            except Exception as e:
                self.log(f"{r.disk}: SMART read failed: {e}")
            if reading_ok:
                n += 1
            elif r.reason in ("start", "periodic"):
                continue
            else:
                self.log(f"{r.disk}: no SMART ({r.reason})")
        if tally is not None:
            tally.ok += n
            tally.left -= len(reads)
            if tally.left <= 0:
                self.log(f"{tally.reason} snapshot of {tally.ok} disk(s)")
        else:
            kinds = {r.reason for r in reads}
            for reason in ("start", "periodic"):
                if reason in kinds:
                    self.log(f"{reason} snapshot of {n} disk(s)")
        with self._lock:
            for sid in ended:
                ev = self.store.sync(sid)
                if ev is None:
                    continue
                for line in sync_wear(self.store, ev).lines():
                    self.log(f"{ev.array}: {line}")
