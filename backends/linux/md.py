"""Reading md arrays from sysfs (``/sys/block/md*/md/``) through a ``Source``.

The values are parsed by ``app.parsers.md_sysfs``; this module decides which files to read,
what a missing file means, and turns vanished devices / unreadable values into notes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from app.model import levels
from app.model.devices import MdArray, MdMember, ProbeNote, SyncStatus
from app.model.live import MdLive
from app.model.md_names import level_name
from app.parsers import md_sysfs
from app.parsers.errors import ParseError
from app.parsers.mdstat import MdstatProgress, parse_mdstat
from backends.linux.source import Source

SYS_BLOCK = "/sys/block"

T = TypeVar("T")


class MdReader:
    """Reads one md array's attributes, collecting notes instead of raising."""

    def __init__(self, source: Source, name: str) -> None:
        self.src = source
        self.name = name
        self.base = f"{SYS_BLOCK}/{name}/md"
        self.notes: list[ProbeNote] = []

    def raw(self, attr: str) -> str | None:
        text = self.src.read_text(f"{self.base}/{attr}")
        return None if text is None else text.strip()

    def parsed(self, attr: str, fn: Callable[[str], T]) -> T | None:
        path = f"{self.base}/{attr}"  # the note names the file and the field
        return self.parse(self.src.read_text(path), fn, f"{attr} ({path})")

    def parse(
        self, text: str | None, fn: Callable[[str], T], what: str, *, source: str = "sysfs"
    ) -> T | None:
        """``fn(text)``; text that is not what ``fn`` takes is a note about ``what``."""
        if text is None:
            return None
        try:
            return fn(text)
        except ParseError as e:
            self.notes.append(ProbeNote(source, f"{self.name}: {what}: {e}"))
            return None

    def int_attr(self, attr: str) -> int | None:
        return self.parsed(attr, md_sysfs.parse_int)

    # ---- sync -----------------------------------------------------------------------
    def sync(self, members: tuple[MdMember, ...] = ()) -> SyncStatus | None:
        action = self.raw("sync_action")
        completed = self.parsed("sync_completed", md_sysfs.parse_sync_completed)
        if action is None and completed is None:
            return None
        done = completed.done if completed else None
        total = completed.total if completed else None
        word = completed.word if completed else None
        queued = None
        if word in ("delayed", "pending"):
            queued = action if action not in (None, "idle", "frozen") else None
            action = word
        action = action or "idle"
        if action == "idle" and self.raw("array_state") == "read-auto":
            # An auto-read-only array holds its resync until the first write (mdstat shows
            # "resync=PENDING"): sysfs says idle, but resync_start says what is still to do.
            start = self.raw("resync_start")
            if start is not None and start.isdigit():
                return SyncStatus(
                    action="pending", done_sectors=int(start), total_sectors=self._resync_total()
                )
        if action == "idle" or (action == "frozen" and done is None):
            return None
        speed = self.parsed("sync_speed", md_sysfs.parse_int)
        targets = tuple(
            m.device
            for m in members
            if "faulty" not in m.state
            and ("replacement" in m.state or (m.slot is not None and "in_sync" not in m.state))
        )
        return SyncStatus(
            action=action,
            done_sectors=done,
            total_sectors=total,
            speed_kib_s=speed,
            min_speed_kib_s=self.parsed("sync_speed_min", md_sysfs.parse_speed_limit),
            max_speed_kib_s=self.parsed("sync_speed_max", md_sysfs.parse_speed_limit),
            reshape_position=(self.int_attr("reshape_position") if action == "reshape" else None),
            mismatch_cnt=self.int_attr("mismatch_cnt"),
            targets=targets if action in ("recover", "reshape") else (),
            queued=queued,
        )

    def _resync_total(self) -> int | None:
        """What sync_completed would count to: RAID-10 resyncs in array sectors, the other
        levels in component sectors (as seen in the VM: 1044480 vs 522240 for 255 MiB members)."""
        if self.raw("level") == "raid10":
            size = self.src.read_text(f"/sys/block/{self.name}/size")
            return int(size) if size is not None and size.strip().isdigit() else None
        kib = self.int_attr("component_size")
        return kib * 2 if kib else None

    # ---- members --------------------------------------------------------------------
    def member_dirs(self) -> tuple[str, ...]:
        return tuple(n for n in self.src.listdir(self.base) if n.startswith("dev-"))

    def member(self, entry: str, *, full: bool = True) -> MdMember | None:
        device = entry[4:]
        state_text = self.src.read_text(f"{self.base}/{entry}/state")
        if state_text is None:
            self.notes.append(
                ProbeNote(
                    "sysfs",
                    f"{self.name}: member {device} vanished during the probe: skipped",
                    "info",
                )
            )
            return None
        try:
            state = md_sysfs.parse_dev_state(state_text)
        except ParseError as e:
            self.notes.append(ProbeNote("sysfs", f"{self.name}: {device}: {e}"))
            state = ()
        slot = self.parsed(f"{entry}/slot", md_sysfs.parse_slot)
        if not full:
            return MdMember(device=device, slot=slot, state=state)
        return MdMember(
            device=device,
            slot=slot,
            state=state,
            errors=self.int_attr(f"{entry}/errors"),
            data_offset_sectors=self.int_attr(f"{entry}/offset"),
            size_kib=self.int_attr(f"{entry}/size"),
            recovery_start=self.int_attr(f"{entry}/recovery_start"),
        )

    def members(self, *, full: bool = True) -> tuple[MdMember, ...]:
        out = []
        for entry in self.member_dirs():
            m = self.member(entry, full=full)
            if m is not None:
                out.append(m)
        return tuple(out)


