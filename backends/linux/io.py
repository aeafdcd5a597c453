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
        rt, wt = getattr(c, "read_time", None), getattr(c, "write_time", None)
        out.append(
            DiskIO(
                name=name,
                read_bytes=int(c.read_bytes),
                write_bytes=int(c.write_bytes),
                read_count=int(c.read_count),
                write_count=int(c.write_count),
                busy_time_ms=int(busy) if busy is not None else None,
                read_time_ms=int(rt) if rt is not None else None,
                write_time_ms=int(wt) if wt is not None else None,
            )
        )
    return tuple(out)


SECTOR = 512  # /proc/diskstats counts 512-byte sectors whatever the device's own size


def parse_diskstats(text: str) -> tuple[DiskIO, ...]:
    """``/proc/diskstats`` as ``DiskIO`` values, the way psutil reads it (for a machine psutil
    cannot see: one reached over ssh). Lines of another shape are skipped."""
    out = []
    for line in text.splitlines():
        f = line.split()
        rt = wt = None
        try:
            if len(f) == 15:  # Linux 2.4
                name, reads, rsect, writes, wsect, busy = (
                    f[3],
                    int(f[2]),
                    int(f[5]),
                    int(f[7]),
                    int(f[9]),
                    int(f[12]),
                )
            elif len(f) == 14 or len(f) >= 18:
                name, reads, rsect, writes, wsect, busy = (
                    f[2],
                    int(f[3]),
                    int(f[5]),
                    int(f[7]),
                    int(f[9]),
                    int(f[12]),
                )
                rt, wt = int(f[6]), int(f[10])
            elif len(f) == 7:  # a partition on 2.6
                name, reads, rsect, writes, wsect = f[2], int(f[3]), int(f[4]), int(f[5]), int(f[6])
                busy = 0
            else:
                continue
        except ValueError:
            continue
        out.append(
            DiskIO(
                name=name,
                read_bytes=rsect * SECTOR,
                write_bytes=wsect * SECTOR,
                read_count=reads,
                write_count=writes,
                busy_time_ms=busy,
                read_time_ms=rt,
                write_time_ms=wt,
            )
        )
    return tuple(sorted(out, key=lambda d: d.name))
