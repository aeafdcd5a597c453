"""Scheduled checks, run by ``raidman monitor`` (like mdadm's misc/mdcheck, with a history).

In each window (app.routine.schedule) every array with redundancy is checked once: a check left
unfinished by an earlier window is resumed where it stopped, otherwise one begins at sector 0.
At the window's end a running check raidman started is stopped (``sync_action`` = idle) and
its position kept: md sets ``sync_min`` (``resync_min``) to how far an interrupted requested
sync got (md.c md_do_sync), and the wear database keeps the window's last ``sync_completed``
(app.wear.check_window); the next window writes that position to ``sync_min`` before
``check`` (mdcheck writes it back the same way), so md begins there.

Never started on a degraded array, nor while the array syncs or reshapes (said in the log and
kept in the history as a check "not started"); arrays that share a disk are checked one after
another, never together (md would run them one at a time anyway, resync=DELAYED, but both
would hold "check" and the second one's window would pass waiting). Every write to sysfs is a
plan step run by the executor through the backend (audited like any other).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from app.backend import Backend
from app.model import Machine
from app.model.devices import MdArray
from app.model.live import LiveSample, MdLive
from app.plans import ops
from app.plans.audit_log import AuditLog
from app.plans.executor import execute
from app.plans.plan import Plan, Step
from app.routine.config import RoutineConfig
from app.routine.schedule import DEFAULT_MDADM, autocheck_on, window_at
from app.wear.check_window import CheckWindow
from app.wear.checks import checks_of
from app.wear.recorder import members_of
from app.wear.snapshots import SnapshotStore


def _sysfs(array: str, attr: str) -> str:
    return f"/sys/block/{array}/md/{attr}"


def check_plan(array: str, start_sector: int) -> Plan:
    where = f"resume the check at sector {start_sector}" if start_sector else "check from sector 0"
    return Plan(
        title=f"Scheduled check of {array}",
        steps=(
            Step(ops.SetSyncMin(array, start_sector), f"{where} (md begins a check at sync_min)"),
            Step(
                ops.SetSyncAction(array, "check"),
                "start the check (reads every member, compares, writes nothing)",
            ),
        ),
        target=array,
        kind="scheduled-check",
        params={"array": array},
    )


def stop_plan(array: str) -> Plan:
    return Plan(
        title=f"End of the check window of {array}",
        steps=(
            Step(
                ops.SetSyncAction(array, "idle"),
                "stop the check at the window's end (md keeps how far it got in sync_min)",
            ),
        ),
        target=array,
        kind="scheduled-check",
        params={"array": array},
    )


def _disks(machine: Machine, a: MdArray) -> set[str]:
    out: set[str] = set()
    for m in a.members:
        out.update(machine.disks_under(m.device) or (m.device,))
    return out


def busy_reason(live: MdLive | None) -> str | None:
    """Why a check must not start now (degraded, syncing, reshaping), or None."""
    if live is None:
        return "the array is gone"
    if live.degraded > 0:
        return "the array is degraded"
    s = live.sync
    if s is not None and s.action == "reshape":
        return "the array is reshaping"
    if s is not None and s.active:
        return f"the array is busy ({s.action})"
    if live.array_state in ("inactive", "readonly", "read-auto", "clear"):
        return f"the array is {live.array_state}"
    return None


class CheckScheduler:
    def __init__(
        self,
        backend: Backend,
        store: SnapshotStore,
        cfg: RoutineConfig,
        *,
        log: Callable[[str], None],
        lock: AbstractContextManager[object] | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self.backend = backend
        self.store = store
        self._log = log
        self._lock = lock if lock is not None else threading.RLock()
        self._audit = audit
        self.ours: dict[str, float] = {}  # array -> end of the window its check runs in
        self._handled: dict[str, float] = {}  # array -> start of the window it was handled in
        self._off_said = False
        self.cfg = cfg
        self.deferred: str | None = None
        self.configure(cfg)

    def configure(self, cfg: RoutineConfig) -> None:
        """A new configuration (at start, on SIGHUP)."""
        self.cfg = cfg
        self._off_said = False
        self.deferred = None
        debian = False
        if not cfg.checks_off:
            try:
                debian = autocheck_on(self.backend.read_text(DEFAULT_MDADM))
            except Exception:
                debian = False
        if cfg.checks_off:
            self.deferred = "scheduled checks are off in the configuration"
        elif debian and not cfg.ignore_autocheck:
            self.deferred = (
                f"scheduled checks left to Debian's checkarray (AUTOCHECK=true in "
                f"{DEFAULT_MDADM}); set AUTOCHECK=false there, or ignore_autocheck = true "
                "in [checks], or give --check-every, to let raidman schedule them"
            )
        self._log(f"checks: {self.deferred or self.cfg.schedule_text()}")
        if debian and self.deferred is None:
            given = f" ({cfg.schedule_from} given)" if cfg.schedule_from else ""
            self._log(
                f"checks: Debian's checkarray also runs from cron (AUTOCHECK=true in "
                f"{DEFAULT_MDADM}): raidman schedules checks{given} and so does Debian; set "
                "AUTOCHECK=false there so that one scheduler checks each array"
            )

    def _run(self, plan: Plan) -> bool:
        try:
            report = execute(plan, self.backend, audit=self._audit or AuditLog())
        except Exception as e:
            self._log(f"{plan.target}: {plan.title.lower()} failed: {e}")
            return False
        if not report.ok:
            self._log(f"{plan.target}: {plan.title.lower()} failed: {report.summary()}")
        return bool(report.ok)

    def tick(self, now: float, sample: LiveSample | None, machine: Machine | None) -> None:
        if sample is None or machine is None:
            return
        live = {a.name: a for a in sample.arrays}
        self._stop_due(now, live)
        if self.deferred is not None:
            return
        if not self.cfg.per_array and window_at(now, self.cfg) is None:
            return  # no window open (most seconds of a month): nothing to consider
        # the smallest first: a short check is not held behind a long one on a shared disk
        windows: dict[int, tuple[float, float] | None] = {}  # per schedule, once a look
        for a in sorted(machine.arrays, key=lambda x: (x.size_bytes or 0, x.name)):
            if not self._wanted(a) or a.name in self.ours:
                continue
            cfg = self.cfg.for_array(a.name)  # its own schedule, if it has one
            if id(cfg) not in windows:
                windows[id(cfg)] = window_at(now, cfg)
            win = windows[id(cfg)]
            if win is None or self._handled.get(a.name) == win[0]:
                continue
            self._consider(a, win, live, machine, now)

    def _wanted(self, a: MdArray) -> bool:
        if a.is_container or not a.has_redundancy:
            return False
        return not self.cfg.arrays or a.name in self.cfg.arrays

    def _stop_due(self, now: float, live: dict[str, MdLive]) -> None:
        for name, end in list(self.ours.items()):
            a = live.get(name)
            running = a is not None and a.sync is not None and a.sync.action == "check"
            if not running:
                self.ours.pop(name)  # finished (or stopped by someone else): the recorder says
                continue
            if now < end and self.deferred is None:
                continue
            at = a.sync.done_sectors if a is not None and a.sync is not None else None
            self._log(f"{name}: check window ended; stopping the check at sector {at}")
            if self._run(stop_plan(name)):
                self.ours.pop(name)

    def _consider(
        self,
        a: MdArray,
        win: tuple[float, float],
        live: dict[str, MdLive],
        machine: Machine,
        now: float,
    ) -> None:
        with self._lock:
            recs = checks_of(self.store, a.name, a.uuid)
        last = next((r for r in reversed(recs) if not r.skipped), None)
        resume = 0
        if last is not None and last.end is None:
            return  # one runs (started by hand, or still being recorded)
        if last is not None and last.finished and last.windows[-1].started_at >= win[0]:
            self._handled[a.name] = win[0]  # done in this window already
            return
        if last is not None and not last.finished and last.action == "check":
            resume = self._position(a.name, last.windows[-1].window)
        why = busy_reason(live.get(a.name))
        if why is not None:
            self._handled[a.name] = win[0]
            self._log(f"{a.name}: scheduled check not started: {why}")
            self._record_skip(a, machine, why, now)
            return
        mine = _disks(machine, a)
        for other in machine.arrays:
            if other.name == a.name or other.is_container:
                continue
            o = live.get(other.name)
            busy = other.name in self.ours or (
                o is not None and o.sync is not None and o.sync.active
            )
            if busy and mine & _disks(machine, other):
                return  # shares a disk with one being checked or synced: after it
        if self._run(check_plan(a.name, resume)):
            self.ours[a.name] = win[1]
            self._handled[a.name] = win[0]
            how = f"resumed at sector {resume}" if resume else "started"
            self._log(f"{a.name}: scheduled check {how}; window ends in {win[1] - now:.0f} s")

    def _position(self, array: str, w: CheckWindow | None) -> int:
        """Where the unfinished check stopped: md's sync_min (set as it was interrupted), else
        the last position the history kept."""
        text = None
        try:
            text = self.backend.read_text(_sysfs(array, "sync_min"))
        except Exception:
            text = None
        t = (text or "").strip()
        if t.isascii() and t.isdigit() and int(t) > 0:
            return int(t)
        if w is not None and w.to_sector:
            return w.to_sector
        return 0

    def _record_skip(self, a: MdArray, machine: Machine, why: str, now: float) -> None:
        with self._lock if self._lock is not None else nullcontext():
            sid = self.store.start_sync(
                a.name, "check", members_of(machine, a.name), now, array_uuid=a.uuid
            )
            self.store.end_sync(sid, now, "not started")
            self.store.set_check_window(sid, CheckWindow(skipped=why))
