"""LVM RAID: the raid fields of an ``lvs``/``lvm fullreport`` LV row, the images of a raid LV
from its hidden sub-LVs, and ``dmsetup status`` of dm-raid targets.

Field meanings and the status line's format: :mod:`app.model.lvm_raid`. Every value is
bounded: a percent in 0..100, counts and rates within 64 bits, the health characters from
their alphabet, at most :data:`MAX_DEVICES` devices (dm-raid.c ``MAX_RAID_DEVICES`` 253).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from app.model.devices import LogicalVolume
from app.model.lvm_raid import (
    DEVICE_HEALTH,
    DM_SYNC_ACTIONS,
    HEALTH_BITS,
    DmRaidStatus,
    RaidImage,
    RaidLv,
    is_raid_segtype,
)
from app.parsers.errors import ParseError
from app.parsers.safe import ascii_float, ascii_int, check_int, only_parse_errors

SOURCE = "lvm"
DMSETUP_RAID_ARGV: tuple[str, ...] = ("dmsetup", "status", "--target", "raid")
DM_SOURCE = "dmsetup status"
MAX_DEVICES = 253  # dm-raid.c MAX_RAID_DEVICES
MAX_LINES = 4096  # dm targets in one `dmsetup status`
_SYNC_WORDS = frozenset(DM_SYNC_ACTIONS)
_SUB_LV = re.compile(r"^(?P<lv>.+)_r(?P<kind>image|meta)_(?P<n>[0-9]{1,3})$", re.ASCII)


def _text(v: Any) -> str | None:
    if v is None:
        return None
    s = str(v).strip()
    return s or None


def _count(v: Any, key: str) -> int | None:
    s = _text(v)
    if s is None:
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        return check_int(v, SOURCE, key)
    n = ascii_int(s)
    if n is None:
        raise ParseError(SOURCE, f"{key}={s[:40]!r} is not a count")
    return n


def _percent(v: Any, key: str) -> float | None:
    s = _text(v)
    if s is None:
        return None
    f = ascii_float(s.rstrip("%"))
    if f is None or not 0.0 <= f <= 100.0:
        raise ParseError(SOURCE, f"{key}={s[:40]!r} is not a percent")
    return f


def raid_of_row(row: Mapping[str, Any], segtype: str, attr: str) -> RaidLv | None:
    """The raid fields of one LV row; None for an LV that is no raid LV."""
    if not is_raid_segtype(segtype) and attr[:1] not in ("r", "R"):
        return None
    action = _text(row.get("raid_sync_action"))
    if action is not None and action not in _SYNC_WORDS:
        raise ParseError(SOURCE, f"raid_sync_action={action[:40]!r} is not a sync action")
    bit = attr[8] if len(attr) >= 9 else None
    if bit is not None and bit != "-" and bit not in HEALTH_BITS:
        raise ParseError(SOURCE, f"lv_attr={attr[:20]!r}: unknown volume health {bit!r}")
    health = _text(row.get("lv_health_status"))
    if health is not None and len(health) > 64:
        raise ParseError(SOURCE, "lv_health_status is longer than 64 characters")
    min_rate = _count(row.get("raid_min_recovery_rate"), "raid_min_recovery_rate")
    max_rate = _count(row.get("raid_max_recovery_rate"), "raid_max_recovery_rate")
    return RaidLv(
        sync_percent=_percent(row.get("sync_percent"), "sync_percent"),
        sync_action=action,
        mismatches=_count(row.get("raid_mismatch_count"), "raid_mismatch_count"),
        min_rate_kib_s=min_rate or None,  # 0 = not set (lvchange --minrecoveryrate 0)
        max_rate_kib_s=max_rate or None,
        health_status=health,
        health_bit=bit if bit not in (None, "-") else None,
        integrity_mismatches=_count(row.get("integritymismatches"), "integritymismatches"),
        integrity_mode=_integrity_mode(row.get("raidintegritymode")),
    )


def _integrity_mode(v: Any) -> str | None:
    """raidintegritymode: "journal" or "bitmap" (lvmraid(7)); empty without integrity."""
    s = _text(v)
    if not s:
        return None
    if s not in ("journal", "bitmap"):
        raise ParseError(SOURCE, f"raidintegritymode={s[:40]!r} is not journal or bitmap")
    return s


def link_images(
    lvs: Iterable[LogicalVolume], hidden: Iterable[LogicalVolume] = ()
) -> tuple[LogicalVolume, ...]:
    """Each raid LV given its images: ``<lv>_rimage_N`` / ``<lv>_rmeta_N`` hidden sub-LVs of its
    VG (among ``lvs``, or ``hidden``: ``lvs -a``'s rows, which ``lvm fullreport`` leaves out),
    with the PVs their segments use."""
    lvs = tuple(lvs)
    subs: dict[tuple[str, str], dict[int, dict[str, LogicalVolume]]] = {}
    for lv in (*lvs, *hidden):
        m = _SUB_LV.match(lv.name)
        if m is None:
            continue
        n = int(m.group("n"))
        subs.setdefault((lv.vg, m.group("lv")), {}).setdefault(n, {})[m.group("kind")] = lv
    out: list[LogicalVolume] = []
    for lv in lvs:
        if lv.raid is None:
            out.append(lv)
            continue
        images: list[RaidImage] = []
        for n, parts in sorted(subs.get((lv.vg, lv.name), {}).items()):
            image, meta = parts.get("image"), parts.get("meta")
            if image is None:
                continue
            pvs = list(image.devices)
            if meta is not None:
                pvs.extend(d for d in meta.devices if d not in pvs)
            images.append(
                RaidImage(
                    n,
                    image.name,
                    meta.name if meta else None,
                    tuple(pvs[:MAX_DEVICES]),
                    kernel_name=image.kernel_name,
                )
            )
        out.append(replace(lv, raid=replace(lv.raid, images=tuple(images[:MAX_DEVICES]))))
    return tuple(out)


def _status_fields(name: str, f: list[str]) -> DmRaidStatus:
    # f = [start, length, "raid", raid_type, #devices, health, ratio, action, mismatch, ...]
    devices = ascii_int(f[4])
    if devices is None or not 1 <= devices <= MAX_DEVICES:
        raise ParseError(DM_SOURCE, f"{name}: device count {f[4][:20]!r} is not 1..{MAX_DEVICES}")
    health = f[5]
    if len(health) != devices or any(c not in DEVICE_HEALTH for c in health):
        raise ParseError(DM_SOURCE, f"{name}: health {health[:40]!r} is not {devices} of A/a/D")
    done_s, sep, total_s = f[6].partition("/")
    done, total = ascii_int(done_s), ascii_int(total_s)
    if not sep or done is None or total is None:
        raise ParseError(DM_SOURCE, f"{name}: sync ratio {f[6][:40]!r} is not done/total")
    action = f[7] if len(f) > 7 else None
    if action is not None and action not in _SYNC_WORDS:
        raise ParseError(DM_SOURCE, f"{name}: sync action {action[:20]!r} is unknown")
    mismatch = ascii_int(f[8]) if len(f) > 8 else None
    if len(f) > 8 and mismatch is None:
        raise ParseError(DM_SOURCE, f"{name}: mismatch count {f[8][:20]!r} is not a number")
    offset = ascii_int(f[9]) if len(f) > 9 else None
    if len(f) > 9 and offset is None:
        raise ParseError(DM_SOURCE, f"{name}: data offset {f[9][:20]!r} is not a number")
    journal = f[10] if len(f) > 10 else None
    if journal is not None and journal not in ("A", "D", "-"):
        raise ParseError(DM_SOURCE, f"{name}: journal {journal[:20]!r} is not A, D or -")
    return DmRaidStatus(
        name=name,
        raid_type=f[3][:32],
        devices=devices,
        health=health,
        done_sectors=done,
        total_sectors=total,
        sync_action=action,
        mismatch_cnt=mismatch,
        data_offset=offset,
        journal=journal,
    )


@only_parse_errors(DM_SOURCE)
def parse_raid_status(text: str) -> tuple[DmRaidStatus, ...]:
    """``dmsetup status --target raid``: ``name: <start> <len> raid ...`` per line; other
    targets' lines (``dmsetup status`` of everything) are skipped."""
    out: list[DmRaidStatus] = []
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) > MAX_LINES:
        raise ParseError(DM_SOURCE, f"more than {MAX_LINES} lines")
    for line in lines:
        name, sep, rest = line.partition(": ")
        if not sep:
            if line.strip() == "No devices found":
                continue
            raise ParseError(DM_SOURCE, f"line without a device name: {line[:60]!r}")
        f = rest.split()
        if len(f) < 3 or f[2] != "raid":
            continue
        if len(f) < 7 or len(f) > 11:
            raise ParseError(DM_SOURCE, f"{name[:60]}: {len(f)} fields, not 7..11")
        out.append(_status_fields(name.strip()[:256], f))
    return tuple(out)


def attach_status(
    lvs: Iterable[LogicalVolume], statuses: Iterable[DmRaidStatus]
) -> tuple[LogicalVolume, ...]:
    """Each raid LV given its target's status (matched by dm name) and each image its health
    character (dm-raid lists the devices in image order)."""
    by_name = {s.name: s for s in statuses}
    out: list[LogicalVolume] = []
    for lv in lvs:
        st = by_name.get(lv.dm_name) if lv.raid is not None else None
        if lv.raid is None or st is None:
            out.append(lv)
            continue
        images = tuple(
            replace(i, health=st.health[i.index]) if i.index < len(st.health) else i
            for i in lv.raid.images
        )
        out.append(replace(lv, raid=replace(lv.raid, dm=st, images=images)))
    return tuple(out)
