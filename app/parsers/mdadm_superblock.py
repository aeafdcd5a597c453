"""One device's md superblock: ``mdadm --examine --export DEV`` plus the plain ``--examine``.

The export (mdadm super1.c ``export_examine_super1``) prints ``MD_LEVEL``, ``MD_DEVICES``,
``MD_NAME``, ``MD_ARRAY_SIZE``, ``MD_UUID``, ``MD_UPDATE_TIME`` (epoch seconds),
``MD_DEV_UUID`` and ``MD_EVENTS``; it lacks the device role, the bitmap, the recovery offset and
the bad-block log, which come from the plain text (``parse_examine``). Either may be missing
(an older mdadm, a 0.90 superblock); what neither says stays None.
"""

from __future__ import annotations

from app.model.superblock import Superblock
from app.parsers.errors import ParseError
from app.parsers.mdadm import parse_detail_export, parse_examine
from app.parsers.safe import ascii_int, only_parse_errors

_SRC = "mdadm --examine --export"
MAX_TEXT = 64 * 1024


def _int(kv: dict[str, str], key: str) -> int | None:
    v = kv.get(key)
    if v is None:
        return None
    n = ascii_int(v.strip())
    if n is None or n < 0:
        raise ParseError(_SRC, f"{key} is not a number: {v[:40]!r}")
    return n


@only_parse_errors(_SRC)
def parse_superblock(device: str, export: str | None, plain: str | None = None) -> Superblock:
    """The superblock of ``device`` from mdadm's export and/or plain text; raises ParseError
    when neither is given or either is not mdadm's output."""
    if not export and not plain:
        raise ParseError(_SRC, f"{device}: no output to read")
    for t in (export, plain):
        if t is not None and len(t) > MAX_TEXT:
            raise ParseError(_SRC, f"{device}: output too long ({len(t)} characters)")
    kv = parse_detail_export(export) if export else {}
    if export and "MD_UUID" not in kv and "MD_EVENTS" not in kv:
        raise ParseError(_SRC, f"{device}: neither MD_UUID nor MD_EVENTS (not an md superblock)")
    ex = parse_examine(plain) if plain else None
    f = ex.fields if ex is not None else {}
    bitmap = f.get("Internal Bitmap")
    if bitmap is not None:
        bitmap = f"internal at {bitmap}"
    elif ex is not None and ex.feature_map and _bit(ex.feature_map, 0):
        bitmap = "internal"
    bad = f.get("Bad Block Log")
    events = _int(kv, "MD_EVENTS")
    if events is None and ex is not None:
        events = ex.events
    level = kv.get("MD_LEVEL") or (ex.raid_level if ex is not None else None)
    uuid = kv.get("MD_UUID") or (ex.array_uuid if ex is not None else None)
    name = kv.get("MD_NAME")
    if name is None and ex is not None and ex.name is not None:
        name = f"{ex.homehost}:{ex.name}" if ex.homehost and ":" not in ex.name else ex.name
    return Superblock(
        device=device,
        array_uuid=uuid,
        name=name,
        level=level,
        raid_devices=_int(kv, "MD_DEVICES") or (ex.raid_devices if ex is not None else None),
        events=events,
        update_time=_int(kv, "MD_UPDATE_TIME"),
        device_uuid=kv.get("MD_DEV_UUID") or (ex.device_uuid if ex is not None else None),
        device_role=ex.device_role if ex is not None else None,
        array_state=ex.array_state if ex is not None else None,
        bitmap=bitmap,
        recovery_offset_sectors=ex.recovery_offset_sectors if ex is not None else None,
        bad_blocks=bad,
        metadata=ex.version if ex is not None else None,
        state=ex.state if ex is not None else (),
    )


def _bit(feature_map: str, bit: int) -> bool:
    try:
        return bool(int(feature_map, 16) >> bit & 1)
    except ValueError:
        return False
