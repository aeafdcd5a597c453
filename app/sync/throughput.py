"""Per-device throughput from cumulative I/O counters (psutil's per-disk counters), so a slow
member stands out next to the array's sync speed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.model.live import DiskIO, LiveSample


@dataclass(frozen=True, slots=True)
class Rate:
    """One device between two samples, as iostat -x derives it from /proc/diskstats deltas
    (Documentation/admin-guide/iostats.rst): bytes and requests per second, ``util`` the
    share of the interval with I/O in flight (field 13, percent), ``await_ms`` the time a
    request took on average (fields 7 + 11 over reads + writes completed). None: unknown."""

    device: str
    read_bytes_s: float
    write_bytes_s: float
    read_iops: float | None = None
    write_iops: float | None = None
    util: float | None = None
    await_ms: float | None = None

    @property
    def total_bytes_s(self) -> float:
        return self.read_bytes_s + self.write_bytes_s


def _delta(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None or b < a else b - a


def rate_between(old: DiskIO, cur: DiskIO, dt: float) -> Rate | None:
    """The rates of one device over ``dt`` seconds; None when a counter went back (reset)."""
    dr = cur.read_bytes - old.read_bytes
    dw = cur.write_bytes - old.write_bytes
    if dr < 0 or dw < 0 or dt <= 0:
        return None
    nr, nw = _delta(old.read_count, cur.read_count), _delta(old.write_count, cur.write_count)
    busy = _delta(old.busy_time_ms, cur.busy_time_ms)
    rt, wt = (
        _delta(old.read_time_ms, cur.read_time_ms),
        _delta(old.write_time_ms, cur.write_time_ms),
    )
    done = (nr or 0) + (nw or 0)
    waited = None if rt is None or wt is None else rt + wt
    return Rate(
        cur.name,
        dr / dt,
        dw / dt,
        read_iops=None if nr is None else nr / dt,
        write_iops=None if nw is None else nw / dt,
        util=None if busy is None else min(100.0, busy / (dt * 10)),
        await_ms=(waited / done if done else 0.0) if waited is not None else None,
    )


def _idle(r: Rate) -> bool:
    return r.total_bytes_s == 0 and not r.read_iops and not r.write_iops and not r.util


class ThroughputMeter:
    """Feed successive samples; ``rates`` holds bytes/s between the last two of them.

    Once the set of devices is steady, a sample costs work only for the devices whose counters
    moved (or that were moving the time before): an idle disk keeps its zero rate, and
    ``rates`` is a new dict only when a rate changed (one C-level copy, never mutated after it
    is handed out, so a view may hold it without copying).

    ``rates=False``: only the counters are kept (nothing shows a rate: the headless monitor,
    which needs the kernel's counters of a sync's members and no per-disk speed)."""

    def __init__(self, *, rates: bool = True) -> None:
        self._prev: dict[str, DiskIO] = {}  # the last sample's counters, by device
        self._prev_t: float | None = None
        self._with_rates = rates
        self.rates: dict[str, Rate] = {}
        # the devices whose rate in ``rates`` is idle (nothing moved): a sample that hands the
        # same counters object again costs them a set lookup (most of big's 1,200 devices)
        self._idle: set[str] = set()

    @property
    def counters(self) -> Mapping[str, DiskIO]:
        """The last sample's counters by device (kept in place: read it, do not keep it)."""
        return self._prev

    def update(self, sample: LiveSample) -> dict[str, Rate]:
        t = sample.taken_at
        if not self._with_rates:
            self._prev = {d.name: d for d in sample.disk_io}
            self._prev_t = t
            return self.rates
        prev, rates, idle = self._prev, self.rates, self._idle
        if (
            self._prev_t is None
            or t <= self._prev_t
            or len(sample.disk_io) != len(prev)
            or len(rates) != len(prev)
        ):
            return self._full(sample)
        dt = t - self._prev_t
        changed: dict[str, Rate | None] = {}  # None: reset, no rate this interval
        moved: list[DiskIO] = []
        for cur in sample.disk_io:
            name = cur.name
            old = prev.get(name)
            if old is None:  # a device came (another went): not steady
                return self._full(sample)
            if old is cur:  # the same counters object: nothing moved
                if name in idle:
                    continue  # idle, and was idle: nothing to do
            else:
                moved.append(cur)
            rate = rate_between(old, cur, dt)
            if rate is None:  # counters reset (device re-appeared): skip one interval
                changed[name] = None
                continue
            if rate == rates.get(name):
                continue  # the same rate as before (idle and idle): nothing to hand out
            changed[name] = rate
        for cur in moved:
            prev[cur.name] = cur
        self._prev_t = t
        if changed:
            rates = dict(rates)
            for name, rate in changed.items():
                if rate is None:
                    del rates[name]
                    idle.discard(name)
                else:
                    rates[name] = rate
                    if _idle(rate):
                        idle.add(name)
                    else:
                        idle.discard(name)
            self.rates = rates
        return rates

    def _full(self, sample: LiveSample) -> dict[str, Rate]:
        """Every device from scratch: the first sample, a device that came, went or was reset."""
        now = {d.name: d for d in sample.disk_io}
        rates: dict[str, Rate] = {}
        if self._prev_t is not None and sample.taken_at > self._prev_t:
            dt = sample.taken_at - self._prev_t
            for name, cur in now.items():
                old = self._prev.get(name)
                if old is None:
                    continue
                rate = rate_between(old, cur, dt)
                if rate is not None:  # None: counters reset (device re-appeared)
                    rates[name] = rate
        self._prev = now
        self._prev_t = sample.taken_at
        self.rates = rates
        self._idle = {name for name, r in rates.items() if _idle(r)}
        return rates

    def slowest(self, devices: tuple[str, ...], *, ratio: float = 0.6) -> tuple[str, ...]:
        """Members whose throughput is below ``ratio`` × the median of the given members'."""
        vals = sorted(self.rates[d].total_bytes_s for d in devices if d in self.rates)
        if len(vals) < 3:
            return ()
        median = vals[len(vals) // 2]
        if median <= 0:
            return ()
        return tuple(
            d for d in devices if d in self.rates and self.rates[d].total_bytes_s < ratio * median
        )
