"""Which tool reads a filesystem's geometry, and its parser: ``tune2fs -l`` for ext2/3/4,
``xfs_info`` for XFS (on the mountpoint when mounted: xfs_info of an unmounted device needs
xfsprogs >= 5.x and root).

Pure: the caller runs the argv (the Linux probe once per probe; the audit reuses that reading).
"""

from __future__ import annotations

from dataclasses import replace

from app.model.devices import Filesystem
from app.parsers.errors import ParseError
from app.parsers.tune2fs import Ext4Superblock, parse_tune2fs
from app.parsers.xfs_info import XfsGeometry, parse_xfs_info

EXT_TYPES = ("ext2", "ext3", "ext4")

FsInfo = Ext4Superblock | XfsGeometry


def fs_info_argv(fs: Filesystem) -> tuple[str, ...] | None:
    """The command that prints ``fs``'s geometry, or None for filesystems without one here."""
    if fs.fstype in EXT_TYPES:
        return ("tune2fs", "-l", f"/dev/{fs.device}")
    if fs.fstype == "xfs":
        return ("xfs_info", fs.mountpoints[0] if fs.mountpoints else f"/dev/{fs.device}")
    return None


def fs_info_what(fs: Filesystem) -> str:
    """The audit's name for this reading ("tune2fs:md0", "xfs_info:dm-1")."""
    return f"{'xfs_info' if fs.fstype == 'xfs' else 'tune2fs'}:{fs.device}"


def parse_fs_info(fs: Filesystem, text: str) -> FsInfo:
    """Raises ParseError on output that is not this filesystem's geometry."""
    if fs.fstype in EXT_TYPES:
        return parse_tune2fs(text)
    if fs.fstype == "xfs":
        return parse_xfs_info(text)
    raise ParseError("fsinfo", f"no geometry reader for {fs.fstype}")


def with_geometry(fs: Filesystem, info: FsInfo) -> Filesystem:
    """``fs`` with block size and RAID geometry from its superblock reading."""
    if isinstance(info, Ext4Superblock):
        return replace(
            fs, block_size=info.block_size, stride=info.stride, stripe_width=info.stripe_width
        )
    return replace(
        fs,
        block_size=info.bsize,
        sunit_bytes=info.sunit_bytes,
        swidth_bytes=info.swidth_bytes,
    )
