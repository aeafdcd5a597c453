"""The simulation's records: disks (with their SMART counters and sequential speed), partitions,
I/O counters, md arrays and their members, a running sync (:class:`SyncJob`), LVM and filesystems.
:class:`backends.simulated.state.SimState` holds them; :mod:`backends.simulated.speed` moves the syncs."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction

from app.model import levels
from backends.simulated.lvm_raid import SimRaid

# sequential throughput (KiB/s) by kind of device, used for created arrays
SEQ_SATA_SSD = 537000  # SATA 6 Gb/s practical maximum, seed 000's 525478 fits under it
SEQ_NVME = 2_000_000
SEQ_HDD = 150000
SEQ_USB = 380000


@dataclass(frozen=True)
class ReshapeFrom:
    """The geometry a reshape leaves (md's ``mddev->level``/``raid_disks - delta_disks``/
    ``chunk_sectors``/``layout`` beside the ``new_*`` the array already shows), and the level
    mdadm sets when it ends (RAID-6 -> 5: restriped to a -6 layout first, then raid5.c
    raid5_takeover_raid6 drops the Q device; mdadm(8) LEVEL CHANGES)."""

    level: str
    raid_disks: int
    chunk_kib: int
    layout: str | None
    level_after: str | None = None


@dataclass
class SyncJob:
    """One running sync. Positions are in progress sectors (see the module doc)."""

    action: str
    total: int  # sectors
    pos: float
    started_at: float
    # (time, position) breakpoints where the rate changed; the first is the sync's start
    hist: list[tuple[float, float]]
    targets: tuple[str, ...] = ()
    # device -> (read weight, write weight): member bytes per progress byte
    weights: dict[str, tuple[Fraction, Fraction]] = field(default_factory=dict)
    credited: int = 0  # progress sectors already credited to the members' I/O counters
    frozen: bool = False
    reshape: ReshapeFrom | None = None  # a reshape's old geometry (the array has the new)
    mismatches: int = 0  # sectors found differing by check/repair (at the end)
    queued: int = 0  # order md was asked for it (the order syncs on shared disks run)
    waiting: bool = False  # delayed: an array sharing a disk syncs first (resync=DELAYED)

    def pos_at(self, t: float, now: float) -> float:
        """Progress at time ``t`` by linear interpolation over the breakpoints and (now, pos)."""
        h = [*self.hist, (now, self.pos)]
        if t <= h[0][0]:
            return h[0][1]
        for (t0, p0), (t1, p1) in itertools.pairwise(h):
            if t <= t1:
                if t1 == t0:
                    return p1
                return p0 + (p1 - p0) * (t - t0) / (t1 - t0)
        return h[-1][1]


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
    # (kind, status, lifetime hours (negative: that many hours before the scenario began), LBA
    # of the first error or None), newest first
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
    firmware: str | None = None  # smartctl's firmware_version
    signatures: list[tuple[str, int, str]] = field(default_factory=list)  # (type, offset, hex)
    smart_written_bytes: int = 0  # host bytes written by the simulation (for SMART)
    smart_read_bytes: int = 0
    # issue 40: where it sits and how it is erased
    enclosure: tuple[str, str, int] | None = None  # (enclosure, component, slot number)
    ata_frozen: bool = False  # hdparm -I: security "frozen" (refuses set-pass and erase)
    ata_password: str | None = None  # a user password set (security "enabled")
    nvme_sanicap: int = 0b011  # NVMe Identify Controller SANICAP: crypto and block erase
    nvme_fna: int = 0b100  # FNA bit 2: crypto erase as part of Format NVM's secure erase
    write_latency_ms: float | None = None  # a disk slower than its kind (fio's latencies)
    bad_region: tuple[int, int] | None = None  # bytes whose verify fails (fio --verify)


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


REQUEST_BYTES = 524288  # the simulation's I/O comes in 512 KiB requests (a sync's chunked I/O)


@dataclass
class SimIO:
    """One device's /proc/diskstats counters. Time follows the disk's speed model: a request
    of n bytes keeps the disk busy n / ``seq_kib_s`` (one at a time, as a sequential stream
    is served), so ``util`` is the share of its sequential rate in use and ``await`` the
    service time of a 512 KiB request (about 3.4 ms on a WD Red, 1 ms on an 850 EVO)."""

    read_bytes: int = 0
    write_bytes: int = 0
    read_count: int = 0
    write_count: int = 0
    busy_s: float = 0.0  # field 13 (io_ticks), in seconds
    read_s: float = 0.0  # field 7 (time reads took)
    write_s: float = 0.0  # field 11

    def add(self, read: int, write: int, seq_bytes_s: float | None) -> None:
        self.read_bytes += read
        self.write_bytes += write
        self.read_count += (read + REQUEST_BYTES - 1) // REQUEST_BYTES
        self.write_count += (write + REQUEST_BYTES - 1) // REQUEST_BYTES
        if seq_bytes_s:
            r, w = read / seq_bytes_s, write / seq_bytes_s
            self.read_s += r
            self.write_s += w
            self.busy_s += r + w

    @property
    def busy_ms(self) -> int:
        return int(self.busy_s * 1000)

    @property
    def read_ms(self) -> int:
        return int(self.read_s * 1000)

    @property
    def write_ms(self) -> int:
        return int(self.write_s * 1000)


@dataclass
class SimMember:
    device: str
    desc_nr: int  # the [n] in /proc/mdstat
    slot: int | None
    state: set[str]
    data_offset: int = 262144  # sectors
    errors: int = 0
    recovery_start: int | None = None  # sectors; None = "none"
    # when md marked it faulty: md writes no superblock to a Faulty device after that
    # (md.c md_update_sb skips it), so its events stay at that moment's
    failed_at: float | None = None


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
    # md/sync_min (mddev->resync_min): where a requested sync (check/repair) begins; md sets
    # it to how far one got when it is interrupted, to 0 when one finishes (md.c md_do_sync)
    sync_min: int = 0
    # md_error() / a hot add set MD_RECOVERY_NEEDED: md/sync_action reads "recover" until the md
    # thread's md_check_recovery() looks (speed.py note_recovery_needed); until when
    recovery_needed_until: float | None = None
    size_override_kib: int | None = None  # containers
    creation_time: float = 0.0
    history: list[dict[str, object]] = field(default_factory=list)
    next_desc: int = 0
    removed: dict[str, tuple[float, int]] = field(default_factory=dict)  # dev -> (when, desc_nr)
    # when md updated the superblocks for a member's failure (md_error -> md_update_sb): each
    # adds one event to the working members' count (app: the faulty one is behind at once)
    failures: list[float] = field(default_factory=list)
    # RAID-5's write journal or partial parity log (mdadm --write-journal,
    # --consistency-policy=ppl: md.c consistency_policy_show); None: bitmap/resync/none
    log: str | None = None

    def consistency_policy(self) -> str:
        """md/consistency_policy (md.c consistency_policy_show): "journal" or "ppl" where the
        array has one, else "bitmap"/"resync" for a redundant level, "none" without."""
        if self.log is not None:
            return self.log
        if not self.redundant():
            return "none"
        return "bitmap" if self.bitmap else "resync"

    def reshaping(self) -> ReshapeFrom | None:
        return self.job.reshape if self.job is not None else None

    def reshape_position(self) -> int:
        """md/reshape_position (raid5.c conf->reshape_progress): array sectors of the new
        geometry done, where sync_completed counts member sectors. The simulator reshapes
        forwards; md ran the VM's chunk change and RAID-5 -> 6 backwards (held at 131072 of
        131072: mdadm moved the data offset, Grow.c set_new_data_offset) and 6 -> 5 forwards;
        the direction is not modelled."""
        if self.job is None:
            return 0
        return int(self.job.pos) * (
            levels.data_disks(self.level, self.raid_disks, self.layout) or 1
        )

    @property
    def copies(self) -> int:
        return levels.raid10_copies(self.layout) if self.level == "raid10" else 1

    def size_kib(self) -> int:
        if self.size_override_kib is not None:
            return self.size_override_kib
        n, c = self.raid_disks, self.component_kib
        lvl = self.level
        old = self.reshaping()
        if old is not None:  # md sets the new size when the reshape ends (raid5.c end_reshape)
            n, lvl = old.raid_disks, old.level
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
    raid: SimRaid | None = None  # a raid LV's images and sync (backends.simulated.lvm_raid)


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
