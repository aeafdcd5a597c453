"""The files the simulation serves (read_text) and the ones a plan may write (tee)."""

from __future__ import annotations

from app.model import levels
from backends.simulated.mdstat import layout_number, render_mdstat
from backends.simulated.records import SimArray
from backends.simulated.snapshot import partition_alignment_offset
from backends.simulated.state import SimState

MD_TUNABLES = (
    "sync_action",
    "stripe_cache_size",
    "sync_speed_min",
    "sync_speed_max",
    "sync_min",
)


class WriteError(Exception):
    """A write the kernel would refuse; the message is errno's text."""


def _speed_limit_text(value: int | None, system: int) -> str:
    if value is None:
        return f"{system} (system)"
    return f"{value} (local)"


# md.c md_redundancy_attrs: files a RAID-0 or linear array does not have (VM: no
# md/degraded, md/sync_action there)
REDUNDANCY_ATTRS = frozenset(
    {"sync_action", "last_sync_action", "mismatch_cnt", "sync_speed_min", "sync_speed_max",
     "sync_speed", "sync_completed", "sync_min", "sync_max", "degraded"}
)  # fmt: skip


def _reshaping(new: int, old: int | None) -> str:
    """md.c raid_disks_show/chunk_size_show/layout_show: "new (old)" while a reshape changes it
    (VM: raid_disks "3 (2)", layout "2 (18)")."""
    return f"{new} ({old})" if old is not None and old != new else str(new)


