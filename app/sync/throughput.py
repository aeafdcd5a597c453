"""Per-device throughput from cumulative I/O counters (psutil's per-disk counters), so a slow
member stands out next to the array's sync speed."""

from __future__ import annotations

from dataclasses import dataclass

from app.model.live import DiskIO, LiveSample


@dataclass(frozen=True, slots=True)
class Rate:
    device: str
    read_bytes_s: float
    write_bytes_s: float

    @property
    def total_bytes_s(self) -> float:
        return self.read_bytes_s + self.write_bytes_s


class ThroughputMeter:
    """Feed successive samples; ``rates`` holds bytes/s between the last two of them."""

    def __init__(self) -> None:
        self._prev: dict[str, DiskIO] = {}
        self._prev_t: float | None = None
        self.rates: dict[str, Rate] = {}

    def update(self, sample: LiveSample) -> dict[str, Rate]:
        now = {d.name: d for d in sample.disk_io}
        rates: dict[str, Rate] = {}
        if self._prev_t is not None and sample.taken_at > self._prev_t:
            dt = sample.taken_at - self._prev_t
            for name, cur in now.items():
                old = self._prev.get(name)
                if old is None:
                    continue
                dr = cur.read_bytes - old.read_bytes
                dw = cur.write_bytes - old.write_bytes
                if dr < 0 or dw < 0:  # counters reset (device re-appeared): skip one interval
                    continue
                rates[name] = Rate(name, dr / dt, dw / dt)
        self._prev = now
        self._prev_t = sample.taken_at
        self.rates = rates
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