def md_names(source: Source) -> tuple[str, ...]:
    """Kernel names of md devices in /sys/block."""
    names = [n for n in source.listdir(SYS_BLOCK) if n.startswith("md")]
    return tuple(sorted(names, key=lambda n: (len(n), n)))


def _array_name(
    source: Source, name: str, dev_names: dict[str, str]
) -> tuple[str | None, str | None]:
    """(MD_NAME, MD_UUID) from udev's database, falling back to /dev/md/ symlinks for the name."""
    md_name = md_uuid = None
    devnum = source.read_text(f"{SYS_BLOCK}/{name}/dev")
    if devnum is not None:
        data = source.read_text(f"/run/udev/data/b{devnum.strip()}")
        for line in (data or "").splitlines():
            if line.startswith("E:MD_NAME="):
                md_name = line.split("=", 1)[1].strip() or None
            elif line.startswith("E:MD_UUID="):
                md_uuid = line.split("=", 1)[1].strip() or None
    if md_name is None:
        md_name = dev_names.get(name)
    return md_name, md_uuid


def dev_md_links(source: Source) -> dict[str, str]:
    """kernel name -> name under /dev/md/ (``/dev/md/data -> ../md127``)."""
    out: dict[str, str] = {}
    for entry in source.listdir("/dev/md"):
        target = source.readlink(f"/dev/md/{entry}")
        if target:
            out.setdefault(target.rsplit("/", 1)[-1], entry)
    return out


def _level(raw: str | None) -> str | None:
    """md/level as md's table names it: md.c level_show prints the personality's name
    ("raid10"), but the bare number ("10") while the array has no personality yet (being
    created, or inactive); names md does not number (container, multipath) stay as read."""
    if not raw:
        return raw
    return level_name(raw) or raw