def md_attr(st: SimState, a: SimArray, attr: str) -> str | None:
    job = a.job
    old = a.reshaping()
    lo, hi = st.effective_limits(a)
    if attr.startswith("dev-"):
        dev, _, leaf = attr[4:].partition("/")
        m = a.member(dev)
        if m is None:
            return None
        dev_values = {
            "state": ",".join(sorted(m.state)) if m.state else "",
            # md.c slot_show: a journal device's slot reads "journal"
            "slot": "journal"
            if "journal" in m.state
            else "none"
            if m.slot is None
            else str(m.slot),
            "offset": str(m.data_offset),
            "size": str(a.component_kib),
            "errors": str(m.errors),
            "recovery_start": "none" if m.recovery_start is None else str(m.recovery_start),
        }
        return dev_values.get(leaf)
    parity = a.level in levels.PARITY
    if attr in REDUNDANCY_ATTRS and not a.redundant() and a.level != "container":
        return None  # md.c md_redundancy_group: only for levels with a sync_request
    if attr == "stripe_cache_size":
        return str(a.stripe_cache_size) if parity else None
    if attr == "stripe_cache_active":
        return str(a.stripe_cache_size // 2 if job else 0) if parity else None
    values: dict[str, str] = {
        "level": a.level if a.level != "container" else "",
        "array_state": a.array_state if a.level != "container" else "inactive",
        "raid_disks": _reshaping(a.raid_disks, old.raid_disks if old else None),
        "chunk_size": _reshaping(a.chunk_kib * 1024, old.chunk_kib * 1024 if old else None),
        "layout": _reshaping(layout_number(a), layout_number(a, old) if old else None),
        "degraded": str(a.degraded()),
        # raid0.c/linear.c leave mddev->dev_sectors 0 (VM: component_size "0")
        "component_size": str(a.component_kib) if a.level not in ("raid0", "linear") else "0",
        "metadata_version": a.metadata,
        "sync_action": (
            "recover"
            if a.recovery_needed_until is not None and st.t < a.recovery_needed_until
            else "idle"
        )
        if job is None
        else ("frozen" if job.frozen else job.action),
        "last_sync_action": a.last_sync_action,
        "mismatch_cnt": str(a.mismatch_cnt),
        "sync_min": str(a.sync_min),
        "sync_completed": "none"
        if job is None
        else ("delayed" if job.waiting else f"{int(job.pos)} / {job.total}"),
        "sync_speed": "none" if job is None or job.waiting else str(st.reported_speed(a)),
        "sync_speed_min": _speed_limit_text(a.sync_speed_min, lo),
        "sync_speed_max": _speed_limit_text(a.sync_speed_max, hi),
        "reshape_position": str(a.reshape_position()) if old is not None else "none",
        "bitmap/location": "+8" if a.bitmap == "internal" else "none",
        "consistency_policy": a.consistency_policy(),
    }
    return values.get(attr)


def render_bind_mounts(st: SimState) -> str:
    """/proc/self/mountinfo's lines for the files bind-mounted from a tmpfs, as virtme-ng
    mounts /etc/fstab (``45 23 0:40 /fstab /etc/fstab rw,relatime - tmpfs tmpfs rw``), after
    the root's. Only these: the simulated filesystems' mounts reach the model through
    ``backends.simulated.usage``, and nothing reads them from here."""
    lines = ["22 1 254:0 / / rw,relatime - ext4 /dev/vda rw"]
    for i, p in enumerate(sorted(st.bind_mounts)):
        name = p.rsplit("/", 1)[-1]
        lines.append(f"{45 + i} 22 0:40 /{name} {p} rw,relatime - tmpfs tmpfs rw")
    return "".join(x + "\n" for x in lines)


def read_path(st: SimState, path: str) -> str | None:
    if path == "/proc/mdstat":
        return render_mdstat(st)
    if path == "/etc/mdadm/mdadm.conf" or path == "/etc/mdadm.conf":
        return st.mdadm_conf
    if path == "/proc/sys/dev/raid/speed_limit_min":
        return f"{st.speed_limit_min}\n"
    if path == "/proc/sys/dev/raid/speed_limit_max":
        return f"{st.speed_limit_max}\n"
    if path == "/proc/uptime":  # seconds since boot, and idle seconds summed over CPUs
        up = st.t - st.t0 + st.uptime_at_t0
        return f"{up:.2f} {up * 1.8:.2f}\n"
    if path == "/proc/meminfo":
        return (
            f"MemTotal:       {st.mem_total_kib} kB\n"
            f"MemFree:        {st.mem_available_kib // 2} kB\n"
            f"MemAvailable:   {st.mem_available_kib} kB\n"
        )
    if path in st.files:
        return st.files[path]
    if path == "/proc/self/mountinfo" and st.bind_mounts:
        return render_bind_mounts(st)
    if not path.startswith("/sys/block/") and not path.startswith("/sys/class/block/"):
        return None
    rest = path.split("/", 3)[3] if path.startswith("/sys/block/") else path.split("/", 4)[4]
    dev, _, attr = rest.partition("/")
    val = _block_attr(st, dev, attr)
    return None if val is None else val + "\n"


def _block_attr(st: SimState, dev: str, attr: str) -> str | None:
    a = st.arrays.get(dev)
    if a is not None:
        if attr.startswith("md/"):
            return md_attr(st, a, attr[3:])
        if attr == "size":
            return str(a.size_kib() * 2)
        if attr == "queue/scheduler":
            return "none"
        if attr == "queue/optimal_io_size":
            return str(levels.optimal_io_bytes(a.level, a.raid_disks, a.chunk_kib * 1024, a.layout))
        if attr == "queue/minimum_io_size":
            return str(a.chunk_kib * 1024 if a.level in levels.STRIPED and a.chunk_kib else 512)
        if attr == "queue/discard_max_bytes":
            return str(_md_discard_max(st, a))
        if attr == "slaves":
            return " ".join(m.device for m in a.members)
        return None
    d = st.disks.get(dev)
    if d is not None:
        parts = {p.name: p for p in st.partitions.values() if p.disk == dev}
        head, _, leaf = attr.partition("/")
        if head in parts:
            p = parts[head]
            return {
                "start": str(p.start),
                "size": str(p.size_bytes // 512),
                "alignment_offset": str(partition_alignment_offset(d, p.start)),
                "partition": str(p.number),
            }.get(leaf)
        sched = " ".join(f"[{s}]" if s == d.scheduler else s for s in d.schedulers)
        values = {
            "size": str(d.size_bytes // 512),
            "alignment_offset": str(d.alignment_offset),
            "removable": "1" if d.removable else "0",
            "queue/scheduler": sched,
            "queue/rotational": "1" if d.rotational else "0",
            "queue/logical_block_size": str(d.logical),
            "queue/physical_block_size": str(d.physical),
            "queue/hw_sector_size": str(d.logical),
            "queue/minimum_io_size": str(d.min_io),
            "queue/optimal_io_size": str(d.optimal_io),
            "queue/discard_granularity": str(d.discard_granularity),
            "queue/discard_max_bytes": str(d.discard_max_bytes),
            "queue/read_ahead_kb": "128",
            "queue/nr_requests": "64" if d.transport != "nvme" else "1023",
            "device/model": d.model,
        }
        return values.get(attr)
    return None


def _md_discard_max(st: SimState, a: SimArray) -> int:
    """What md publishes: RAID-4/5/6 drop discards (0) unless raid456's
    devices_handle_discard_safely=Y, which the simulator leaves at the kernel's default N; other
    levels pass on the smallest limit of their members' disks."""
    if a.level in levels.PARITY or a.level == "container":
        return 0
    limits = []
    for m in a.members:
        disk = st.disks.get(m.device)
        if disk is None and m.device in st.partitions:
            disk = st.disks.get(st.partitions[m.device].disk)
        limits.append(disk.discard_max_bytes if disk is not None else 0)
    return min(limits) if limits else 0


def write_path(st: SimState, path: str, value: str) -> None:
    """Apply a write to a modelled file; raises WriteError with errno's text."""
    v = value.strip()
    if path in ("/proc/sys/dev/raid/speed_limit_min", "/proc/sys/dev/raid/speed_limit_max"):
        set_sysctl(st, path.rsplit("/", 1)[1], v)
        return
    if path in ("/etc/mdadm/mdadm.conf", "/etc/mdadm.conf"):
        st.mdadm_conf = value
        return
    if path.startswith("/sys/block/"):
        rest = path[len("/sys/block/") :]
        dev, _, attr = rest.partition("/")
        if dev in st.arrays and attr.startswith("md/"):
            write_md(st, st.arrays[dev], attr[3:], v)
            return
        if dev in st.disks and attr == "queue/scheduler":
            d = st.disks[dev]
            if v not in d.schedulers:
                raise WriteError("Invalid argument")
            d.scheduler = v
            st.touch()
            return
        if dev in st.arrays and attr == "queue/scheduler":
            if v != "none":
                raise WriteError("Invalid argument")
            return
        raise WriteError(
            "No such file or directory" if read_path(st, path) is None else "Permission denied"
        )
    if path.startswith("/etc/") or path.startswith("/tmp/"):
        st.files[path] = value
        return
    if path.startswith("/sys/class/enclosure/") and path.endswith(("/locate", "/fault")):
        if path not in st.files:
            raise WriteError("No such file or directory")
        if v not in ("0", "1"):  # enclosure.c set_component_locate/fault: kstrtoint, on/off
            raise WriteError("Invalid argument")
        st.files[path] = f"{v}\n"
        return
    raise WriteError("No such file or directory")


def _int(v: str) -> int:
    try:
        return int(v)
    except ValueError:
        raise WriteError("Invalid argument") from None


def set_sysctl(st: SimState, key: str, v: str) -> None:
    n = _int(v)
    if n <= 0:
        raise WriteError("Invalid argument")
    for a in st.arrays.values():
        st.rate_changed(a)
    if key == "speed_limit_min":
        st.speed_limit_min = n
    elif key == "speed_limit_max":
        st.speed_limit_max = n
    else:
        raise WriteError("No such file or directory")


def write_md(st: SimState, a: SimArray, attr: str, v: str) -> None:
    parity = a.level in levels.PARITY
    if attr in REDUNDANCY_ATTRS and not a.redundant() and a.level != "container":
        return None  # md.c md_redundancy_group: only for levels with a sync_request
    if attr == "stripe_cache_size":
        if not parity:
            raise WriteError("No such file or directory")
        n = _int(v)
        if n < 17 or n > 32768:
            raise WriteError("Invalid argument")
        st.rate_changed(a)
        a.stripe_cache_size = n
        st.touch()
        return
    if attr in ("sync_speed_min", "sync_speed_max"):
        val: int | None
        if v in ("system", "default"):
            val = None
        else:
            val = _int(v)
            if val < 0:
                raise WriteError("Invalid argument")
            if val == 0:
                val = None
        st.rate_changed(a)
        if attr == "sync_speed_min":
            a.sync_speed_min = val
        else:
            a.sync_speed_max = val
        st.touch()
        return
    if attr == "sync_action":
        sync_action(st, a, v)
        return
    if attr == "sync_min":
        n = _int(v)
        if n < 0 or a.job is not None:  # md.c min_sync_store: -EBUSY while a sync runs
            raise WriteError("Device or resource busy" if n >= 0 else "Invalid argument")
        a.sync_min = n
        st.touch()
        return
    if md_attr(st, a, attr) is None:
        raise WriteError("No such file or directory")
    raise WriteError("Permission denied")


def sync_action(st: SimState, a: SimArray, v: str) -> None:
    if not a.redundant():
        raise WriteError("Invalid argument")
    job = a.job
    if v == "frozen":
        if job is not None:
            st.rate_changed(a)
            job.frozen = True
            st.rate_changed(a)
        st.touch()
        return
    if v == "idle":
        if job is None:
            return
        st.rate_changed(a)
        if job.frozen:
            job.frozen = False
        elif job.action in ("check", "repair"):
            # interrupted: the kernel records how far it got, nothing else happens
            a.mismatch_cnt = int(job.mismatches * job.pos / max(1, job.total))
            a.sync_min = int(job.pos)
            a.job = None
            a.array_state = "clean"
            st.events.append((st.t, a.name, f"{job.action} interrupted"))
        else:
            # resync/recovery are restarted by md from their checkpoint: a fresh speed window
            job.started_at = st.t
            job.hist = [(st.t, job.pos)]
        st.touch()
        return
    if v in ("check", "repair"):
        if job is not None:
            raise WriteError("Device or resource busy")
        if a.degraded() > 0:
            raise WriteError("Device or resource busy")
        st.start_sync(a, v, pos=float(min(a.sync_min, max(0, a.component_kib * 2 - 8))))
        return
    if v in ("resync", "recover"):
        if job is not None:
            raise WriteError("Device or resource busy")
        if v == "resync":
            st.start_sync(a, "resync")
        else:
            st.maybe_start_recovery(a)
        return
    raise WriteError("Invalid argument")


def mdadm_conf_line(st: SimState, a: SimArray) -> str:
    if a.level == "container":
        return f"ARRAY metadata={a.metadata.split(':', 1)[1]} UUID={_md_uuid(a.uuid)}"
    if a.container is not None:
        return (
            f"ARRAY /dev/md/{a.array_name or a.name} container={a.container} "
            f"member={a.member_index} UUID={_md_uuid(a.uuid)}"
        )
    dev = f"/dev/md/{a.array_name.split(':')[-1]}" if a.array_name else f"/dev/{a.name}"
    line = f"ARRAY {dev} metadata={a.metadata}"
    if a.array_name:
        line += f" name={a.array_name}"
    return line + f" UUID={_md_uuid(a.uuid)}"


def _md_uuid(uuid: str) -> str:
    h = uuid.replace("-", "")
    return ":".join(h[i : i + 8] for i in range(0, 32, 8))
