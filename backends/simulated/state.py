"""The simulation's mutable state: disks, partitions, arrays and their members, LVM,
filesystems, I/O counters, files (the records are in :mod:`backends.simulated.records`). What
moves it forward in time (the speed model, with its
documentation) is :mod:`backends.simulated.speed`, the ``SyncModel`` half of ``SimState``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from backends.simulated.records import (
    SimArray,
    SimDisk,
    SimFS,
    SimIO,
    SimLV,
    SimPartition,
    SimPV,
    SimVG,
)
from backends.simulated.speed import SyncModel

DEFAULT_SPEED_MIN = 1000
DEFAULT_SPEED_MAX = 200000
IO_LOG_MAX = 4096  # SimState.io_log: longer, it is emptied (readers start over)


@dataclass
class SimState(SyncModel):
    host: str
    kernel: str
    t: float
    t0: float
    disks: dict[str, SimDisk] = field(default_factory=dict)
    partitions: dict[str, SimPartition] = field(default_factory=dict)
    arrays: dict[str, SimArray] = field(default_factory=dict)
    pvs: dict[str, SimPV] = field(default_factory=dict)
    vgs: dict[str, SimVG] = field(default_factory=dict)
    lvs: dict[str, SimLV] = field(default_factory=dict)  # key "vg/lv"
    filesystems: dict[str, SimFS] = field(default_factory=dict)
    io: dict[str, SimIO] = field(default_factory=dict)
    speed_limit_min: int = DEFAULT_SPEED_MIN
    speed_limit_max: int = DEFAULT_SPEED_MAX
    mdadm_conf: str | None = None
    files: dict[str, str] = field(default_factory=dict)  # other writable files
    # files with something bind-mounted on them (virtme-ng's and containers' /etc/fstab): listed
    # in /proc/self/mountinfo; renaming over or removing one fails with EBUSY
    bind_mounts: set[str] = field(default_factory=set)
    md_superblocks: dict[str, tuple[str, str]] = field(default_factory=dict)  # stale: uuid, name
    stopped_arrays: dict[str, SimArray] = field(default_factory=dict)  # uuid -> what stopped
    generation: int = 0  # bumped on every structural change (cache key for probe())
    # programs run so far: any of them may have changed an array (mdadm, a sysfs write); with
    # the generation (every sync's start and end), what a sample may hand out again unlooked
    runs: int = 0
    # the devices whose I/O counters moved, in order (a sample's cache reads on from where it
    # was; emptied when long, with io_epoch bumped: a reader then starts over)
    io_log: list[str] = field(default_factory=list)
    io_epoch: int = 0
    sync_order: int = 0  # syncs asked for so far (SyncJob.queued)
    mem_total_kib: int = 16 * 1024 * 1024  # /proc/meminfo
    mem_available_kib: int = 12 * 1024 * 1024
    events: list[tuple[float, str, str]] = field(default_factory=list)  # (time, array, text)
    # the kernel's own lines a scenario starts with (time, text); md's later ones are made from
    # ``events`` (backends/simulated/programs/kernel_log.py)
    kernel_lines: list[tuple[float, str]] = field(default_factory=list)
    uuid_counter: int = 0
    # the machine booted this long before the scenario opens (/proc/uptime: the kernel's
    # /proc/diskstats counters are since then)
    uptime_at_t0: float = 9 * 86400.0
    ledctl: bool = False  # ledmon's ledctl installed (locate through SGPIO/NPEM/VMD)

    # ---- helpers ------------------------------------------------------------------------
    def next_sync_order(self) -> int:
        self.sync_order += 1
        return self.sync_order

    def touch(self) -> None:
        self.generation += 1
        self.update_waits()

    def new_uuid(self, seed: str = "") -> str:
        """A deterministic UUID (scenarios must be reproducible)."""
        self.uuid_counter += 1
        n = (self.uuid_counter * 0x9E3779B97F4A7C15 + sum(map(ord, seed)) * 0x2545F491) % (1 << 128)
        s = f"{n:032x}"
        return f"{s[:8]}-{s[8:12]}-{s[12:16]}-{s[16:20]}-{s[20:]}"

    def disk_of(self, dev: str) -> str | None:
        if dev in self.disks:
            return dev
        p = self.partitions.get(dev)
        return p.disk if p else None

    def device_size(self, dev: str) -> int | None:
        if dev in self.disks:
            return self.disks[dev].size_bytes
        if dev in self.partitions:
            return self.partitions[dev].size_bytes
        if dev in self.arrays:
            return self.arrays[dev].size_kib() * 1024
        for lv in self.lvs.values():
            if lv.kernel_name == dev:
                return lv.size_bytes
        return None

    def holders(self, dev: str) -> list[str]:
        """What uses ``dev`` right now: arrays, PVs, partitions, filesystems."""
        out = [a.name for a in self.arrays.values() if a.member(dev) is not None]
        if dev in self.pvs:
            out.append(f"LVM PV ({self.pvs[dev].vg or 'no VG'})")
        out.extend(p.name for p in self.partitions.values() if p.disk == dev)
        fs = self.filesystems.get(dev)
        if fs is not None and fs.mountpoints:
            out.append(f"mounted at {fs.mountpoints[0]}")
        return out

    def lv_by_kernel(self, kname: str) -> SimLV | None:
        for lv in self.lvs.values():
            if lv.kernel_name == kname:
                return lv
        return None

    def next_dm(self) -> str:
        used = {lv.kernel_name for lv in self.lvs.values()}
        i = 0
        while f"dm-{i}" in used:
            i += 1
        return f"dm-{i}"

    def add_io(self, dev: str, read: int, write: int) -> None:
        """Credit I/O to a member device (partition or disk) and the SMART counters of its disk."""
        if read == 0 and write == 0:
            return
        if len(self.io_log) > IO_LOG_MAX:
            self.io_log.clear()
            self.io_epoch += 1
        self.io_log.append(dev)
        disk = self.disk_of(dev)
        seq = self.disks[disk].seq_kib_s * 1024 if disk is not None else None
        self.io.setdefault(dev, SimIO()).add(read, write, seq)
        if disk is not None:
            d = self.disks[disk]
            d.smart_written_bytes += write
            d.smart_read_bytes += read
            if disk != dev:
                self.io_log.append(disk)
                self.io.setdefault(disk, SimIO()).add(read, write, seq)
