"""``dmsetup table NAME`` for a dm-crypt mapping: where the data starts on the backing device.

Format (kernel Documentation/admin-guide/device-mapper/dm-crypt.rst):
``<start> <length> crypt <cipher> <key> <iv_offset> <device> <offset> [<#opt> <opt>...]``,
``offset`` in 512-byte sectors on ``device``. The key field is printed masked or as a keyring
reference; it is never kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.parsers.errors import ParseError
from app.parsers.safe import ascii_int

SOURCE = "dmsetup table"


@dataclass(frozen=True, slots=True)
class CryptTable:
    device: str  # "8:2" or a path, as dm prints it
    offset_sectors: int
    options: tuple[str, ...]

    @property
    def allow_discards(self) -> bool:
        return "allow_discards" in self.options


def parse_crypt_table(text: str) -> CryptTable:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) != 1:
        raise ParseError(SOURCE, f"expected one crypt target line, got {len(lines)}")
    f = lines[0].split()
    if len(f) < 8 or f[2] != "crypt":
        raise ParseError(SOURCE, "not a crypt target line")
    offset = ascii_int(f[7])
    if offset is None:
        raise ParseError(SOURCE, f"offset is not a sector number: {f[7][:40]!r}")
    opts: tuple[str, ...] = ()
    if len(f) > 8:
        count = ascii_int(f[8])
        if count is None:
            raise ParseError(SOURCE, f"optional parameter count is not a number: {f[8][:40]!r}")
        opts = tuple(f[9 : 9 + count])
    return CryptTable(f[6], offset, opts)
