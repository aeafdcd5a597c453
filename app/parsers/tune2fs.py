"""``tune2fs -l`` and ``dumpe2fs -h``: the ext2/3/4 superblock as ``Key:  value`` lines.

Both tools print the same superblock listing (lib/e2p/ls.c ``list_super2``)::

    tune2fs 1.47.0 (5-Feb-2023)
    Filesystem volume name:   <none>
    Filesystem features:      has_journal ext_attr ... metadata_csum
    Block size:               4096
    RAID stride:              8
    RAID stripe width:        16

``dumpe2fs -h`` adds a journal section (``Journal features:`` ...). The ``RAID stride`` and
``RAID stripe width`` lines are absent when the values are 0 (not set), so ``None`` here
means "not set", which the rules treat like 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.parsers.errors import ParseError
from app.parsers.safe import only_parse_errors

SOURCE = "tune2fs -l"


@dataclass(frozen=True, slots=True)
class Ext4Superblock:
    block_size: int
    stride: int | None = None  # blocks; None = not set
    stripe_width: int | None = None  # blocks; None = not set
    features: tuple[str, ...] = ()
    uuid: str | None = None
    label: str | None = None
    block_count: int | None = None
    state: str | None = None
    default_mount_options: tuple[str, ...] = ()
    fields: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    def has_feature(self, name: str) -> bool:
        return name in self.features


def _int(value: str, key: str, line: int) -> int:
    try:
        return int(value.split()[0])
    except (ValueError, IndexError):
        raise ParseError(SOURCE, f"{key!r} is not a number: {value!r}", line) from None


def _none_marker(value: str) -> str | None:
    return None if value in ("", "<none>", "<not available>") else value


@only_parse_errors(SOURCE)
def parse_tune2fs(text: str) -> Ext4Superblock:
    """Parse ``tune2fs -l`` or ``dumpe2fs -h`` output. Raises ParseError without a block size."""
    fields: dict[str, str] = {}
    lines: dict[str, int] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        if ":" not in raw:
            continue
        key, _, value = raw.partition(":")
        key = key.strip()
        if not key or key in fields:  # the journal section repeats a few keys; keep the first
            continue
        fields[key] = value.strip()
        lines[key] = n
    if "Block size" not in fields:
        raise ParseError(SOURCE, "no 'Block size' line: not a tune2fs -l / dumpe2fs -h listing")
    magic = fields.get("Filesystem magic number")
    if magic is not None and magic.lower() != "0xef53":
        raise ParseError(
            SOURCE, f"not an ext2/3/4 superblock (magic {magic})", lines["Filesystem magic number"]
        )

    def opt_int(key: str) -> int | None:
        if key not in fields:
            return None
        return _int(fields[key], key, lines[key])

    block_size = _int(fields["Block size"], "Block size", lines["Block size"])
    if block_size <= 0 or block_size & (block_size - 1):
        raise ParseError(SOURCE, f"implausible block size {block_size}", lines["Block size"])
    stride = opt_int("RAID stride")
    width = opt_int("RAID stripe width")
    mount_opts = fields.get("Default mount options", "")
    return Ext4Superblock(
        block_size=block_size,
        stride=stride or None,
        stripe_width=width or None,
        features=tuple(fields.get("Filesystem features", "").split()),
        uuid=_none_marker(fields.get("Filesystem UUID", "")),
        label=_none_marker(fields.get("Filesystem volume name", "")),
        block_count=opt_int("Block count"),
        state=fields.get("Filesystem state"),
        default_mount_options=() if mount_opts in ("", "(none)") else tuple(mount_opts.split()),
        fields=fields,
    )
