"""The simulation's mutable state and the model that moves it forward in time.

Speed model (documented here because other modules and the tests rely on it)
----------------------------------------------------------------------------
* Every sync (resync, recover, check, repair, reshape) advances its *progress position* in the
  kernel's unit for that action: array sectors for a RAID-10 resync/check/repair (as
  ``resync_max_sectors`` is the array size there), member sectors otherwise.
* ``speed_limit_min/max`` (or the array's own ``sync_speed_min/max``) bound the *progress* rate,
  the unit ``sync_speed`` shows, for every level (``md_do_sync()``'s ``currspeed``; see
  :mod:`app.model.sync_model`, which this follows). The array has a hardware ceiling (what its
  members sustain for this kind of sync, :func:`app.model.sync_model.hardware_progress_kib_s`).
  A sync runs at the ceiling when that is below the limit; else md holds it at
  :func:`app.model.sync_model.held_rate` of the max limit (a little above it: ``currspeed``
  divides by the mark window + 1 s). Seed 000's 525478 K/sec was read ~12 s after
  ``speed_limit_max`` was raised to 500000 (held rate ~517,500); its 384214 and 486124 on the
  way up from the default 200000.
* md runs one sync at a time on arrays that share a disk (``md_do_sync()``'s
  ``match_mddev_units()`` loop): a later sync waits (``sync_completed`` "delayed", mdstat
  ``resync=DELAYED``) until the earlier one ends or is frozen.
* RAID-4/5/6 ceilings scale with the stripe cache: ``base * scs / (scs + STRIPE_CACHE_HALF)``,
  calibrated on seed 001 (RAID-6 of five WD 1 TB: 25 "MB/s" at 256, 66 at 8192; the article
  reads mdstat's K/sec in thousands, so those are 25000 and 66000 K/sec here).
* The *reported* speed is the kernel's: progress since the oldest of ten marks taken every
  three seconds (a 27-30 s window) divided by the time since that mark. After the limits are
  raised it therefore ramps up over ~30 s, which reproduces seed 000's 384214 -> 486124 -> 525478.
* Writes and reads caused by a sync are credited to the member devices by exact integer
  arithmetic on the progress position (see ``SyncJob``), so a recovery writes exactly the
  component size to its target.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction

from app.model import levels, sync_model
from app.model.devices import SECTOR

# --- model constants -----------------------------------------------------------------------
STRIPE_CACHE_HALF = 457.6  # pages; seed 001: f(256)/f(8192) = 25/66
MARK_STEP_S = 3.0  # SYNC_MARK_STEP
SYNC_MARKS = 10
DEFAULT_SPEED_MIN = 1000
DEFAULT_SPEED_MAX = 200000
SYNC_ACTIONS = ("resync", "recover", "check", "repair", "reshape")
IO_LOG_MAX = 4096  # SimState.io_log: longer, it is emptied (readers start over)

# sequential throughput (KiB/s) by kind of device, used for created arrays
SEQ_SATA_SSD = 537000  # SATA 6 Gb/s practical maximum, seed 000's 525478 fits under it
SEQ_NVME = 2_000_000
SEQ_HDD = 150000
SEQ_USB = 380000
PARITY_EFFICIENCY = Fraction(69686, SEQ_HDD)  # seed 001: base 69686 K/s for 150 MB/s disks


def stripe_cache_factor(pages: int) -> float:
    return pages / (pages + STRIPE_CACHE_HALF)


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
    reshape_to: int | None = None  # new raid_disks for a reshape
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
class SimState:
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

    # ---- sync model ---------------------------------------------------------------------
    def effective_limits(self, a: SimArray) -> tuple[int, int]:
        lo = a.sync_speed_min if a.sync_speed_min is not None else self.speed_limit_min
        hi = a.sync_speed_max if a.sync_speed_max is not None else self.speed_limit_max
        return lo, hi

    def ceiling(self, a: SimArray, action: str) -> float:
        """What the hardware sustains for this sync, in progress KiB/s."""
        if a.base_ceiling_kib_s is not None:
            base = a.base_ceiling_kib_s / (2 if action == "reshape" else 1)
        else:
            seqs = [
                self.disks[d].seq_kib_s
                for m in a.members
                if (d := self.disk_of(m.device)) is not None
            ]
            slowest = min(seqs) if seqs else SEQ_HDD
            member = slowest * PARITY_EFFICIENCY if a.level in levels.PARITY else slowest
            base = sync_model.hardware_progress_kib_s(
                a.level, a.raid_disks, a.layout, action, int(member)
            )
        if a.level in levels.PARITY:
            base *= stripe_cache_factor(a.stripe_cache_size)
        return base

    def rate(self, a: SimArray) -> float:
        """Progress KiB/s of the running sync (0 when frozen, delayed or idle)."""
        job = a.job
        if job is None or job.frozen or job.waiting:
            return 0.0
        _lo, hi = self.effective_limits(a)
        cap = self.ceiling(a, job.action)
        return min(cap, sync_model.held_rate(hi))

    def shares_disk(self, a: SimArray, b: SimArray) -> bool:
        """md's match_mddev_units(): a member of each on one whole disk."""
        return sync_model.shares_disk(
            (m.device for m in a.members), (m.device for m in b.members), self.disk_of
        )

    def update_waits(self) -> None:
        """md_do_sync()'s one-sync-per-disk rule: in the order they were asked for, a sync
        whose array shares a disk with one that runs waits (delayed); one that may run now
        starts its speed marks afresh."""
        jobs = sorted(
            (a for a in self.arrays.values() if a.job is not None and not a.job.frozen),
            key=lambda a: (a.job.queued if a.job else 0, a.name),
        )
        running: list[SimArray] = []
        for a in jobs:
            job = a.job
            assert job is not None
            wait = any(self.shares_disk(a, r) for r in running)
            if job.waiting and not wait:
                job.started_at = self.t
                job.hist = [(self.t, job.pos)]
                self.events.append((self.t, a.name, f"{job.action} no longer delayed"))
            job.waiting = wait
            if not wait:
                running.append(a)

    def reported_speed(self, a: SimArray) -> int | None:
        """The kernel's sync_speed: progress since the oldest mark / time since it, KiB/s."""
        job = a.job
        if job is None:
            return None
        if job.frozen:
            return 0
        elapsed = self.t - job.started_at
        k = max(0, math.floor(elapsed / MARK_STEP_S) - (SYNC_MARKS - 1))
        mark_t = job.started_at + MARK_STEP_S * k
        dt = self.t - mark_t
        if dt <= 0:
            return round(self.rate(a))
        db = job.pos - job.pos_at(mark_t, self.t)
        return round(db / 2 / dt)

    def rate_changed(self, a: SimArray) -> None:
        """Record a breakpoint: call after anything that changes an array's rate."""
        job = a.job
        if job is None:
            return
        if job.hist[-1][0] != self.t:
            job.hist.append((self.t, job.pos))
        # keep one breakpoint older than the window
        horizon = self.t - MARK_STEP_S * (SYNC_MARKS + 1)
        while len(job.hist) > 2 and job.hist[1][0] <= horizon:
            job.hist.pop(0)

    def advance_to(self, t: float) -> None:
        if t <= self.t:
            return
        # syncs may end before t, which can start others (queued recovery): loop on events
        guard = 0
        while self.t < t and guard < 10000:
            guard += 1
            nxt = t
            ends: dict[str, float] = {}
            # only arrays with a job move (rate() is 0 without one): on a machine of 250
            # arrays with 16 syncing this is what keeps every read of the simulator cheap
            self.update_waits()
            syncing = [a for a in self.arrays.values() if a.job is not None]
            rates = {a.name: self.rate(a) for a in syncing}
            for a in syncing:
                r = rates[a.name]
                if a.job is not None and r > 0:
                    ends[a.name] = self.t + max(0.0, (a.job.total - a.job.pos) / (2 * r))
                    nxt = min(nxt, ends[a.name])
            dt = nxt - self.t
            finished: list[SimArray] = []
            for a in syncing:
                job = a.job
                if job is None:
                    continue
                r = rates[a.name]
                if r > 0 and dt > 0:
                    job.pos = min(float(job.total), job.pos + 2 * r * dt)
                if a.name in ends and ends[a.name] <= nxt + 1e-9:
                    job.pos = float(job.total)
                if job.pos >= job.total:
                    finished.append(a)
            self.t = nxt
            for a in syncing:
                if a.job is not None:
                    self.credit(a)
                    self.rate_changed_if_long(a)
            for a in finished:
                self.finish_sync(a)
            if not finished and nxt >= t:
                break
        self.t = t

    def rate_changed_if_long(self, a: SimArray) -> None:
        """Keep the history bounded during long advances (rate is constant in between)."""
        job = a.job
        if job is None:
            return
        horizon = self.t - MARK_STEP_S * (SYNC_MARKS + 1)
        while len(job.hist) > 2 and job.hist[1][0] <= horizon:
            job.hist.pop(0)

    def credit(self, a: SimArray) -> None:
        job = a.job
        if job is None:
            return
        new = int(job.pos)
        old = job.credited
        if new <= old:
            return
        for dev, (rw, ww) in job.weights.items():
            r = (new * SECTOR * rw.numerator) // rw.denominator - (
                old * SECTOR * rw.numerator
            ) // rw.denominator
            w = (new * SECTOR * ww.numerator) // ww.denominator - (
                old * SECTOR * ww.numerator
            ) // ww.denominator
            self.add_io(dev, r, w)
        job.credited = new
        for m in a.members:
            if m.device in job.targets and m.recovery_start is not None:
                m.recovery_start = new

    def start_sync(
        self,
        a: SimArray,
        action: str,
        *,
        pos: float = 0.0,
        targets: tuple[str, ...] = (),
        reshape_to: int | None = None,
        partial_fraction: Fraction | None = None,
    ) -> None:
        """Begin a sync; ``partial_fraction`` (bitmap re-add) scales the target's writes."""
        if action == "reshape":
            total = a.component_kib * 2
        elif a.level == "raid10" and action in ("resync", "check", "repair"):
            total = a.size_kib() * 2
        else:
            total = a.component_kib * 2
        if partial_fraction is not None:
            total = max(8, int(total * partial_fraction))
        job = SyncJob(
            action=action,
            total=total,
            pos=pos,
            started_at=self.t,
            hist=[(self.t, pos)],
            targets=targets,
            credited=int(pos),
            reshape_to=reshape_to,
            queued=self.next_sync_order(),
        )
        job.weights = self.sync_weights(a, action, targets)
        if action in ("check", "repair"):
            job.mismatches = a.mismatch_sectors_on_check
        a.job = job
        a.array_state = "active" if action != "check" else a.array_state
        for m in a.members:
            if m.device in targets:
                m.recovery_start = int(pos)
        self.events.append((self.t, a.name, f"{action} started"))
        self.touch()

    def sync_weights(
        self, a: SimArray, action: str, targets: tuple[str, ...]
    ) -> dict[str, tuple[Fraction, Fraction]]:
        """Member bytes read/written per progress byte, for each member taking part."""
        active = sorted(
            (m for m in a.members if m.slot is not None and "faulty" not in m.state),
            key=lambda m: m.slot if m.slot is not None else 0,
        )
        sources = [m for m in active if m.device not in targets and "in_sync" in m.state]
        w: dict[str, tuple[Fraction, Fraction]] = {}
        zero = Fraction(0)
        one = Fraction(1)
        n = a.raid_disks
        if action == "recover":
            for t in targets:
                w[t] = (zero, one)
            if a.level in ("raid1", "raid10"):
                if sources:
                    src = sources[0]
                    if a.level == "raid10":
                        tslots = [m.slot for m in a.members if m.device in targets]
                        partners = [
                            m
                            for m in sources
                            if tslots
                            and m.slot is not None
                            and m.slot // a.copies == (tslots[0] or 0) // a.copies
                        ]
                        if partners:
                            src = partners[0]
                    w[src.device] = (one, zero)
            else:
                for m in sources:
                    w[m.device] = (one, zero)
            return w
        if action == "reshape":
            for m in active:
                w[m.device] = (one, one)
            return w
        if a.level == "raid10":
            per = Fraction(a.copies, n)  # member sectors per array sector, per member
            for m in active:
                first_copy = n % a.copies != 0 or (m.slot or 0) % a.copies == 0
                if action == "check" or action == "repair":
                    w[m.device] = (per, zero)
                elif n % a.copies != 0:
                    w[m.device] = (
                        per / a.copies,
                        per * (a.copies - 1) / a.copies * a.resync_write_fraction,
                    )
                elif first_copy:
                    w[m.device] = (per, zero)
                else:
                    w[m.device] = (zero, per * a.resync_write_fraction)
            return w
        if a.level == "raid1":
            for i, m in enumerate(active):
                if action in ("check", "repair") or i == 0:
                    w[m.device] = (one, zero)
                else:
                    w[m.device] = (zero, one * a.resync_write_fraction)
            return w
        if a.level in levels.PARITY:
            parity = levels.LEVELS[a.level].parity
            for m in active:
                if action in ("check", "repair"):
                    w[m.device] = (one, zero)
                else:  # resync: read the data blocks, write the parity
                    w[m.device] = (Fraction(n - parity, n), Fraction(parity, n))
            return w
        return w

    def finish_sync(self, a: SimArray) -> None:
        job = a.job
        if job is None:
            return
        self.credit(a)
        action = job.action
        a.last_sync_action = action
        if action in ("check", "repair"):
            a.mismatch_cnt = job.mismatches
        elif action == "resync":
            a.mismatch_cnt = 0
        if action == "recover":
            for m in a.members:
                if m.device in job.targets and "faulty" not in m.state:
                    m.state.discard("spare")
                    m.state.add("in_sync")
                    m.recovery_start = None
            # a replacement done: the replaced member goes faulty
            for m in a.members:
                if "want_replacement" in m.state:
                    m.state = {"faulty"}
                    m.slot = None
            for m in a.members:
                if "replacement" in m.state:
                    m.state.discard("replacement")
        if action == "reshape" and job.reshape_to is not None:
            old_data = a.size_kib()
            a.raid_disks = job.reshape_to
            for m in a.members:
                if m.slot is not None and "spare" in m.state:
                    m.state.discard("spare")
                    m.state.add("in_sync")
                    m.recovery_start = None
            self.events.append((self.t, a.name, f"array size {old_data} -> {a.size_kib()} KiB"))
        dur = self.t - job.started_at
        a.history.append(
            {
                "action": action,
                "start": job.started_at,
                "end": self.t,
                "duration_s": dur,
                "mismatch_cnt": a.mismatch_cnt,
            }
        )
        a.job = None
        a.array_state = "clean"
        self.events.append((self.t, a.name, f"{action} finished after {dur:.0f}s"))
        self.touch()
        self.maybe_start_recovery(a)

    def maybe_start_recovery(self, a: SimArray) -> None:
        """If the array is degraded and has a spare, md starts a recovery onto it."""
        if a.job is not None or not a.redundant() or a.level == "container":
            return
        missing = sorted(set(range(a.raid_disks)) - set(a.slots()))
        spares = [m for m in a.members if m.slot is None and m.state == {"spare"}]
        rebuilding = [
            m
            for m in a.members
            if m.slot is not None and "spare" in m.state and "faulty" not in m.state
        ]
        targets: list[str] = [m.device for m in rebuilding]
        for slot in missing:
            if not spares:
                break
            sp = spares.pop(0)
            sp.slot = slot
            sp.recovery_start = 0
            targets.append(sp.device)
        if targets and a.degraded() > 0 and a.degraded() <= self.max_failures(a):
            self.start_sync(a, "recover", targets=tuple(targets))

    @staticmethod
    def max_failures(a: SimArray) -> int:
        if a.level == "raid10":  # as many as one per mirror set (the simulator's best case)
            return a.raid_disks // max(1, a.copies)
        return levels.failures_survived(a.level, a.raid_disks, a.layout)
