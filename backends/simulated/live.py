"""The LiveSample of a SimState (md state, sync progress, per-device I/O counters), remade only
for what moved since the last one."""

from __future__ import annotations

from dataclasses import replace

from app.model.devices import LogicalVolume
from app.model.live import DiskIO, LiveSample, MdLive
from app.sync.dm_raid import lv_live
from backends.simulated.lvm_raid import IDLE, raid_model
from backends.simulated.records import SimArray, SimIO, SimMember
from backends.simulated.snapshot import mismatch_cnt, sync_status
from backends.simulated.state import SimState


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
        # (st.generation, st.runs) at the last sample: while they hold, no program ran and no
        # sync started or ended, so an idle array is as it was (its members are not compared)
        self.md_seen: tuple[int, int] | None = None


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
    if io is None:  # no I/O yet: every counter at 0 (the line is there, and times are kept)
        if had is not None and had == DiskIO(name, 0, 0, 0, 0, 0, 0, 0):
            return had
        return DiskIO(name, 0, 0, 0, 0, busy_time_ms=0, read_time_ms=0, write_time_ms=0)
    busy, rt, wt = io.busy_ms, io.read_ms, io.write_ms
    if (
        had is None
        or had.read_bytes != io.read_bytes
        or had.write_bytes != io.write_bytes
        or had.read_count != io.read_count
        or had.write_count != io.write_count
        or had.busy_time_ms != busy
        or had.read_time_ms != rt
        or had.write_time_ms != wt
    ):
        return DiskIO(
            name=name,
            read_bytes=io.read_bytes,
            write_bytes=io.write_bytes,
            read_count=io.read_count,
            write_count=io.write_count,
            busy_time_ms=busy,
            read_time_ms=rt,
            write_time_ms=wt,
        )
    return had


def _io_names(st: SimState) -> list[str]:
    """Every block device with a /proc/diskstats line: disks, partitions and md arrays (an
    IMSM container has one too)."""
    return [*st.disks, *st.partitions, *st.arrays]


def _cached_ios(cache: LiveCache, st: SimState) -> list[DiskIO]:
    """Every device's counters, remade only for those ``st.io_log`` says moved since the last
    sample (all of them after a structural change or when the log was emptied)."""
    n = len(st.disks) + len(st.partitions) + len(st.arrays)
    if cache.io_generation != st.generation or cache.io_epoch != st.io_epoch or len(cache.ios) != n:
        names = _io_names(st)
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
    # nothing ran since the last sample: an idle array's MdLive (one without a sync) is the
    # same (issue 44: comparing the members of big's 234 idle arrays each second was an
    # eighth of the monitor's time)
    quiet = cache is not None and cache.md_seen == (st.generation, st.runs)
    for a in st.arrays.values():
        if a.level == "container":
            continue
        if cache is not None:
            if quiet and a.job is None and (had := cache.md.get(a.name)) is not None:
                built = had[4]
                if built.sync is None:
                    arrays.append(built)
                    continue
            if (same := _cached_md(cache, a)) is not None:
                arrays.append(same)
                continue
        md = MdLive(
            name=a.name,
            array_state=a.array_state,
            degraded=a.degraded(),
            sync=sync_status(st, a),
            member_states=tuple((m.device, tuple(sorted(m.state))) for m in a.members),
            level=a.level,
            raid_disks=a.raid_disks,
            mismatch_cnt=mismatch_cnt(a),
            last_sync_action=a.last_sync_action,
            sync_min=a.sync_min
            if a.job is not None and a.job.action in ("check", "repair")
            else None,
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
        ios = [_disk_io(name, st.io.get(name), None) for name in _io_names(st)]
    else:
        ios = _cached_ios(cache, st)
        cache.md_seen = (st.generation, st.runs)
    return LiveSample(taken_at=st.t, arrays=tuple(arrays), disk_io=tuple(ios), lvs=raid_lvs(st))


def raid_lvs(st: SimState) -> tuple[MdLive, ...]:
    """The raid LVs as md's live state, as the Linux sampler makes them from dmsetup status:
    the speed is the simulated sync's own rate (no image devices have I/O lines here)."""
    out: list[MdLive] = []
    for sim in st.lvs.values():
        if sim.raid is None:
            continue
        lv = LogicalVolume(sim.name, sim.vg, sim.size_bytes, sim.segtype)
        lv = replace(lv, raid=raid_model(lv, sim.raid, st.t))
        rate = sim.raid.rate_kib_s if sim.raid.action != IDLE else None
        live = lv_live(lv, rate or None, st.speed_limit_min)
        if live is not None:
            out.append(live)
    return tuple(out)
