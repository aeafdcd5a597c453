"""``mdadm --examine-bitmap`` (``mdadm -X <member>``, mdadm ``bitmap.c`` ``ExamineBitmap()``):
the write-intent bitmap on a member, of which two lines matter to a re-add forecast::

           Chunksize : 64 MB                          (human_chunksize(): B, KB, MB, GB, TB)
              Bitmap : 16 bits (chunks), 3 dirty (18.8%)

md sysfs has no dirty count (``md/bitmap/*`` holds location, chunksize, space, backlog, ...), so
this is where "dirty bits × bitmap chunk" — what a re-add with a bitmap resyncs — comes from.
A clustered bitmap (one "Bitmap" line per node) is not summed: its first node is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.parsers.errors import ParseError
from app.parsers.safe import ascii_int, only_parse_errors

SOURCE = "mdadm -X"
MAX_LINES = 400
_UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}
_CHUNK = re.compile(r"\s*Chunksize : (\d{1,12}) (B|KB|MB|GB|TB)\s*", re.ASCII)
_BITS = re.compile(r"\s*Bitmap : (\d{1,20}) bits \(chunks\), (\d{1,20}) dirty .*", re.ASCII)


@dataclass(frozen=True, slots=True)
class BitmapExamine:
    chunk_bytes: int
    bits: int
    dirty: int

    @property
    def dirty_bytes(self) -> int:
        """What a re-add of a member that missed these writes resyncs: dirty bits × chunk."""
        return self.dirty * self.chunk_bytes


@only_parse_errors(SOURCE)
def parse_examine_bitmap(text: str) -> BitmapExamine:
    chunk = bits = dirty = None
    for line in text.splitlines()[:MAX_LINES]:
        if chunk is None and (m := _CHUNK.fullmatch(line)):
            n = ascii_int(m.group(1))
            chunk = None if n is None else n * _UNITS[m.group(2)]
        elif bits is None and (m := _BITS.fullmatch(line)):
            bits, dirty = ascii_int(m.group(1)), ascii_int(m.group(2))
    if not chunk or bits is None or dirty is None:
        raise ParseError(SOURCE, "no 'Chunksize' and 'Bitmap : N bits (chunks), M dirty' lines")
    if dirty > bits:
        raise ParseError(SOURCE, f"{dirty} dirty bits of {bits}: not a bitmap")
    return BitmapExamine(chunk, bits, dirty)
