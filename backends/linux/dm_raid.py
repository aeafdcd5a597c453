"""LVM RAID beyond ``lvm fullreport``, read once per probe when a raid LV exists: its hidden
sub-LVs (``lvs -a``: fullreport lists only visible LVs, so no image's PV) and, when one is
active, the dm-raid targets' status (``dmsetup status --target raid``, kernel
Documentation/admin-guide/device-mapper/dm-raid.rst)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from app.model.devices import LogicalVolume, ProbeNote
from app.model.live import DiskIO, MdLive
from app.parsers.errors import ParseError
from app.parsers.lvm import parse_lvs
from app.parsers.lvm_raid import (
    DMSETUP_RAID_ARGV,
    attach_status,
    link_images,
    parse_raid_status,
)
from app.parsers.safe import ascii_int
from app.sync.dm_raid import image_io_kib_s, lv_live
from backends.linux.source import NOT_FOUND, Source

LVS_SUB_ARGV: tuple[str, ...] = (
    "lvs",
    "-a",
    "--reportformat",
    "json",
    "--units",
    "b",
    "--nosuffix",
    "-o",
    "lv_name,vg_name,lv_attr,lv_size,segtype,devices,lv_uuid,lv_kernel_minor",
)
TIMEOUT = 30.0


def _failed(what: str, r_code: int, stderr: str) -> str:
    first = next((ln.strip() for ln in stderr.splitlines() if ln.strip()), "no message")
    return f"{what} failed (exit {r_code}): {first[:200]}"


def _sub_lvs(
    source: Source, notes: list[ProbeNote], remap: Callable[[str], str]
) -> tuple[LogicalVolume, ...]:
    r = source.run(LVS_SUB_ARGV, timeout=TIMEOUT)
    if not r.stdout.strip():
        if r.returncode != NOT_FOUND:
            why = _failed("lvs -a", r.returncode, r.stderr)
            notes.append(ProbeNote("lvm", f"{why}: raid LVs' images not read"))
        return ()
    try:
        subs = parse_lvs(r.stdout).lvs
    except ParseError as e:
        notes.append(ProbeNote("lvm", f"cannot read lvs -a: {e}", "error"))
        return ()
    return tuple(
        replace(lv, devices=tuple(remap(d) for d in lv.devices)) for lv in subs if lv.hidden
    )


def with_raid_details(
    source: Source,
    lvs: tuple[LogicalVolume, ...],
    notes: list[ProbeNote],
    remap: Callable[[str], str],
) -> tuple[LogicalVolume, ...]:
    """``lvs`` with each raid LV's images (their PVs named as ``remap`` names them) and, when one
    is active, its dm-raid status and each image's health character."""
    if not any(lv.raid is not None for lv in lvs):
        return lvs
    lvs = link_images(lvs, _sub_lvs(source, notes, remap))
    if not any(lv.raid is not None and lv.active for lv in lvs):
        return lvs
    r = source.run(DMSETUP_RAID_ARGV, timeout=TIMEOUT)
    if r.returncode == NOT_FOUND:
        notes.append(ProbeNote("dmsetup", "dmsetup not installed: raid LVs' image health not read"))
        return lvs
    if not r.ok:
        notes.append(ProbeNote("dmsetup", _failed("dmsetup status", r.returncode, r.stderr)))
        return lvs
    try:
        return attach_status(lvs, parse_raid_status(r.stdout))
    except ParseError as e:
        notes.append(ProbeNote("dmsetup", f"cannot read dmsetup status: {e}", "error"))
        return lvs


SYSTEM_MIN = "/proc/sys/dev/raid/speed_limit_min"
SAMPLE_TIMEOUT = 5.0


class RaidLvSampler:
    """The raid LVs' part of the 1 Hz sample: one ``dmsetup status --target raid`` for the
    active raid LVs the last probe found (none: no program run), each LV as md's live state
    (:func:`app.sync.dm_raid.lv_live`), its sync's speed the busiest image's I/O since the
    previous sample (:func:`app.sync.dm_raid.image_io_kib_s`: dm-raid has no sync_speed, and
    its ratio moves by 1/16 of the device at a time). A failed or unreadable run gives no LV
    (a 1 Hz poll reports nothing; the next probe does)."""

    def __init__(self) -> None:
        self._lvs: tuple[LogicalVolume, ...] = ()
        self._prev: tuple[float, dict[str, DiskIO]] | None = None

    def probed(self, lvs: tuple[LogicalVolume, ...]) -> None:
        self._lvs = tuple(lv for lv in lvs if lv.raid is not None and lv.active and lv.kernel_name)

    def read(self, source: Source) -> tuple[int | None, str] | None:
        """md's min and the dm-raid status of the active raid LVs, read before the sample's
        disk counters (:meth:`sample`); None with no raid LV, or when dmsetup failed."""
        if not self._lvs:
            return None
        # read before the program: over ssh the sample's batch answers it (backends.linux.ssh)
        system_min = ascii_int((source.read_text(SYSTEM_MIN) or "").strip())
        r = source.run(DMSETUP_RAID_ARGV, timeout=SAMPLE_TIMEOUT)
        return (system_min, r.stdout) if r.ok else None

    def sample(
        self, status: tuple[int | None, str] | None, t: float, disk_io: tuple[DiskIO, ...]
    ) -> tuple[MdLive, ...]:
        """The LVs as :meth:`read` found them, with the disk counters read *after* it: a look
        that sees a sync ended must count all it wrote (VM: a resync released to full speed
        ended between a diskstats read and a dmsetup run under TCG, and its record had
        28.8 of 54.7 MiB)."""
        if not self._lvs:
            self._prev = None
            return ()
        io = {d.name: d for d in disk_io}
        prev, self._prev = self._prev, (t, io)
        if status is None:
            return ()
        system_min, text = status
        try:
            lvs = attach_status(self._lvs, parse_raid_status(text))
        except ParseError:
            return ()
        out: list[MdLive] = []
        for lv in lvs:
            rate = image_io_kib_s(lv, prev[1], io, t - prev[0]) if prev is not None else None
            live = lv_live(lv, rate, system_min)
            if live is not None:
                out.append(live)
        return tuple(out)
