"""Datasheet ratings of hard disk families, matched on the SMART model string: the rate of
unrecoverable read errors per bit read (URE) and the workload rate (TB transferred per year).

A maker states both for a drive family: "non-recoverable read errors per bits read <1 in 10^14"
(WD), "Nonrecoverable Read Errors per Bits Read, Max 1 per 10E15" (Seagate); "Workload Rate
180 TB/yr", defined as user data transferred to or from the drive, reads and writes alike.
The URE figures fall in three classes (consumer and NAS drives 1 in 10^14 bits, nearline 1 in
10^15, enterprise 1 in 10^16); each row below gives its own figure and where it comes from,
the same way app.model.endurance gives SSD TBW. A family or a figure that is not listed is
None: "unknown", never a neighbour's number.

    drive_rating("WDC WD10EFRX-68FYTN0") -> DriveRating(family="WD Red", ure_per_bit=1e-14,
                                                        workload_tb_per_year=180, ...)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.model.endurance import normalise

# the three URE classes the datasheets use, per bit read
CONSUMER = 1e-14
NEARLINE = 1e-15
ENTERPRISE = 1e-16
URE_CLASSES: tuple[tuple[float, str], ...] = (
    (CONSUMER, "consumer/NAS class: 1 per 10^14 bits"),
    (NEARLINE, "nearline class: 1 per 10^15 bits"),
    (ENTERPRISE, "enterprise class: 1 per 10^16 bits"),
)

_WD_RED = (
    "WD Red / WD Red Plus NAS hard drive specification sheet: non-recoverable read errors per "
    "bits read <1 in 10^14; workload rate 180 TB/yr (user data transferred to or from the drive)"
)
_WD_RED_PRO = (
    "WD Red Pro NAS hard drive specification sheet: workload rate 300 TB/yr (issue 41; "
    "ServeTheHome, 'WD Red Pro 20TB launched', quotes WD: user data transferred to or from "
    "the drive)"
)
_WD_GOLD = "WD Gold enterprise-class hard drive specification sheet: workload rate 550 TB/yr"
_ULTRASTAR = (
    "WD Ultrastar DC HC500-series datasheet: non-recoverable read errors per bits read 1 in "
    "10^15; workload rate 550 TB/yr"
)
_IRONWOLF = (
    "Seagate IronWolf data sheet: nonrecoverable read errors per bits read, max 1 per 10E14; "
    "workload rate limit 180 TB/yr"
)
_IRONWOLF_PRO = (
    "Seagate IronWolf Pro data sheet: nonrecoverable read errors per bits read, max 1 per "
    "10E15; workload rate limit 300 TB/yr"
)
_EXOS = (
    "Seagate Exos X data sheet: nonrecoverable read errors per bits read, max 1 sector per "
    "10E15; workload rate limit 550 TB/yr"
)
_EXOS_10K = (
    "Seagate Exos 10E2400 (10K rpm SAS) data sheet: nonrecoverable read errors per bits read, "
    "max 1 sector per 10E16"
)
_BARRACUDA = (
    "Seagate BarraCuda data sheet: nonrecoverable read errors per bits read, max 1 per 10E14; "
    "workload rate limit 55 TB/yr"
)


@dataclass(frozen=True, slots=True)
class DriveRating:
    family: str  # "WD Red"
    ure_per_bit: float | None  # unrecoverable read errors per bit read; None: not known
    workload_tb_per_year: int | None  # rated TB (10^12 B) read + written per year; None: unknown
    source: str  # the datasheet the figures come from

    @property
    def ure_text(self) -> str:
        """ "1 per 10^14 bits (consumer/NAS class)" or "unknown"."""
        if self.ure_per_bit is None:
            return "unknown"
        return ure_words(self.ure_per_bit)


def ure_words(rate: float) -> str:
    for value, words in URE_CLASSES:
        if rate == value:
            return words
    return f"{rate:.0e} per bit"


@dataclass(frozen=True, slots=True)
class _Family:
    name: str
    pattern: re.Pattern[str]  # on the normalised model (app.model.endurance.normalise)
    ure: float | None
    workload: int | None
    source: str


FAMILIES: tuple[_Family, ...] = (
    # WDxxEFRX (Red, CMR), EFAX (Red, SMR), EFZX / EFPX (Red Plus)
    _Family("WD Red", re.compile(r"^(?:WDC )?WD\d{2,3}EF(?:RX|AX|ZX|PX)\b"), 1e-14, 180, _WD_RED),
    # WDxxxxFFBX / FFSX (2-8 TB), WDxxxKFBX / KFGX (10 TB and up)
    _Family(
        "WD Red Pro",
        re.compile(r"^(?:WDC )?WD(?:\d{4}FF[BS]X|\d{3}KF[BG]X)\b"),
        None,
        300,
        _WD_RED_PRO,
    ),
    # WDxxxxFRYZ (1-8 TB), WDxxxKRYZ (10 TB and up)
    _Family("WD Gold", re.compile(r"^(?:WDC )?WD(?:\d{4}FRYZ|\d{3}KRYZ)\b"), None, 550, _WD_GOLD),
    _Family("WD Ultrastar DC", re.compile(r"^(?:WDC )?WUH72\d{4}"), 1e-15, 550, _ULTRASTAR),
    _Family("Seagate IronWolf", re.compile(r"^ST\d+VN\d{3}"), 1e-14, 180, _IRONWOLF),
    _Family("Seagate IronWolf Pro", re.compile(r"^ST\d+N[ET]\d{3}"), 1e-15, 300, _IRONWOLF_PRO),
    _Family("Seagate Exos X", re.compile(r"^ST\d+NM\d{3}"), 1e-15, 550, _EXOS),
    _Family("Seagate Exos 10E", re.compile(r"^ST\d+MM\d{4}"), 1e-16, None, _EXOS_10K),
    _Family("Seagate BarraCuda", re.compile(r"^ST\d+DM\d{3}"), 1e-14, 55, _BARRACUDA),
)


def drive_rating(model: str | None) -> DriveRating | None:
    """The datasheet ratings of ``model`` (a SMART or kernel model string), or None when its
    family is not listed."""
    if not model:
        return None
    norm = normalise(model)
    for fam in FAMILIES:
        if fam.pattern.match(norm):
            return DriveRating(fam.name, fam.ure, fam.workload, fam.source)
    return None
