"""Rated write endurance (TBW) of SSD models, matched on the SMART model string.

A maker rates a consumer SSD for a number of terabytes written (TBW, 10^12 bytes) over its
warranty; SMART's own write counter (``app.model.smart_units.bytes_written``) against that figure is
the endurance used when the drive reports no percentage of its own that could be trusted.
Only models whose figure was checked against the maker's datasheet or warranty table (or a
review quoting the maker's specification) are listed, each row with its source; a model or a
capacity that is not listed has no rating — nothing is guessed from a neighbour.

Article 000 (/work/shared/seeds/000_d5848e1cef7805d7.txt) ran its RAID-5 and RAID-10 arrays on
four "Samsung EVO 850" 500 GB SSDs and read their wear after a resync; those drives are rated
150 TBW.

    rated_tbw("Samsung SSD 850 EVO 500GB") -> Rating(family="Samsung 850 EVO", capacity_gb=500,
                                                      tbw=150, source="...")
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.model.sizes import TB  # a maker's terabyte (TBW, workload ratings)

_SAMSUNG_WARRANTY = (
    "Samsung limited warranty table (semiconductor.samsung.com/us/consumer-storage/support/"
    "faqs/05/)"
)
_970_PRESS = (
    "Samsung 970 EVO Plus announcement, TBW per capacity for 970 EVO Plus and 970 EVO "
    "(cdrinfo.com 'Samsung Sets New Performance Levels for Consumer NVMe SSDs with 970 EVO Plus')"
)
_860_EVO = (
    "Samsung 860 EVO specification: 150 TBW per 250 GB, 150-2400 TB over 250 GB-4 TB "
    "(geektopia.es 2018-01-23 via AnandTech; hardwareluxx.de endurance table 250 GB 150 TB, "
    "500 GB 300 TB; MZ-76E500 500 GB 300 TBW at syspartsdirect.com)"
)


@dataclass(frozen=True, slots=True)
class Rating:
    family: str  # "Samsung 850 EVO"
    capacity_gb: int  # the capacity in the model name, decimal GB (1 TB = 1000)
    tbw: int  # rated terabytes written (10^12 bytes)
    source: str  # where the figure comes from

    @property
    def bytes(self) -> int:
        return self.tbw * TB

    @property
    def name(self) -> str:
        """The model as its maker names it: "Samsung 850 EVO 500GB", "… 1TB" (a product's
        name, not a size raidman measured: written as the model strings write it)."""
        gb = self.capacity_gb
        return (
            f"{self.family} {gb // 1000}TB"
            if gb >= 1000 and gb % 1000 == 0
            else (f"{self.family} {gb}GB")
        )


@dataclass(frozen=True, slots=True)
class _Family:
    name: str
    pattern: re.Pattern[str]  # on the normalised model; group "cap" is the capacity text
    tbw_by_gb: dict[int, tuple[int, str]]  # capacity (GB) -> (TBW, source)


def _samsung(series: str) -> re.Pattern[str]:
    return re.compile(rf"^SAMSUNG SSD {series} (?P<cap>\d+(?:\.\d+)?\s?[GT]B)$")


FAMILIES: tuple[_Family, ...] = (
    _Family(
        "Samsung 850 EVO",
        _samsung("850 EVO"),
        {
            120: (75, _SAMSUNG_WARRANTY),
            250: (75, _SAMSUNG_WARRANTY),
            500: (150, _SAMSUNG_WARRANTY),
            1000: (150, _SAMSUNG_WARRANTY),
            2000: (300, _SAMSUNG_WARRANTY),
            4000: (300, _SAMSUNG_WARRANTY),
        },
    ),
    _Family(
        "Samsung 850 PRO",
        _samsung("850 PRO"),
        {
            128: (150, _SAMSUNG_WARRANTY),
            256: (150, _SAMSUNG_WARRANTY),
            512: (150, _SAMSUNG_WARRANTY),
            1000: (150, _SAMSUNG_WARRANTY),
            2000: (300, _SAMSUNG_WARRANTY),
        },
    ),
    _Family(
        "Samsung 860 EVO",
        _samsung("860 EVO"),
        {
            250: (150, _860_EVO),
            500: (300, _860_EVO),
            1000: (600, _860_EVO),
            2000: (1200, _860_EVO),
            4000: (2400, _860_EVO),
        },
    ),
    _Family(
        "Samsung 870 EVO",
        _samsung("870 EVO"),
        {
            250: (150, "pgrid.app/au/ssds/samsung-870-evo-250gb (maker's rating: 150 TBW)"),
            1000: (600, "pgrid.app/au/ssds/samsung-870-evo-1000gb (600 TBW)"),
            2000: (1200, "pgrid.app/au/ssds/samsung-870-evo-2000gb (1200 TBW)"),
            4000: (2400, "pgrid.app/au/ssds/samsung-870-evo-4000gb (2400 TBW)"),
        },
    ),
    _Family(
        "Samsung 970 EVO",
        _samsung("970 EVO"),
        {250: (150, _970_PRESS), 500: (300, _970_PRESS), 1000: (600, _970_PRESS)}
        | {2000: (1200, _970_PRESS)},
    ),
    _Family(
        "Samsung 970 EVO Plus",
        _samsung("970 EVO PLUS"),
        {250: (150, _970_PRESS), 500: (300, _970_PRESS), 1000: (600, _970_PRESS)}
        | {2000: (1200, _970_PRESS)},
    ),
    _Family(
        "Crucial MX500",
        re.compile(r"^(?:CRUCIAL_)?CT(?P<cap>\d+)MX500SSD\d$"),
        {
            250: (100, "pgrid.app/au/ssds/crucial-mx500-250gb (100 TBW)"),
            1000: (
                360,
                "Crucial specification quoted by techpowerup.com/review/crucial-mx500-1-tb "
                "and ocinside.de (CT1000MX500SSD1/SSD4: 360 TB total bytes written)",
            ),
        },
    ),
    _Family(
        "Kingston A400",
        re.compile(r"^KINGSTON SA400(?:S37|M8)(?P<cap>\d+)G$"),
        {
            240: (80, "e-catalog.com comparison of SA400M8/240G (TBW 80 TB, 0.3 DWPD)"),
        },
    ),
)


def normalise(model: str) -> str:
    """ "Samsung  SSD 850 EVO 500GB " -> "SAMSUNG SSD 850 EVO 500GB"; "CT1000MX500SSD1" as is."""
    return " ".join(model.split()).upper()


def _capacity_gb(text: str) -> int | None:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s?([GT]B)?", text)
    if m is None:
        return None
    n = float(m.group(1))
    gb = n * 1000 if m.group(2) == "TB" else n
    return round(gb)


def rated_tbw(model: str | None) -> Rating | None:
    """The rated endurance of ``model`` (a SMART model string), or None when not listed."""
    if not model:
        return None
    norm = normalise(model)
    for fam in FAMILIES:
        m = fam.pattern.match(norm)
        if m is None:
            continue
        cap = _capacity_gb(m.group("cap"))
        if cap is None or cap not in fam.tbw_by_gb:
            return None
        tbw, source = fam.tbw_by_gb[cap]
        return Rating(fam.name, cap, tbw, source)
    return None
