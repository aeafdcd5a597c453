"""Immutable views of a SimState: Machine, /proc/mdstat, sysfs files, LiveSample, SmartReading."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.model import levels, md_names
from app.model.devices import (
    Disk,
    Filesystem,
    LogicalVolume,
    Machine,
    MdArray,
    MdMember,
    Partition,
    PhysicalVolume,
    SyncStatus,
    VolumeGroup,
)
from app.model.live import DiskIO, LiveSample, MdLive
from app.model.smart import SmartAttribute, SmartReading
from backends.simulated import selftest
from backends.simulated.state import SimArray, SimDisk, SimIO, SimMember, SimState
from backends.simulated.usage import usage_of


def partition_alignment_offset(disk: SimDisk, start_sector: int) -> int:
    """queue_limit_alignment_offset() of the kernel, in bytes, for a partition starting there."""
    granularity = max(disk.physical, disk.min_io)
    alignment = (start_sector % (granularity // 512)) * 512
    return (granularity + disk.alignment_offset - alignment) % granularity


def layout_number(a: SimArray) -> int:
    if a.level == "raid10":
        return levels.raid10_layout(a.layout).number
    if a.level in levels.PARITY:
        number = md_names.parity_layout_number(a.level, a.layout)
        return 2 if number is None else number
    return 0


# ---- arrays -------------------------------------------------------------------------------
def member_flags(st: SimState, a: SimArray) -> tuple[MdMember, ...]:
    out = []
    for m in a.members:
        state = tuple(sorted(m.state))
        out.append(
            MdMember(
                device=m.device,
                slot=m.slot,
                state=state,
                errors=m.errors,
                data_offset_sectors=m.data_offset,
                size_kib=a.component_kib if a.level != "container" else None,
                recovery_start=m.recovery_start,
            )
        )
    return tuple(out)


def sync_status(st: SimState, a: SimArray) -> SyncStatus | None:
    job = a.job
    lo, hi = st.effective_limits(a)
    if job is None:
        return None
    if job.waiting:  # as the Linux probe reads sync_completed "delayed"
        return SyncStatus(action="delayed", min_speed_kib_s=lo, max_speed_kib_s=hi)
    return SyncStatus(
        action="frozen" if job.frozen else job.action,
        done_sectors=int(job.pos),
        total_sectors=job.total,
        speed_kib_s=st.reported_speed(a),
        min_speed_kib_s=lo,
        max_speed_kib_s=hi,
        reshape_position=int(job.pos) if job.action == "reshape" else None,
        mismatch_cnt=mismatch_cnt(a),
        targets=job.targets,
    )


def build_array(st: SimState, a: SimArray) -> MdArray:
    level = a.level
    parity = level in levels.PARITY
    return MdArray(
        name=a.name,
        level=level,
        size_bytes=a.size_kib() * 1024,
        raid_disks=a.raid_disks if level != "container" else len(a.members),
        chunk_bytes=a.chunk_kib * 1024 if level not in ("raid1", "container", "linear") else None,
        layout=a.layout,
        metadata=a.metadata,
        array_name=a.array_name,
        uuid=a.uuid,
        array_state=a.array_state if level != "container" else "inactive",
        degraded=a.degraded(),
        bitmap=a.bitmap,
        members=member_flags(st, a),
        sync=sync_status(st, a),
        stripe_cache_size=a.stripe_cache_size if parity else None,
        container=a.container,
        member_index=a.member_index,
        consistency_policy=("bitmap" if a.bitmap else "resync") if a.redundant() else "none",
        speed_min_local=a.sync_speed_min if a.redundant() else None,
        speed_max_local=a.sync_speed_max if a.redundant() else None,
        mismatch_cnt=mismatch_cnt(a),
        last_sync_action=a.last_sync_action if level != "container" else None,
    )


def mismatch_cnt(a: SimArray) -> int | None:
    """md/mismatch_cnt as the Linux probe reads it: none for levels without redundancy (the
    array's field and its sync block show the same number)."""
    return a.mismatch_cnt if a.level not in ("raid0", "linear", "container") else None


# ---- /proc/mdstat -------------------------------------------------------------------------
def progress_lines(st: SimState, a: SimArray) -> str:
    job = a.job
    if job is None:
        return ""
    if job.frozen:
        return "      resync=PENDING\n" if job.pos == 0 else ""
    if job.waiting:  # md.c status_resync(): "resync=DELAYED" whatever the action
        return "      resync=DELAYED\n"
    res = int(job.pos)
    maxs = job.total
    per_milli = res * 1000 // maxs if maxs else 0
    x = per_milli // 50
    bar = "[" + "=" * x + ">" + "." * (20 - x) + "]"
    label = {
        "reshape": "reshape",
        "check": "check",
        "resync": "resync",
        "repair": "resync",
        "recover": "recovery",
    }[job.action]
    speed = st.reported_speed(a) or 0
    left_kib = (maxs - res) // 2
    rt = int(left_kib / speed) if speed > 0 else 0
    return (
        f"      {bar}  {label} ={per_milli // 10:3d}.{per_milli % 10}% ({res // 2}/{maxs // 2})"
        f" finish={rt // 60}.{(rt % 60) // 6}min speed={speed}K/sec\n"
    )


def render_array(st: SimState, a: SimArray) -> str:
    parts = []
    for m in reversed(a.members):
        suffix = ""
        if "write_mostly" in m.state:
            suffix += "(W)"
        if "faulty" in m.state:
            suffix += "(F)"
        elif "replacement" in m.state:
            suffix += "(R)"
        elif a.level == "container" or m.slot is None:
            suffix += "(S)"
        parts.append(f"{m.device}[{m.desc_nr}]{suffix}")
    if a.level == "container":
        head = f"{a.name} : inactive " + " ".join(parts)
        body = f"      {a.size_kib()} blocks super {a.metadata}\n"
        return head + "\n" + body + "\n"
    state = (
        "active" if a.array_state not in ("read-auto", "readonly") else "active (auto-read-only)"
    )
    head = f"{a.name} : {state} {a.level} " + " ".join(parts)
    meta = a.metadata
    if meta.startswith("external:"):
        super_s = f" super {meta}"
    elif meta in ("0.90", "0.9"):
        super_s = ""
    else:
        super_s = f" super {meta}"
    line2 = f"      {a.size_kib()} blocks{super_s}"
    slots = a.in_sync_slots()
    status = "".join("U" if i in slots else "_" for i in range(a.raid_disks))
    counts = f" [{a.raid_disks}/{len(slots)}] [{status}]"
    if a.level == "raid10":
        if a.copies < a.raid_disks or (a.layout or "n")[0] != "n":
            line2 += f" {a.chunk_kib}K chunks"
        kind = (a.layout or "n2")[0]
        word = {"n": "near-copies", "f": "far-copies", "o": "offset-copies"}[kind]
        line2 += f" {a.copies} {word}" + counts
    elif a.level in levels.PARITY:
        line2 += (
            f" level {a.level[4:]}, {a.chunk_kib}k chunk, algorithm {layout_number(a)}" + counts
        )
    elif a.level == "raid1":
        line2 += counts
    elif a.level == "raid0":
        line2 += f" {a.chunk_kib}k chunks"
    elif a.level == "linear":
        line2 += f" {a.chunk_kib}k rounding"
    out = head + "\n" + line2 + "\n" + progress_lines(st, a)
    if a.bitmap == "internal":
        chunk_kib = 65536
        pages = max(1, -(-(a.component_kib // chunk_kib) // 2048))  # 2048 16-bit counters/page
        dirty = 0 if a.job is None else min(pages, 1 + pages // 4)
        out += f"      bitmap: {dirty}/{pages} pages [{dirty * 4}KB], {chunk_kib}KB chunk\n"
    return out + "\n"


def render_mdstat(st: SimState) -> str:
    present = {a.level for a in st.arrays.values()}
    if present & levels.PARITY:
        present |= levels.PARITY  # one module (raid456) registers all three
    pers = [p for p in md_names.MDSTAT_PERSONALITY_ORDER if p in present]
    head = "Personalities : " + "".join(f"[{p}] " for p in pers) + "\n"
    body = "".join(render_array(st, a) for a in sorted_arrays(st))
    return head + body + "unused devices: <none>\n"


def sorted_arrays(st: SimState) -> list[SimArray]:
    # the kernel lists the most recently started array first
    return sorted(st.arrays.values(), key=lambda a: (-a.creation_time, a.name))


# ---- Machine ------------------------------------------------------------------------------
class StaticCache:
    """Parts of the Machine that only change with structural changes (state.generation)."""

    def __init__(self) -> None:
        self.generation = -1
        self.disks: tuple[Disk, ...] = ()
        self.partitions: tuple[Partition, ...] = ()
        self.lvm: tuple[
            tuple[PhysicalVolume, ...], tuple[VolumeGroup, ...], tuple[LogicalVolume, ...]
        ] = ((), (), ())
        self.filesystems: tuple[Filesystem, ...] = ()
        self.edges: tuple[tuple[str, str], ...] = ()


def build_disk(d: SimDisk) -> Disk:
    return Disk(
        name=d.name,
        size_bytes=d.size_bytes,
        model=d.model,
        serial=d.serial,
        vendor=d.vendor,
        wwn=d.wwn,
        rotational=d.rotational,
        transport=d.transport,
        logical_sector=d.logical,
        physical_sector=d.physical,
        min_io=d.min_io,
        optimal_io=d.optimal_io,
        alignment_offset=d.alignment_offset,
        discard_granularity=d.discard_granularity,
        discard_max_bytes=d.discard_max_bytes,
        scheduler=d.scheduler,
        removable=d.removable,
        partition_table=d.partition_table,
        ptuuid=d.ptuuid,
    )


def refresh_static(st: SimState, cache: StaticCache) -> None:
    if cache.generation == st.generation:
        return
    cache.disks = tuple(build_disk(d) for d in st.disks.values())
    parts = []
    edges: list[tuple[str, str]] = []
    for p in st.partitions.values():
        d = st.disks[p.disk]
        parts.append(
            Partition(
                name=p.name,
                parent=p.disk,
                number=p.number,
                start_sector=p.start,
                size_bytes=p.size_bytes,
                type=p.type_guid,
                type_name=p.type_name,
                label=p.label,
                uuid=p.uuid,
                alignment_offset=partition_alignment_offset(d, p.start),
            )
        )
        edges.append((p.disk, p.name))
    cache.partitions = tuple(parts)
    for a in st.arrays.values():
        if a.container is not None:
            edges.append((a.container, a.name))
            continue
        for m in a.members:
            edges.append((m.device, a.name))
    pvs = []
    free_by_vg: dict[str, int] = {}
    used_by_pv: dict[str, int] = {}
    for lv in st.lvs.values():
        share = lv.size_bytes // max(1, len(lv.devices))
        for dev in lv.devices:
            used_by_pv[dev] = used_by_pv.get(dev, 0) + share
            edges.append((dev, lv.kernel_name))
    vg_size: dict[str, int] = {}
    vg_pvs: dict[str, int] = {}
    for pv in st.pvs.values():
        ext = st.vgs[pv.vg].extent_size if pv.vg in st.vgs else 4 << 20
        usable = (pv.size_bytes - pv.pe_start) // ext * ext if pv.vg else pv.size_bytes
        used = used_by_pv.get(pv.device, 0)
        pvs.append(
            PhysicalVolume(
                device=pv.device,
                vg=pv.vg,
                size_bytes=usable,
                free_bytes=usable - used,
                pe_start=pv.pe_start,
                uuid=pv.uuid,
            )
        )
        if pv.vg:
            vg_size[pv.vg] = vg_size.get(pv.vg, 0) + usable
            free_by_vg[pv.vg] = free_by_vg.get(pv.vg, 0) + usable - used
            vg_pvs[pv.vg] = vg_pvs.get(pv.vg, 0) + 1
    vgs = []
    for vg in st.vgs.values():
        size = vg_size.get(vg.name, 0)
        free = free_by_vg.get(vg.name, 0)
        vgs.append(
            VolumeGroup(
                name=vg.name,
                size_bytes=size,
                free_bytes=free,
                extent_size=vg.extent_size,
                extent_count=size // vg.extent_size,
                free_count=free // vg.extent_size,
                uuid=vg.uuid,
                pv_count=vg_pvs.get(vg.name, 0),
                lv_count=sum(1 for lv in st.lvs.values() if lv.vg == vg.name),
            )
        )
    lvs = tuple(
        LogicalVolume(
            name=lv.name,
            vg=lv.vg,
            size_bytes=lv.size_bytes,
            segtype=lv.segtype,
            attr="-wi-ao----"
            if (fs := st.filesystems.get(lv.kernel_name)) is not None and fs.mountpoints
            else "-wi-a-----",
            kernel_name=lv.kernel_name,
            uuid=lv.uuid,
            stripes=lv.stripes,
            stripe_size=lv.stripe_size,
            devices=lv.devices,
        )
        for lv in st.lvs.values()
    )
    cache.lvm = (tuple(pvs), tuple(vgs), lvs)
    cache.filesystems = tuple(
        Filesystem(
            device=f.device,
            fstype=f.fstype,
            uuid=f.uuid,
            label=f.label,
            mountpoints=f.mountpoints,
            size_bytes=f.size_bytes,
            used_bytes=f.used_bytes,
            avail_bytes=None if f.used_bytes is None else f.size_bytes - f.used_bytes,
            block_size=f.block_size,
            stride=f.stride,
            stripe_width=f.stripe_width,
            sunit_bytes=f.sunit_bytes,
            swidth_bytes=f.swidth_bytes,
        )
        for f in st.filesystems.values()
    )
    cache.edges = tuple(edges)
    cache.generation = st.generation


def build_machine(st: SimState, cache: StaticCache) -> Machine:
    refresh_static(st, cache)
    pvs, vgs, lvs = cache.lvm
    m = Machine(
        host=st.host,
        kernel=st.kernel,
        disks=cache.disks,
        partitions=cache.partitions,
        arrays=tuple(build_array(st, a) for a in st.arrays.values()),
        pvs=pvs,
        vgs=vgs,
        lvs=lvs,
        filesystems=cache.filesystems,
        edges=cache.edges,
        mdstat=render_mdstat(st),
        taken_at=st.t,
        is_root=True,
        extra={"simulated": "yes"},
    )
    return replace(m, usage=usage_of(m))


class LiveCache:
    """The last sample's objects, handed out again while what they say still holds: an idle
    array's ``MdLive`` and an idle disk's ``DiskIO`` are the same objects sample after sample
    (so the simulator allocates only for what moved, and its consumers can skip by identity)."""

    def __init__(self) -> None:
        # array -> ((member, device, slot, state flags) per member, array_state, raid_disks,
        # level, what was built)
        self.md: dict[
            str,
            tuple[
                tuple[tuple[SimMember, str, int | None, frozenset[str]], ...],
                str | None,
                int,
                str,
                MdLive,
            ],
        ] = {}
        self.io: dict[str, DiskIO] = {}  # by device
        self.ios: list[DiskIO] = []  # in the sample's order
        self.io_at: dict[str, int] = {}  # device -> where in ios
        self.io_generation = -1  # st.generation / st.io_epoch they were made at
        self.io_epoch = -1
        self.io_pos = 0  # how far st.io_log was read


def _cached_md(cache: LiveCache, a: SimArray) -> MdLive | None:
    had = cache.md.get(a.name)
    if had is None or a.job is not None:
        return None
    members, array_state, raid_disks, level, built = had
    # built while a sync ran and none runs now: a check ends with array_state, members and
    # raid_disks as they were, so without this the finished check stayed "running" at its
    # last position (98.9 % on the IMSM demo's md126, for ever)
    if built.sync is not None:
        return None
    if (
        array_state != a.array_state
        or raid_disks != a.raid_disks
        or level != a.level
        or len(members) != len(a.members)
    ):
        return None
    for (m, dev, slot, state), cur in zip(members, a.members, strict=True):
        if m is not cur or dev != cur.device or slot != cur.slot or state != cur.state:
            return None
    return built


def _disk_io(name: str, io: SimIO | None, had: DiskIO | None) -> DiskIO:
    """``had`` again when it still says what ``io`` says."""
    if io is None:
        if had is None or (
            had.read_bytes
            or had.write_bytes
            or had.read_count
            or had.write_count
            or had.busy_time_ms is not None
        ):
            return DiskIO(name, 0, 0)
        return had
    if (
        had is None
        or had.read_bytes != io.read_bytes
        or had.write_bytes != io.write_bytes
        or had.read_count != io.read_count
        or had.write_count != io.write_count
        or had.busy_time_ms != io.busy_ms
    ):
        return DiskIO(
            name=name,
            read_bytes=io.read_bytes,
            write_bytes=io.write_bytes,
            read_count=io.read_count,
            write_count=io.write_count,
            busy_time_ms=io.busy_ms,
        )
    return had


def _cached_ios(cache: LiveCache, st: SimState) -> list[DiskIO]:
    """Every device's counters, remade only for those ``st.io_log`` says moved since the last
    sample (all of them after a structural change or when the log was emptied)."""
    n = len(st.disks) + len(st.partitions)
    if cache.io_generation != st.generation or cache.io_epoch != st.io_epoch or len(cache.ios) != n:
        names = [*st.disks, *st.partitions]
        cache.ios = [_disk_io(name, st.io.get(name), cache.io.get(name)) for name in names]
        cache.io = {d.name: d for d in cache.ios}
        cache.io_at = {name: i for i, name in enumerate(names)}
        cache.io_generation, cache.io_epoch = st.generation, st.io_epoch
    else:
        at = cache.io_at
        for name in dict.fromkeys(st.io_log[cache.io_pos :]):
            i = at.get(name)
            if i is not None:
                d = _disk_io(name, st.io.get(name), cache.ios[i])
                cache.ios[i] = cache.io[name] = d
    cache.io_pos = len(st.io_log)
    return cache.ios


def build_sample(st: SimState, cache: LiveCache | None = None) -> LiveSample:
    arrays = []
    for a in st.arrays.values():
        if a.level == "container":
            continue
        if cache is not None and (same := _cached_md(cache, a)) is not None:
            arrays.append(same)
            continue
        md = MdLive(
            name=a.name,
            array_state=a.array_state,
            degraded=a.degraded(),
            sync=sync_status(st, a),
            member_states=tuple((m.device, tuple(sorted(m.state))) for m in a.members),
            level=a.level,
            mismatch_cnt=mismatch_cnt(a),
            last_sync_action=a.last_sync_action,
        )
        arrays.append(md)
        if cache is not None:
            cache.md[a.name] = (
                tuple((m, m.device, m.slot, frozenset(m.state)) for m in a.members),
                a.array_state,
                a.raid_disks,
                a.level,
                md,
            )
    if cache is None:
        ios = [_disk_io(name, st.io.get(name), None) for name in [*st.disks, *st.partitions]]
    else:
        ios = _cached_ios(cache, st)
    return LiveSample(taken_at=st.t, arrays=tuple(arrays), disk_io=tuple(ios))


# ---- SMART --------------------------------------------------------------------------------
def smart_counters(st: SimState, d: SimDisk) -> dict[str, int]:
    """The disk's SMART counters now (ATA LBAs, wear, hours; NVMe data units)."""
    s = d.smart
    f = s.lba_count_factor
    lbas_w = s.lbas_written + (d.smart_written_bytes * f.numerator) // (f.denominator * d.logical)
    lbas_r = s.lbas_read + d.smart_read_bytes // d.logical
    counted_bytes = (lbas_w - s.lbas_written) * d.logical
    wlc_raw = s.wlc_raw + counted_bytes // d.size_bytes
    hours = s.power_on_hours + int((st.t - st.t0) // 3600)
    out = {
        "lbas_written": lbas_w,
        "lbas_read": lbas_r,
        "wlc_raw": wlc_raw,
        "wlc_value": max(1, 100 - (wlc_raw * 100) // s.rated_pe) if s.rated_pe else 0,
        "hours": hours,
        "duw": s.data_units_written + d.smart_written_bytes // 512000,
        "dur": s.data_units_read + d.smart_read_bytes // 512000,
    }
    used = s.percentage_used
    if s.nvme_tbw_per_percent:
        used += d.smart_written_bytes // s.nvme_tbw_per_percent
    out["pct_used"] = used
    return out


def build_smart(st: SimState, d: SimDisk) -> SmartReading:
    s = d.smart
    if not s.available:
        return SmartReading(
            device=d.name,
            available=False,
            reason=s.reason,
            model=d.model,
            serial=d.serial,
            capacity_bytes=d.size_bytes,
            rotational=d.rotational,
            exit_status=2,
            taken_at=st.t,
        )
    c = smart_counters(st, d)
    if s.protocol == "NVMe":
        nvme = {
            "critical_warning": 0,
            "temperature": s.temperature_c,
            "available_spare": 100,
            "available_spare_threshold": 10,
            "percentage_used": c["pct_used"],
            "data_units_read": c["dur"],
            "data_units_written": c["duw"],
            "host_reads": c["dur"] * 8,
            "host_writes": c["duw"] * 8,
            "power_cycles": 42,
            "power_on_hours": c["hours"],
            "unsafe_shutdowns": 3,
            "media_errors": 1 if s.fail_test_at_lba is not None else 0,
            "num_err_log_entries": len(selftest.errors(d, c["hours"])),
        }
        return SmartReading(
            device=d.name,
            available=True,
            protocol="NVMe",
            model=d.model,
            serial=d.serial,
            health=s.health,
            temperature_c=s.temperature_c,
            power_on_hours=c["hours"],
            logical_sector=d.logical,
            capacity_bytes=d.size_bytes,
            rotational=False,
            nvme=nvme,
            exit_status=0,
            taken_at=st.t,
            **_logs(st, d, c["hours"]),
        )
    rv = s.reallocated_value
    attrs = [
        SmartAttribute(
            5, "Reallocated_Sector_Ct", rv, rv, 10, s.reallocated, str(s.reallocated), True
        ),
        SmartAttribute(9, "Power_On_Hours", 99, 99, 0, c["hours"], str(c["hours"])),
        SmartAttribute(12, "Power_Cycle_Count", 99, 99, 0, 311, "311"),
    ]
    if s.rated_pe:
        attrs.append(
            SmartAttribute(
                177,
                "Wear_Leveling_Count",
                c["wlc_value"],
                c["wlc_value"],
                0,
                c["wlc_raw"],
                str(c["wlc_raw"]),
            )
        )
    attrs.append(
        SmartAttribute(
            190 if not d.rotational else 194,
            "Airflow_Temperature_Cel" if not d.rotational else "Temperature_Celsius",
            100 - s.temperature_c if not d.rotational else 250 - s.temperature_c * 2,
            100 - s.temperature_c if not d.rotational else 250 - s.temperature_c * 2,
            0,
            s.temperature_c,
            str(s.temperature_c),
        )
    )
    attrs.append(
        SmartAttribute(197, "Current_Pending_Sector", 100, 100, 0, s.pending, str(s.pending))
    )
    attrs.append(
        SmartAttribute(199, "UDMA_CRC_Error_Count", 100, 100, 0, s.crc_errors, str(s.crc_errors))
    )
    if not d.rotational:
        attrs.append(
            SmartAttribute(
                241, "Total_LBAs_Written", 99, 99, 0, c["lbas_written"], str(c["lbas_written"])
            )
        )
        attrs.append(
            SmartAttribute(242, "Total_LBAs_Read", 99, 99, 0, c["lbas_read"], str(c["lbas_read"]))
        )
    return SmartReading(
        device=d.name,
        available=True,
        protocol="ATA",
        model=d.model,
        serial=d.serial,
        health=s.health,
        temperature_c=s.temperature_c,
        power_on_hours=c["hours"],
        logical_sector=d.logical,
        capacity_bytes=d.size_bytes,
        rotational=d.rotational,
        attributes=tuple(attrs),
        exit_status=0,
        taken_at=st.t,
        **_logs(st, d, c["hours"]),
    )


def _logs(st: SimState, d: SimDisk, hours: int) -> dict[str, Any]:
    """The self-test and error logs a reading carries (backends/simulated/selftest.py)."""
    selftest.settle(st, d, hours)
    errs = selftest.errors(d, hours)
    return {
        "self_tests": selftest.entries(d, hours),
        "self_test_remaining": selftest.remaining(st, d),
        "error_count": len(errs),
        "errors": errs,
    }
