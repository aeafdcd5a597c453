"""The simulation's mutable state: disks, partitions, arrays and their members, LVM,
filesystems, I/O counters, files. What moves it forward in time (the speed model, with its
documentation) is :mod:`backends.simulated.speed`, the ``SyncModel`` half of ``SimState``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from app.model import levels
from backends.simulated.speed import SEQ_SATA_SSD, SyncJob, SyncModel

DEFAULT_SPEED_MIN = 1000
DEFAULT_SPEED_MAX = 200000
IO_LOG_MAX = 4096  # SimState.io_log: longer, it is emptied (readers start over)


# --- devices -------------------------------------------------------------------------------
@dataclass
class SimSmart:
    """SMART counters of one disk. Counters grow with the host writes the simulation makes."""

    protocol: str | None  # "ATA", "NVMe", None when unavailable
    available: bool = True
    reason: str | None = None
    lbas_written: int = 0  # Total_LBAs_Written (241) at t0
    lbas_read: int = 0
    # firmware LBAs counted per host LBA written (1 normally; a scenario may calibrate it)
    lba_count_factor: Fraction = Fraction(1)
    power_on_hours: int = 1000
    temperature_c: int = 30
    wlc_raw: int = 0  # Wear_Leveling_Count raw (average P/E cycles) at t0
    rated_pe: int = 0  # 0: no Wear_Leveling_Count attribute (HDD)
    reallocated: int = 0
    # NVMe
    data_units_written: int = 0
    data_units_read: int = 0
    percentage_used: int = 0
    nvme_tbw_per_percent: int = 0  # bytes per percentage point; 0: constant
    health: str = "PASSED"
    # issue 26: the attribute table's trouble and the self-test log (backends/simulated/selftest.py)
    reallocated_value: int = 100  # normalized Reallocated_Sector_Ct (threshold 10)
    pending: int = 0  # Current_Pending_Sector raw
    crc_errors: int = 0  # UDMA_CRC_Error_Count raw
    # (kind, status, lifetime hours (negative: that many hours before now), LBA of the first
    # error or None), newest first
    self_tests: list[tuple[str, str, int, int | None]] = field(
        default_factory=lambda: [("Short offline", "Completed without error", -168, None)]
    )
    running_test: tuple[str, float, float] | None = None  # (kind, started at, duration s)
    fail_test_at_lba: int | None = None  # the next self-test finds a read failure here


@dataclass
class SimDisk:
    name: str
    size_bytes: int
    model: str
    serial: str
    transport: str  # sata, nvme, usb
    rotational: bool
    vendor: str | None = None
    wwn: str | None = None
    logical: int = 512
    physical: int = 512
    min_io: int = 512
    optimal_io: int = 0
    alignment_offset: int = 0
    discard_granularity: int = 512
    discard_max_bytes: int = 2147450880
    scheduler: str = "mq-deadline"
    schedulers: tuple[str, ...] = ("mq-deadline", "kyber", "bfq", "none")
    partition_table: str | None = None
    ptuuid: str | None = None
    seq_kib_s: int = SEQ_SATA_SSD
    removable: bool = False
    smart: SimSmart = field(default_factory=lambda: SimSmart("ATA"))
    signatures: list[tuple[str, int, str]] = field(default_factory=list)  # (type, offset, hex)
    smart_written_bytes: int = 0  # host bytes written by the simulation (for SMART)
    smart_read_bytes: int = 0


@dataclass
class SimPartition:
    name: str
    disk: str
    number: int
    start: int  # sectors
    size_bytes: int
    type_guid: str | None = None
    type_name: str | None = None
    label: str | None = None
    uuid: str | None = None


@dataclass
class SimIO:
    read_bytes: int = 0
    write_bytes: int = 0
    read_count: int = 0
    write_count: int = 0
    busy_ms: int = 0


@dataclass
class SimMember:
    device: str
    desc_nr: int  # the [n] in /proc/mdstat
    slot: int | None
    state: set[str]
    data_offset: int = 262144  # sectors
    errors: int = 0
    recovery_start: int | None = None  # sectors; None = "none"


@dataclass
class SimArray:
    name: str
    level: str
    raid_disks: int
    members: list[SimMember]
    component_kib: int  # per-member data size (md/component_size)
    chunk_kib: int = 512
    layout: str | None = None
    metadata: str = "1.2"
    array_name: str | None = None
    uuid: str = ""
    bitmap: str | None = None
    array_state: str = "clean"
    stripe_cache_size: int = 256
    sync_speed_min: int | None = None  # None = "system"
    sync_speed_max: int | None = None
    container: str | None = None
    member_index: int | None = None
    base_ceiling_kib_s: float | None = None  # override of the computed hardware ceiling
    job: SyncJob | None = None
    last_sync_action: str = "none"
    mismatch_cnt: int = 0
    resync_write_fraction: Fraction = Fraction(1)  # share of blocks a resync rewrites
    mismatch_sectors_on_check: int = 0
    size_override_kib: int | None = None  # containers
    creation_time: float = 0.0
    history: list[dict[str, object]] = field(default_factory=list)
    next_desc: int = 0
    removed: dict[str, tuple[float, int]] = field(default_factory=dict)  # dev -> (when, desc_nr)

    @property
    def copies(self) -> int:
        return levels.raid10_copies(self.layout) if self.level == "raid10" else 1

    def size_kib(self) -> int:
        if self.size_override_kib is not None:
            return self.size_override_kib
        n, c = self.raid_disks, self.component_kib
        lvl = self.level
        if lvl in ("raid0", "linear"):
            return n * c
        if lvl == "raid1":
            return c
        if lvl in levels.PARITY:
            return (n - levels.LEVELS[lvl].parity) * c
        if lvl == "raid10":
            size = n * c // self.copies
            return size - size % self.chunk_kib if self.chunk_kib else size
        return 0

    def slots(self) -> dict[int, SimMember]:
        return {
            m.slot: m
            for m in self.members
            if m.slot is not None and "faulty" not in m.state and "replacement" not in m.state
        }

    def in_sync_slots(self) -> set[int]:
        return {
            m.slot
            for m in self.members
            if m.slot is not None
            and "in_sync" in m.state
            and "faulty" not in m.state
            and "replacement" not in m.state
        }

    def degraded(self) -> int:
        if self.level in ("container", "raid0", "linear"):
            return 0
        return max(0, self.raid_disks - len(self.in_sync_slots()))

    def redundant(self) -> bool:
        return self.level in levels.REDUNDANT

    def member(self, dev: str) -> SimMember | None:
        for m in self.members:
            if m.device == dev:
                return m
        return None


@dataclass
class SimPV:
    device: str
    vg: str | None
    size_bytes: int
    uuid: str
    pe_start: int = 1 << 20


@dataclass
class SimVG:
    name: str
    uuid: str
    extent_size: int = 4 << 20


@dataclass
class SimLV:
    name: str
    vg: str
    size_bytes: int
    kernel_name: str
    uuid: str
    devices: tuple[str, ...]
    segtype: str = "linear"
    stripes: int | None = None
    stripe_size: int | None = None


@dataclass
class SimFS:
    device: str
    fstype: str
    uuid: str
    size_bytes: int
    label: str | None = None
    mountpoints: tuple[str, ...] = ()
    used_bytes: int | None = None
    block_size: int = 4096
    stride: int | None = None
    stripe_width: int | None = None
    sunit_bytes: int | None = None
    swidth_bytes: int | None = None
    created_at: float = 0.0


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
    md_superblocks: dict[str, tuple[str, str]] = field(default_factory=dict)  # stale: uuid, name
    generation: int = 0  # bumped on every structural change (cache key for probe())
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
        io = self.io.setdefault(dev, SimIO())
        io.read_bytes += read
        io.write_bytes += write
        io.read_count += (read + 524287) // 524288
        io.write_count += (write + 524287) // 524288
        disk = self.disk_of(dev)
        if disk is not None:
            d = self.disks[disk]
            d.smart_written_bytes += write
            d.smart_read_bytes += read
            if disk != dev:
                self.io_log.append(disk)
                dio = self.io.setdefault(disk, SimIO())
                dio.read_bytes += read
                dio.write_bytes += write
                dio.read_count += (read + 524287) // 524288
                dio.write_count += (write + 524287) // 524288
