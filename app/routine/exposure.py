"""Events mdadm --monitor never sends, from what ``raidman monitor`` sees look after look:

* ``DegradedFor``: an array degraded ``degraded_for`` (6 h by default) — counted from md's
  "Disk failure on ..." line in this boot's kernel log where there is one (app.kernel_log), else
  from when the monitor first saw it degraded — and again ``degraded_for`` after each;
* ``RebuildSlow``: a rebuild (recover, replace, resync) whose progress since the monitor first
  saw it runs more than ``rebuild_slow`` (30 %) below the sync model's forecast for it
  (app.wear.forecast.model_forecast: the members' rated speed under md's limits), once it has
  been watched :data:`SLOW_AFTER_S`; once per sync;
* ``MemberLatency``: during a sync, one member's average latency over :data:`LATENCY_WINDOW_S`
  (the kernel's time spent on I/O per request, /proc/diskstats fields 7 and 11 over 4 and 8)
  more than ``latency_factor`` × the median of its peers' and above :data:`LATENCY_FLOOR_MS`:
  the member that holds the array back, or the next to fail; once per member per sync;
* ``Heartbeat``: every ``heartbeat`` (off by default), that the monitor runs and what it
  watches — for a channel that expects to hear from it (a dead man's switch).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from app.backend import Backend
from app.format import duration, speed
from app.kernel_log import degraded_since, read_kernel_log
from app.model import Machine
from app.model.live import DiskIO, LiveSample
from app.routine.events import AlertEvent
from app.rules.array_health import rebuild_state
from app.wear.forecast import model_forecast

SLOW_AFTER_S = 300.0
REBUILDS = ("recover", "replace", "resync")
LATENCY_WINDOW_S = 30.0
LATENCY_FLOOR_MS = 20.0
LATENCY_MIN_IOS = 20  # fewer requests in the window than this say nothing of a member


@dataclass
class _Rebuild:
    action: str
    t0: float
    done0: int
    forecast_kib_s: int
    why: str
    said: bool = False


class ExposureWatch:
    def __init__(
        self,
        backend: Backend,
        *,
        degraded_for_s: float,
        rebuild_slow: float,
        latency_factor: float,
        heartbeat_s: float | None,
        start: float,
        host: str = "",
    ) -> None:
        self.backend = backend
        self.host = host
        self.configure(degraded_for_s, rebuild_slow, latency_factor, heartbeat_s)
        self._since: dict[str, tuple[float, str]] = {}  # array -> (degraded since, how known)
        self._reminded: dict[str, float] = {}  # array -> when DegradedFor was last sent
        self._rebuilds: dict[str, _Rebuild] = {}
        self._lat_base: dict[str, tuple[float, dict[str, DiskIO]]] = {}
        self._lat_said: dict[str, set[str]] = {}
        self._beat = start

    def configure(
        self,
        degraded_for_s: float,
        rebuild_slow: float,
        latency_factor: float,
        heartbeat_s: float | None,
    ) -> None:
        self.degraded_for_s, self.rebuild_slow = degraded_for_s, rebuild_slow
        self.latency_factor, self.heartbeat_s = latency_factor, heartbeat_s

    # ---- DegradedFor --------------------------------------------------------------------
    def degraded(self, machine: Machine, live: LiveSample, now: float) -> list[AlertEvent]:
        now_degraded = {a.name for a in live.arrays if a.degraded > 0}
        for gone in set(self._since) - now_degraded:
            del self._since[gone]
            self._reminded.pop(gone, None)
        new = now_degraded - set(self._since)
        if new:
            logged = degraded_since(read_kernel_log(self.backend), machine)
            for name in new:
                at, line = logged.get(name, (now, ""))
                how = f"md: {line!r}" if line else "first seen degraded by this monitor"
                self._since[name] = (min(at, now), how)
        out: list[AlertEvent] = []
        for name in sorted(now_degraded):
            since, how = self._since[name]
            last = self._reminded.get(name)
            if now - since < self.degraded_for_s or (
                last is not None and now - last < self.degraded_for_s
            ):
                continue
            self._reminded[name] = now
            a = machine.array(name)
            state = rebuild_state(a) if a is not None else "its rebuild state is not known"
            live_a = next(x for x in live.arrays if x.name == name)
            out.append(
                AlertEvent(
                    "DegradedFor",
                    name,
                    detail=f"{name} has been degraded for {duration(now - since)} ({how}): "
                    f"{live_a.degraded} device(s) missing or failed; {state}",
                    extra={"degraded_s": str(round(now - since)), "since": str(round(since))},
                )
            )
        return out

    # ---- RebuildSlow --------------------------------------------------------------------
    def rebuilds(self, machine: Machine, live: LiveSample, now: float) -> list[AlertEvent]:
        out: list[AlertEvent] = []
        running = {}
        for a in live.arrays:
            s = a.sync
            if s is None or s.action not in REBUILDS or s.done_sectors is None:
                continue
            if s.action == "recover" and not s.targets:
                continue  # md runs nothing (app.model.sync_model.md_sync)
            running[a.name] = a
            r = self._rebuilds.get(a.name)
            if r is None or r.action != s.action or s.done_sectors < r.done0:
                fc = model_forecast(
                    machine, a.name, s.action, s, targets=s.targets, from_start=False
                )
                if fc is None or not fc.speed_kib_s:
                    continue
                self._rebuilds[a.name] = _Rebuild(
                    s.action, now, s.done_sectors, fc.speed_kib_s, fc.speed_why
                )
                continue
            watched = now - r.t0
            if r.said or watched < SLOW_AFTER_S:
                continue
            rate = (s.done_sectors - r.done0) / 2 / watched  # KiB/s of progress
            if rate >= r.forecast_kib_s * (1 - self.rebuild_slow):
                continue
            r.said = True
            below = 1 - rate / r.forecast_kib_s
            arr = machine.array(a.name)
            hint = ""
            if (
                arr is not None
                and arr.stripe_cache_size is not None
                and arr.stripe_cache_size <= 256
            ):
                hint = (
                    f"; its stripe cache is {arr.stripe_cache_size} pages (the default), which "
                    "holds parity rebuilds back (the md-stripe-cache finding raises it)"
                )
            out.append(
                AlertEvent(
                    "RebuildSlow",
                    a.name,
                    detail=f"the {s.action} of {a.name} ran at {speed(rate)} over the last "
                    f"{duration(watched)}, {below:.0%} below its forecast of "
                    f"{speed(r.forecast_kib_s)} ({r.why}){hint}",
                    extra={
                        "action": s.action,
                        "speed_kib_s": str(round(rate)),
                        "forecast_kib_s": str(r.forecast_kib_s),
                        "below_percent": str(round(below * 100)),
                    },
                )
            )
        for gone in set(self._rebuilds) - set(running):
            del self._rebuilds[gone]
        return out

    # ---- MemberLatency ------------------------------------------------------------------
    def latency(self, machine: Machine, live: LiveSample, now: float) -> list[AlertEvent]:
        io: dict[str, DiskIO] | None = None  # made once a window ends (big: 1,250 devices)
        out: list[AlertEvent] = []
        syncing = set()
        for a in live.arrays:
            if a.sync is None or a.sync.action in ("idle", "frozen", "pending", "delayed"):
                continue
            syncing.add(a.name)
            base = self._lat_base.get(a.name)
            if base is not None and base[0] <= now < base[0] + LATENCY_WINDOW_S:
                continue  # inside its window: nothing to compare yet (most looks)
            arr = machine.array(a.name)
            if arr is None:
                continue
            if io is None:
                io = {d.name: d for d in live.disk_io}
            disks = {
                d: m.device
                for m in arr.members
                if m.working and len(u := machine.disks_under(m.device)) == 1
                for d in u
            }
            cur = {d: io[d] for d in disks if d in io}
            if base is None or now < base[0]:
                self._lat_base[a.name] = (now, cur)
                continue
            self._lat_base[a.name] = (now, cur)
            waits = {d: w for d in cur if (w := _await_ms(base[1].get(d), cur[d])) is not None}
            said = self._lat_said.setdefault(a.name, set())
            out += _outliers(a.name, disks, waits, self.latency_factor, said, now - base[0])
        for gone in set(self._lat_base) - syncing:
            del self._lat_base[gone]
            self._lat_said.pop(gone, None)
        return out

    # ---- Heartbeat ----------------------------------------------------------------------
    def heartbeat(self, machine: Machine | None, now: float, targets: str) -> list[AlertEvent]:
        if not self.heartbeat_s or now - self._beat < self.heartbeat_s:
            return []
        self._beat = now
        arrays = [a for a in (machine.arrays if machine else ()) if not a.is_container]
        deg = [a.name for a in arrays if a.is_degraded]
        syn = [a.name for a in arrays if a.sync is not None and a.sync.active]
        names = ", ".join(a.name for a in arrays) or "none"
        return [
            AlertEvent(
                "Heartbeat",
                "",
                detail=f"raidman monitor on {self.host or 'this host'} runs: {len(arrays)} "
                f"array(s) watched ({names}); degraded: {', '.join(deg) or 'none'}; "
                f"syncing: {', '.join(syn) or 'none'}; alerts to {targets}",
                extra={"arrays": str(len(arrays)), "degraded": ",".join(deg)},
            )
        ]


def _await_ms(before: DiskIO | None, after: DiskIO) -> float | None:
    """Milliseconds per request between two looks (await), where the counters say it."""
    if before is None:
        return None
    times = (before.read_time_ms, before.write_time_ms, after.read_time_ms, after.write_time_ms)
    if any(t is None for t in times):
        return None
    n = (after.read_count + after.write_count) - (before.read_count + before.write_count)
    ms = (after.read_time_ms or 0) + (after.write_time_ms or 0)
    ms -= (before.read_time_ms or 0) + (before.write_time_ms or 0)
    if n < LATENCY_MIN_IOS or ms < 0:
        return None
    return ms / n


def _outliers(
    array: str,
    disks: dict[str, str],
    waits: dict[str, float],
    factor: float,
    said: set[str],
    window_s: float,
) -> Sequence[AlertEvent]:
    out: list[AlertEvent] = []
    if len(waits) < 3:
        return out
    for d, w in sorted(waits.items()):
        peers = [v for k, v in waits.items() if k != d]
        median = statistics.median(peers)
        if d in said or w < LATENCY_FLOOR_MS or w <= factor * max(median, 0.1):
            continue
        said.add(d)
        out.append(
            AlertEvent(
                "MemberLatency",
                array,
                disks[d],
                detail=f"{disks[d]} ({d}) answers in {w:.0f} ms per request over the last "
                f"{duration(window_s)} while the sync of {array} runs; its peers in "
                f"{median:.1f} ms (median): {w / max(median, 0.1):.0f} × theirs. A member this "
                "slow holds the array back, and is often the next to fail: look at its SMART "
                "and cabling",
                extra={"await_ms": f"{w:.1f}", "peers_median_ms": f"{median:.1f}"},
            )
        )
    return out
