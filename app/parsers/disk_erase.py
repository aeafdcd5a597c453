"""What a disk says about erasing itself: ``hdparm -I``'s Security section (ATA) and ``nvme
id-ctrl -o json``'s sanitize and format capabilities (NVMe). Pure, bounded, never raises
anything but ParseError.

hdparm -I prints, under ``Security:``, one state per line, negated with ``not`` (hdparm's
identify.c): ``supported``, ``enabled``, ``locked``, ``frozen``, ``supported: enhanced erase``,
and the drive's own estimate ``NNmin for SECURITY ERASE UNIT. NNmin for ENHANCED SECURITY ERASE
UNIT.``. A frozen drive refuses SECURITY SET PASSWORD and SECURITY ERASE UNIT until it is power
cycled or resumed from suspend (ATA8-ACS, the Security feature set's SEC2 state).

NVMe Identify Controller (NVMe base specification): ``sanicap`` bit 0 crypto erase, bit 1 block
erase, bit 2 overwrite supported; ``fna`` bit 2 "cryptographic erase is supported as part of the
secure erase functionality" of Format NVM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.parsers.errors import ParseError
from app.parsers.safe import load_json

MAX_TEXT = 256 * 1024
_MIN = re.compile(r"([0-9]{1,6})min for (ENHANCED )?SECURITY ERASE UNIT")


@dataclass(frozen=True, slots=True)
class AtaSecurity:
    supported: bool
    enabled: bool
    locked: bool
    frozen: bool
    enhanced: bool
    erase_minutes: int | None = None
    enhanced_minutes: int | None = None


def parse_hdparm_security(text: str) -> AtaSecurity | None:
    """The Security section of ``hdparm -I`` (None: the drive has none)."""
    if len(text) > MAX_TEXT:
        raise ParseError("hdparm", "output larger than 256 KiB")
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.strip().startswith("Security:")), None)
    if start is None:
        return None
    states: dict[str, bool] = {}
    minutes: dict[bool, int] = {}
    for raw in lines[start + 1 :]:
        if raw[:1] not in (" ", "\t"):
            break  # the next section
        words = raw.split()
        if not words:
            continue
        for m in _MIN.finditer(raw):
            minutes[bool(m.group(2))] = int(m.group(1))
        neg = words[0] == "not"
        what = " ".join(words[1:] if neg else words)
        if what in ("supported", "enabled", "locked", "frozen", "supported: enhanced erase"):
            states[what] = not neg
    return AtaSecurity(
        supported=states.get("supported", False),
        enabled=states.get("enabled", False),
        locked=states.get("locked", False),
        frozen=states.get("frozen", False),
        enhanced=states.get("supported: enhanced erase", False),
        erase_minutes=minutes.get(False),
        enhanced_minutes=minutes.get(True),
    )


@dataclass(frozen=True, slots=True)
class NvmeErase:
    sanitize_crypto: bool
    sanitize_block: bool
    sanitize_overwrite: bool
    format_crypto: bool


def _bits(doc: dict[str, object], key: str) -> int:
    v = doc.get(key, 0)
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**32:
        raise ParseError("nvme id-ctrl", f"{key!r} is not a 32-bit number")
    return v


def parse_nvme_id_ctrl(text: str) -> NvmeErase:
    """``nvme id-ctrl DEV --output-format=json``: what the controller can erase with."""
    if len(text) > MAX_TEXT:
        raise ParseError("nvme id-ctrl", "output larger than 256 KiB")
    doc = load_json(text, "nvme id-ctrl")
    if not isinstance(doc, dict):
        raise ParseError("nvme id-ctrl", "not a JSON object")
    sanicap = _bits(doc, "sanicap")
    fna = _bits(doc, "fna")
    return NvmeErase(
        sanitize_crypto=bool(sanicap & 1),
        sanitize_block=bool(sanicap & 2),
        sanitize_overwrite=bool(sanicap & 4),
        format_crypto=bool(fna & 4),
    )