def read_array(
    source: Source, name: str, dev_names: dict[str, str]
) -> tuple[MdArray | None, list[ProbeNote]]:
    """One array from sysfs; (None, notes) when it vanished or has no md directory."""
    r = MdReader(source, name)
    array_state = r.raw("array_state")
    level = _level(r.raw("level"))
    if array_state is None and level is None:
        r.notes.append(
            ProbeNote(
                "sysfs", f"{name}: no md attributes (vanished during the probe?): skipped", "info"
            )
        )
        return None, r.notes
    metadata = r.parsed("metadata_version", md_sysfs.parse_metadata_version)
    members = r.members()
    ext = None
    if metadata is not None:
        try:
            ext = md_sysfs.parse_external_member(metadata)
        except ParseError as e:
            r.notes.append(ProbeNote("sysfs", f"{name}: {e}"))
    if not level:
        if metadata is not None and metadata.startswith("external:") and ext is None:
            level = "container"
        else:
            level = "unknown"
    layout_text = r.raw("layout") if level in levels.STRIPED else None
    layout = r.parse(layout_text, lambda t: md_sysfs.layout_name(level, t), "layout")
    chunk = r.parsed("chunk_size", md_sysfs.parse_chunk_size) if level in levels.STRIPED else None
    size_sectors = r.parse(source.read_text(f"{SYS_BLOCK}/{name}/size"), md_sysfs.parse_int, "size")
    # "+8" (internal, sectors from the superblock), "file", or None
    bitmap = r.parsed("bitmap/location", md_sysfs.parse_bitmap_location)
    md_name, md_uuid = _array_name(source, name, dev_names)
    # md's own, else udev's (mdadm's spelling), by one rule: all zeros is no UUID yet
    uuid = r.parsed("uuid", md_sysfs.parse_array_uuid) or r.parse(
        md_uuid, md_sysfs.parse_array_uuid, "MD_UUID", source="udev"
    )
    stripe_cache = r.int_attr("stripe_cache_size") if level in levels.PARITY else None
    degraded = r.int_attr("degraded") if level not in ("raid0", "linear", "container") else None
    member_index = None
    if ext is not None and ext.member.isdigit():
        member_index = int(ext.member)
    # a container has no raid_disks of its own: md.c raid_disks_show prints nothing for it
    sized = level != "container"
    arr = MdArray(
        name=name,
        level=level,
        size_bytes=size_sectors * 512 if size_sectors else None,
        raid_disks=r.parsed("raid_disks", md_sysfs.parse_raid_disks) if sized else None,
        previous_raid_disks=r.parsed("raid_disks", md_sysfs.parse_previous_raid_disks)
        if sized
        else None,
        chunk_bytes=chunk or None,
        layout=layout,
        metadata=metadata,
        array_name=md_name,
        uuid=uuid,
        array_state=array_state,
        degraded=degraded or 0,
        bitmap=bitmap,
        members=members,
        sync=r.sync(members),
        stripe_cache_size=stripe_cache,
        container=ext.container if ext else None,
        member_index=member_index,
        consistency_policy=r.raw("consistency_policy"),
        read_only=array_state in ("readonly", "read-auto"),
        mismatch_cnt=r.int_attr("mismatch_cnt") if level not in ("raid0", "linear") else None,
        last_sync_action=r.raw("last_sync_action"),
        speed_min_local=r.parsed("sync_speed_min", md_sysfs.parse_local_speed_limit)
        if level in levels.REDUNDANT
        else None,
        speed_max_local=r.parsed("sync_speed_max", md_sysfs.parse_local_speed_limit)
        if level in levels.REDUNDANT
        else None,
    )
    return arr, r.notes


def read_live(source: Source, name: str) -> tuple[MdLive | None, list[ProbeNote]]:
    """The cheap 1 Hz read of one array: sync files and member states only."""
    r = MdReader(source, name)
    array_state = r.raw("array_state")
    level = _level(r.raw("level"))
    if array_state is None and level is None:
        return None, r.notes
    members = r.members(full=False)
    raid = level in levels.PARITY
    sync = r.sync(members)
    return (
        MdLive(
            name=name,
            array_state=array_state,
            degraded=(r.int_attr("degraded") or 0) if level not in ("raid0", "linear") else 0,
            sync=sync,
            member_states=tuple((m.device, m.state) for m in members),
            level=level or None,
            mismatch_cnt=r.int_attr("mismatch_cnt"),
            last_sync_action=r.raw("last_sync_action"),
            raid_disks=r.parsed("raid_disks", md_sysfs.parse_raid_disks),
            stripe_cache_size=r.int_attr("stripe_cache_size") if raid else None,
            # read only while a check/repair runs: one file more per look then
            sync_min=r.int_attr("sync_min")
            if sync is not None and sync.action in ("check", "repair")
            else None,
        ),
        r.notes,
    )


def fresher_progress(sync: SyncStatus | None, progress: MdstatProgress | None) -> SyncStatus | None:
    """``sync`` with /proc/mdstat's done count where it is ahead of sysfs' for the same total.

    Both are the kernel's: md/sync_completed prints ``curr_resync_completed``, which md_do_sync
    (drivers/md/md.c) moves only when the sync has gone 1/16 of the array past it, every
    UPDATE_FREQUENCY (5 min), or at resync_max; /proc/mdstat's progress (``status_resync``) is
    ``curr_resync`` minus the requests still in flight, i.e. what is done now. Measured in the VM
    (tests/fixtures/vm/raid1-bitmap-recovering, a bitmap re-add held at 20 KiB/s): sysfs 327680 /
    522240 sectors while mdstat read (165888/261120) KiB = 331776 sectors. The fresher wins."""
    p = progress
    if sync is None or sync.done_sectors is None or p is None:
        return sync
    if p.done_kib is None or p.total_kib is None:
        return sync
    done, total = p.done_kib * 2, p.total_kib * 2
    if total != sync.total_sectors or done <= sync.done_sectors or done > total:
        return sync
    return replace(sync, done_sectors=done)


def mdstat_progress(mdstat_text: str | None) -> dict[str, MdstatProgress]:
    """Each array's progress line in /proc/mdstat (none where it cannot be read)."""
    if mdstat_text is None:
        return {}
    try:
        m = parse_mdstat(mdstat_text)
    except ParseError:
        return {}
    return {a.name: a.progress for a in m.arrays if a.progress is not None}
