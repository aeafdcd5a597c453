"""Live I/O in ``raidman report``: two samples a second apart through the backend's one 1 Hz
sampler (``Backend.sample``: /proc/diskstats), the rates by app.sync.throughput's meter —
the same numbers the TUI's I/O view shows from the session's samples.

``disks[].io``, ``arrays[].io`` and ``arrays[].members[].io`` =
``{read_bytes_s, write_bytes_s, read_iops, write_iops, util, await_ms}`` (util in percent of the
interval with I/O in flight; null where the kernel's counter is not there).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from app.backend import Backend
from app.format import human_bytes
from app.model import Machine
from app.sync.throughput import Rate, ThroughputMeter

INTERVAL_S = 1.0


def io_rates(
    backend: Backend, *, interval: float = INTERVAL_S, sleep: Callable[[float], None] | None = None
) -> dict[str, Rate]:
    """Every device's rates over ``interval`` seconds (empty when the backend cannot sample)."""
    meter = ThroughputMeter()
    try:
        meter.update(backend.sample())
        (sleep or time.sleep)(interval)
        return dict(meter.update(backend.sample()))
    except Exception:  # a backend that cannot sample: no rates, never a lost report
        return {}


def rate_json(r: Rate | None) -> dict[str, Any] | None:
    if r is None:
        return None

    def rnd(v: float | None, n: int = 1) -> float | None:
        return None if v is None else round(v, n)

    return {
        "read_bytes_s": round(r.read_bytes_s),
        "write_bytes_s": round(r.write_bytes_s),
        "read_iops": rnd(r.read_iops),
        "write_iops": rnd(r.write_iops),
        "util": rnd(r.util),
        "await_ms": rnd(r.await_ms, 2),
    }


def add_io_json(report: dict[str, Any], rates: Mapping[str, Rate], machine: Machine) -> None:
    """Put each device's rates into the report (in place)."""
    for d in report.get("disks", []):
        d["io"] = rate_json(rates.get(d["name"]))
    for a in report.get("arrays", []):
        a["io"] = rate_json(rates.get(a["name"]))
        for m in a.get("members", []):
            m["io"] = rate_json(rates.get(m["device"]))


def busiest(rates: Mapping[str, Rate], names: set[str]) -> list[Rate]:
    """The rates of ``names``, busiest (most bytes per second) first."""
    return sorted(
        (r for n, r in rates.items() if n in names), key=lambda r: (-r.total_bytes_s, r.device)
    )


def rate_line(r: Rate) -> str:
    def num(v: float | None, unit: str, fmt: str = "{:.0f}") -> str:
        return "-" if v is None else fmt.format(v) + unit

    iops = None if r.read_iops is None or r.write_iops is None else r.read_iops + r.write_iops
    return (
        f"read {human_bytes(int(r.read_bytes_s))}/s  write {human_bytes(int(r.write_bytes_s))}/s"
        f"  {num(iops, ' IOPS')}  util {num(r.util, '%')}"
        f"  await {num(r.await_ms, ' ms', '{:.1f}')}"
    )


def io_text(rates: Mapping[str, Rate], machine: Machine) -> list[str]:
    names = {d.name for d in machine.disks} | {a.name for a in machine.arrays}
    rows = busiest(rates, names)
    if not rows:
        return ["  no I/O counters could be sampled"]
    return [f"  {r.device:<12} {rate_line(r)}" for r in rows]
