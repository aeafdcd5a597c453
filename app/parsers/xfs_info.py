"""``xfs_info`` (and ``xfs_db -r -c info``, ``mkfs.xfs -N``): XFS geometry.

Format (xfsprogs libfrog/fsgeom.c ``xfs_report_geom``)::

    meta-data=/dev/md0               isize=512    agcount=8, agsize=65528 blks
             =                       sectsz=512   attr=2, projid32bit=1
    data     =                       bsize=4096   blocks=524224, imaxpct=25
             =                       sunit=8      swidth=16 blks
    naming   =version 2              bsize=4096   ascii-ci=0, ftype=1
    log      =internal log           bsize=4096   blocks=16384, version=2
             =                       sectsz=512   sunit=8 blks, lazy-count=1
    realtime =none                   extsz=4096   blocks=0, rtextents=0

A line ``name =`` starts a section, ``  =`` continues it. The data section's ``sunit`` and
``swidth`` are in filesystem blocks (``bsize``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.parsers.errors import ParseError
from app.parsers.safe import only_parse_errors

SOURCE = "xfs_info"

_SECTION = re.compile(r"^(\S+)\s*=(.*)$")
_CONT = re.compile(r"^\s+=(.*)$")
# a key starts a word (not inside one): each run of word characters is scanned once. Without the
# look-behind the search tried every position inside a run, each scanning to its end: a
# 40,000-letter line took ~54 s (issue 37).
_PAIR = re.compile(r"(?<![\w-])([A-Za-z][\w-]*)=(\S+?)(?=[,\s]|$)")


@dataclass(frozen=True, slots=True)
class XfsGeometry:
    bsize: int
    sunit_blocks: int
    swidth_blocks: int
    device: str | None = None
    sectsz: int | None = None
    agcount: int | None = None
    agsize_blocks: int | None = None
    data_blocks: int | None = None
    log_device: str | None = None
    log_sunit_blocks: int | None = None
    crc: bool | None = None
    reflink: bool | None = None

    @property
    def sunit_bytes(self) -> int:
        return self.sunit_blocks * self.bsize

    @property
    def swidth_bytes(self) -> int:
        return self.swidth_blocks * self.bsize

    @property
    def size_bytes(self) -> int | None:
        return None if self.data_blocks is None else self.data_blocks * self.bsize


def _sections(text: str) -> dict[str, tuple[str, dict[str, str], int]]:
    """section name -> (its leading value, key=value pairs, first line number)."""
    out: dict[str, tuple[str, dict[str, str], int]] = {}
    current: str | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        m = _CONT.match(raw)
        if m and current is not None:
            rest = m.group(1)
        else:
            m = _SECTION.match(raw)
            if not m:
                continue
            current = m.group(1)
            rest = m.group(2)
            # the leading value: text before the first key=value ("/dev/md0", "internal log")
            first = _PAIR.search(rest)
            lead = (rest[: first.start()] if first else rest).strip()
            out.setdefault(current, (lead, {}, n))
        pairs = out[current][1]
        for k, v in _PAIR.findall(rest):
            pairs.setdefault(k, v)
    return out


@only_parse_errors(SOURCE)
def parse_xfs_info(text: str) -> XfsGeometry:
    """Parse xfs_info / xfs_db info output. Raises ParseError when the data section is missing."""
    sections = _sections(text)
    if "data" not in sections:
        raise ParseError(SOURCE, "no 'data =' section: not xfs_info output")
    _, data, line = sections["data"]

    def num(pairs: dict[str, str], key: str, required: bool = False) -> int | None:
        if key not in pairs:
            if required:
                raise ParseError(SOURCE, f"data section has no {key}=", line)
            return None
        try:
            return int(pairs[key])
        except ValueError:
            raise ParseError(SOURCE, f"{key}={pairs[key]!r} is not a number", line) from None

    bsize = num(data, "bsize", required=True)
    sunit = num(data, "sunit", required=True)
    swidth = num(data, "swidth", required=True)
    assert bsize is not None and sunit is not None and swidth is not None
    if bsize <= 0 or bsize & (bsize - 1):
        raise ParseError(SOURCE, f"implausible block size {bsize}", line)
    meta_lead, meta, _ = sections.get("meta-data", ("", {}, 0))
    log_lead, log, _ = sections.get("log", ("", {}, 0))

    def flag(pairs: dict[str, str], key: str) -> bool | None:
        v = num(pairs, key)
        return None if v is None else v != 0

    return XfsGeometry(
        bsize=bsize,
        sunit_blocks=sunit,
        swidth_blocks=swidth,
        device=meta_lead or None,
        sectsz=num(meta, "sectsz"),
        agcount=num(meta, "agcount"),
        agsize_blocks=num(meta, "agsize"),
        data_blocks=num(data, "blocks"),
        log_device=log_lead or None,
        log_sunit_blocks=num(log, "sunit"),
        crc=flag(meta, "crc"),
        reflink=flag(meta, "reflink"),
    )
