"""The routine ``raidman monitor`` runs after each look: the scheduled checks
(app.routine.scheduler) and the alerts (app.routine.alerts, app.routine.watch,
app.routine.exposure; quiet hours and the digest: app.routine.digest)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from app.backend import Backend
from app.routine.alerts import Alerter, Poster, Sender, resolve_targets
from app.routine.config import RoutineConfig
from app.routine.digest import Holder
from app.routine.exposure import ExposureWatch
from app.routine.scheduler import CheckScheduler
from app.routine.watch import RaidmanWatch, finished_arrays
from app.sync.boost import BoostStore
from app.wear.checks import checks_of
from app.wear.snapshots import SnapshotStore

SLOW_EVERY_S = 60.0  # SMART health, self-tests and the check findings: looked at this often


class Routine:
    def __init__(
        self,
        backend: Backend,
        store: SnapshotStore,
        cfg: RoutineConfig,
        log: Callable[[str], None],
        sender: Sender,
        *,
        lock: threading.RLock,
        view: Callable[[], Any],
        boosts: BoostStore | None = None,
        host: str = "",
        clock: Callable[[], float] = time.time,
        poster: Poster | None = None,
    ) -> None:
        self.backend, self.store, self._log = backend, store, log
        self._lock, self._view, self._boosts = lock, view, boosts
        self.cfg = cfg
        self.scheduler = CheckScheduler(backend, store, cfg, log=log, lock=lock)
        targets = resolve_targets(cfg, backend)
        log(f"alerts: {targets.text()}; always to this log")
        self.alerter = Alerter(
            backend,
            targets,
            sender,
            log=log,
            cooldown_s=cfg.cooldown_s,
            timeout_s=cfg.timeout_s,
            host=host,
            clock=clock,
            poster=poster,
            holder=Holder(cfg.quiet, cfg.digest_s, now=clock()),
        )
        self.alerter.check_history = self._check_history
        self.watch = RaidmanWatch(wear_high=cfg.wear_high, max_age_days=cfg.max_age_days)
        self.exposure = ExposureWatch(
            backend,
            degraded_for_s=cfg.degraded_for_s,
            rebuild_slow=cfg.rebuild_slow,
            latency_factor=cfg.latency_factor,
            heartbeat_s=cfg.heartbeat_s,
            start=clock(),
            host=host,
        )
        # the wall clock for the cool-downs, retries and the slow look (a replay's backend
        # clock stands still); tests pass the simulated one
        self._clock = clock
        self._slow_at: float | None = None

    def configure(self, cfg: RoutineConfig) -> None:
        self.cfg = cfg
        self.scheduler.configure(cfg)
        targets = resolve_targets(cfg, self.backend)
        self.alerter.configure(targets, cfg.cooldown_s, cfg.timeout_s)
        self.alerter.holder.configure(cfg.quiet, cfg.digest_s)
        self.watch.wear_high, self.watch.max_age_days = cfg.wear_high, cfg.max_age_days
        self.exposure.configure(
            cfg.degraded_for_s, cfg.rebuild_slow, cfg.latency_factor, cfg.heartbeat_s
        )
        self._log(f"alerts: {targets.text()}; always to this log")

    def tick(self) -> None:
        view = self._view()
        now = self.backend.now()
        live, machine = view.live, view.machine
        self.scheduler.tick(now, live, machine)
        events = self.alerter.observe(live, getattr(view, "events", ()))
        for name in finished_arrays(events):
            a = machine.array(name) if machine is not None else None
            with self._lock:
                extra = self.watch.after_sync(self.store, name, a.uuid if a else None)
            for e in extra:
                self.alerter.emit(e)
        if live is not None:
            for e in self.watch.boosts(self._boosts, live, now):
                self.alerter.emit(e)
        if live is not None and machine is not None:
            found = self.exposure.degraded(machine, live, now)
            found += self.exposure.rebuilds(machine, live, now)
            found += self.exposure.latency(machine, live, now)
            for e in found:
                self.alerter.emit(e)
        t = self._clock()
        for e in self.exposure.heartbeat(machine, t, self.alerter.targets.text()):
            self.alerter.emit(e, fold=False)
        slow_due = self._slow_at is None or not 0 <= t - self._slow_at < SLOW_EVERY_S
        if machine is not None and slow_due:  # (a clock set back looks again)
            self._slow_at = t
            with self._lock:
                extra = self.watch.smart(self.store, machine)
                extra += self.watch.findings(self.store, machine, now)
            for e in extra:
                self.alerter.emit(e)
        self.alerter.tick()

    def _check_history(self, array: str, started_at: float) -> list[float]:
        """The average speeds of ``array``'s checks that finished before ``started_at``."""
        a = self._view().machine.array(array) if self._view().machine is not None else None
        with self._lock:
            records = checks_of(self.store, array, a.uuid if a is not None else None)
        return [
            float(r.speed_kib_s)
            for r in records
            if r.finished and r.speed_kib_s and (r.end or 0) < started_at
        ]

    def close(self) -> None:
        self.alerter.close()
