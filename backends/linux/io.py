"""Per-disk I/O counters through psutil (no process, one read of /proc/diskstats)."""

from __future__ import annotations

from app.model.live import DiskIO


def read_disk_io() -> tuple[DiskIO, ...]:
    """``psutil.disk_io_counters(perdisk=True)`` as ``DiskIO`` values; () when unavailable."""
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil is a dependency
        return ()
    try:
        counters = psutil.disk_io_counters(perdisk=True, nowrap=True)
    except (OSError, RuntimeError, ValueError):
        return ()
    if not counters:
        return ()
    out = []
    for name, c in sorted(counters.items()):
        busy = getattr(c, "busy_time", None)
        out.append(
            DiskIO(
                name=name,
                read_bytes=int(c.read_bytes),
                write_bytes=int(c.write_bytes),
                read_count=int(c.read_count),
                write_count=int(c.write_count),
                busy_time_ms=int(busy) if busy is not None else None,
            )
        )
    return tuple(out)
