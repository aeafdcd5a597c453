"""``blkid -p -o export DEVICE...`` (util-linux misc-utils/blkid.c, ``print_udev_format``'s
sibling ``output_tags`` in export mode): one ``NAME=value`` per line, a device's block starting
with ``DEVNAME=``, blocks separated by an empty line::

    DEVNAME=/dev/vdb
    UUID=0b6c...
    BLOCK_SIZE=4096
    TYPE=ext4
    USAGE=filesystem

Values are written raw (``-o export`` escapes nothing unsafe itself, so a label is bounded and
checked here). A line that is no ``NAME=value`` costs that line, a device name that is not a
kernel name costs that block; more than ``MAX_DEVICES`` blocks is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.parsers.errors import ParseError

SOURCE = "blkid"
MAX_DEVICES = 4096
MAX_VALUE = 256
_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,31}")
_DEVNAME = re.compile(r"/dev/([A-Za-z0-9][A-Za-z0-9_.:+-]{0,63})")


@dataclass(frozen=True, slots=True)
class BlkidEntry:
    device: str  # kernel name (vdb, sda1)
    type: str | None = None
    uuid: str | None = None
    label: str | None = None
    usage: str | None = None  # filesystem, raid, crypto, other


def parse_blkid_export(text: str) -> tuple[BlkidEntry, ...]:
    out: list[BlkidEntry] = []
    block: dict[str, str] = {}

    def close() -> None:
        m = _DEVNAME.fullmatch(block.get("DEVNAME", ""))
        if m is not None:
            if len(out) >= MAX_DEVICES:
                raise ParseError(SOURCE, f"more than {MAX_DEVICES} devices")
            out.append(
                BlkidEntry(
                    m.group(1),
                    block.get("TYPE"),
                    block.get("UUID"),
                    block.get("LABEL"),
                    block.get("USAGE"),
                )
            )
        block.clear()

    for line in text.splitlines():
        if not line.strip():
            close()
            continue
        name, eq, value = line.partition("=")
        if not eq or not _NAME.fullmatch(name) or len(value) > MAX_VALUE:
            continue
        if name == "DEVNAME" and block:
            close()
        if not value.isprintable():
            continue
        block[name] = value
    close()
    return tuple(out)
