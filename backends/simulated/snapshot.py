"""The Machine of a SimState (disks, partitions, arrays, LVM, filesystems); /proc/mdstat is in
:mod:`backends.simulated.mdstat`, the LiveSample in ``live``, SMART in ``smart``, sysfs files in ``sysfs``."""

from __future__ import annotations

from dataclasses import replace

from app.model import levels
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
from backends.simulated.lvm_raid import attr as raid_attr
from backends.simulated.lvm_raid import raid_model
from backends.simulated.mdstat import render_mdstat
from backends.simulated.records import SimArray, SimDisk
from backends.simulated.state import SimState
from backends.simulated.usage import usage_of


def partition_alignment_offset(disk: SimDisk, start_sector: int) -> int:
    """queue_limit_alignment_offset() of the kernel, in bytes, for a partition starting there."""
    granularity = max(disk.physical, disk.min_io)
    alignment = (start_sector % (granularity // 512)) * 512
    return (granularity + disk.alignment_offset - alignment) % granularity


# ---- arrays -------------------------------------------------------------------------------
def member_flags(
    st: SimState, a: SimArray, kept: dict[tuple[object, ...], MdMember] | None = None
) -> tuple[MdMember, ...]:
    """The members as md shows them. ``kept`` (the backend's ``StaticCache.members``): a member
    as it was at the last probe is the same object again, so the probe's escaping walk
    (app.escape) finds it clean by identity: big's 1,000 members were walked at every probe."""
    out = []
    size_kib = a.component_kib if a.level != "container" else None
    for m in a.members:
        key = (m.device, m.slot, tuple(sorted(m.state)), m.errors, m.data_offset, size_kib,
               m.recovery_start)  # fmt: skip
        member = kept.get(key) if kept is not None else None
        if member is None:
            member = MdMember(
                device=m.device,
                slot=m.slot,
                state=key[2],
                errors=m.errors,
                data_offset_sectors=m.data_offset,
                size_kib=size_kib,
                recovery_start=m.recovery_start,
            )
            if kept is not None:
                kept[key] = member
        out.append(member)
    return tuple(out)


def sync_status(st: SimState, a: SimArray) -> SyncStatus | None:
    job = a.job
    lo, hi = st.effective_limits(a)
    if job is None:
        if a.recovery_needed_until is not None and st.t < a.recovery_needed_until:
            # md_sync_action()'s "recover" before md_check_recovery() finds nothing to do
            return SyncStatus(action="recover", min_speed_kib_s=lo, max_speed_kib_s=hi)
        return None
    if job.waiting:  # as the Linux probe reads sync_completed "delayed"
        return SyncStatus(
            action="delayed", min_speed_kib_s=lo, max_speed_kib_s=hi, queued=job.action
        )
    return SyncStatus(
        action="frozen" if job.frozen else job.action,
        done_sectors=int(job.pos),
        total_sectors=job.total,
        speed_kib_s=st.reported_speed(a),
        min_speed_kib_s=lo,
        max_speed_kib_s=hi,
        reshape_position=a.reshape_position() if job.action == "reshape" else None,
        mismatch_cnt=mismatch_cnt(a),
        targets=job.targets,
    )


def build_array(
    st: SimState, a: SimArray, kept: dict[tuple[object, ...], MdMember] | None = None
) -> MdArray:
    level = a.level
    parity = level in levels.PARITY
    return MdArray(
        name=a.name,
        level=level,
        size_bytes=a.size_kib() * 1024,
        raid_disks=a.raid_disks if level != "container" else len(a.members),
        previous_raid_disks=old.raid_disks
        if (old := a.reshaping()) is not None and old.raid_disks != a.raid_disks
        else None,
        chunk_bytes=a.chunk_kib * 1024 if level not in ("raid1", "container", "linear") else None,
        layout=a.layout,
        metadata=a.metadata,
        array_name=a.array_name,
        uuid=a.uuid,
        array_state=a.array_state if level != "container" else "inactive",
        degraded=a.degraded(),
        bitmap=a.bitmap,
        members=member_flags(st, a, kept),
        sync=sync_status(st, a),
        stripe_cache_size=a.stripe_cache_size if parity else None,
        container=a.container,
        member_index=a.member_index,
        consistency_policy=a.consistency_policy(),
        speed_min_local=a.sync_speed_min if a.redundant() else None,
        speed_max_local=a.sync_speed_max if a.redundant() else None,
        mismatch_cnt=mismatch_cnt(a),
        last_sync_action=a.last_sync_action if level != "container" else None,
    )


def mismatch_cnt(a: SimArray) -> int | None:
    """md/mismatch_cnt as the Linux probe reads it: none for levels without redundancy (the
    array's field and its sync block show the same number)."""
    return a.mismatch_cnt if a.level not in ("raid0", "linear", "container") else None


# ---- Machine ------------------------------------------------------------------------------
MEMBERS_KEPT = 20_000  # big has 1,000; a member whose counters move adds one each probe


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
        self.members: dict[tuple[object, ...], MdMember] = {}

    def kept_members(self) -> dict[tuple[object, ...], MdMember]:
        """Members as last built, by what they show (at most ``MEMBERS_KEPT``: then afresh)."""
        if len(self.members) > MEMBERS_KEPT:
            self.members = {}
        return self.members


def ata_ports(st: SimState) -> dict[str, str]:
    """The simulation's libata ports: its SATA disks in name order on ata1, ata2, ... (as one
    AHCI controller numbers them; raid6-wd's sdb is on ata2, whose "ata2.00:" lines its
    failure left in the kernel log). USB and NVMe disks are not on libata."""
    sata = sorted(n for n, d in st.disks.items() if d.transport == "sata")
    return {n: f"ata{i}" for i, n in enumerate(sata, 1)}


def build_disk(d: SimDisk, ata_port: str | None = None) -> Disk:
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
        ata_port=ata_port,
    )


def refresh_static(st: SimState, cache: StaticCache) -> None:
    if cache.generation == st.generation:
        return
    ports = ata_ports(st)
    cache.disks = tuple(build_disk(d, ports.get(d.name)) for d in st.disks.values())
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
        if lv.raid is not None:  # each image whole on its PV, and its one-extent rmeta
            share = lv.raid.image_bytes + st.vgs[lv.vg].extent_size
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


def with_raid(st: SimState, lvs: tuple[LogicalVolume, ...]) -> tuple[LogicalVolume, ...]:
    """The raid LVs' state now (their sync moves with the clock: never cached)."""
    out = []
    for lv in lvs:
        sim = st.lvs.get(f"{lv.vg}/{lv.name}")
        if sim is None or sim.raid is None:
            out.append(lv)
            continue
        raid = raid_model(lv, sim.raid, st.t)
        out.append(replace(lv, raid=raid, attr=raid_attr(sim.raid)))
    return tuple(out)


def build_machine(st: SimState, cache: StaticCache) -> Machine:
    refresh_static(st, cache)
    pvs, vgs, lvs = cache.lvm
    lvs = with_raid(st, lvs)
    m = Machine(
        host=st.host,
        kernel=st.kernel,
        disks=cache.disks,
        partitions=cache.partitions,
        arrays=tuple(build_array(st, a, cache.kept_members()) for a in st.arrays.values()),
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
