"""The kernel's own answer to "is this device in use": mounts, swaps, holders, partitions.

``/proc/self/mountinfo`` gives major:minor; ``/sys/dev/block/MAJ:MIN`` (a symlink ending in the
kernel name) turns it into a name — lsblk's MAJ:MIN only as a fallback. Mounts with major 0
(btrfs, overlay, virtiofs, tmpfs) count for the device their source names when that is a block
device. ``/proc/swaps`` names swap partitions by path and swap files by their path inside a
mount (the file's mount decides the device). ``/sys/block/*/holders`` and
``/sys/block/*/<partition>/holders`` list md, dm and bcache devices built on each device.

A read that fails — or that a replayed capture never recorded — goes into ``unread`` with the
reason, so pre-flight refuses instead of passing a device it could not check.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping

from app.model.usage import HOLDERS, MOUNTS, SWAPS, KernelUsage
from app.parsers.errors import ParseError
from app.parsers.mountinfo import MountEntry, parse_mountinfo
from app.parsers.swaps import parse_swaps
from backends.linux.md import SYS_BLOCK
from backends.linux.source import Source

MOUNTINFO = "/proc/self/mountinfo"
SWAPS_FILE = "/proc/swaps"


def _recorded(source: Source) -> Callable[[str], bool]:
    """A replay knows which paths it never recorded; a live source recorded everything."""
    fn = getattr(source, "recorded", None)
    return fn if callable(fn) else (lambda _path: True)


def _why_unread(source: Source, path: str) -> str:
    status = getattr(source, "last_read_status", None)
    if status == "EACCES":
        return f"{path}: permission denied"
    if isinstance(status, str) and status.startswith("error: "):
        return f"{path}: {status[7:]}"
    if status == "not recorded":
        return f"{path} not recorded in this capture"
    return f"{path} unreadable"


def _read(source: Source, path: str, what: str, unread: list[tuple[str, str]]) -> str | None:
    if not _recorded(source)(path):
        unread.append((what, f"{path} not recorded in this capture"))
        return None
    text = source.read_text(path)
    if text is None:
        unread.append((what, _why_unread(source, path)))
    return text


def _dev_name(source: Source, path: str) -> str | None:
    """``/dev/sda1`` → sda1, ``/dev/mapper/vg-lv`` → dm-0 (through the symlink)."""
    if not path.startswith("/dev/"):
        return None
    target = source.readlink(path)
    if target:
        return posixpath.basename(target)
    return posixpath.basename(path)


def _resolve(source: Source, e: MountEntry, by_majmin: Mapping[str, str]) -> str | None:
    if e.major != 0:
        link = source.readlink(f"/sys/dev/block/{e.major}:{e.minor}")
        if link:
            return posixpath.basename(link)
        if e.device in by_majmin:
            return by_majmin[e.device]
        return _dev_name(source, e.source) or f"{e.major}:{e.minor}"
    # major 0: an anonymous device (btrfs, overlay, 9p, tmpfs); it counts for its source only when
    # that is a block device sysfs knows ("/dev/root" of a 9p root is not)
    name = _dev_name(source, e.source)
    if name is not None and source.read_text(f"/sys/class/block/{name}/dev") is not None:
        return name
    return None


def _mount_of(path: str, entries: list[tuple[str, str]]) -> str | None:
    """The device of the deepest mountpoint containing ``path`` (the last one mounted wins)."""
    best: tuple[int, str] | None = None
    for name, mp in entries:
        prefix = mp.rstrip("/") + "/"
        if (path == mp or path.startswith(prefix)) and (best is None or len(mp) >= best[0]):
            best = (len(mp), name)
    return best[1] if best else None


def read_usage(source: Source, by_majmin: Mapping[str, str] | None = None) -> KernelUsage:
    """``by_majmin``: lsblk's "MAJ:MIN" → name, used only when sysfs cannot resolve one."""
    recorded = _recorded(source)
    unread: list[tuple[str, str]] = []
    by_majmin = by_majmin or {}

    # ---- mounts ------------------------------------------------------------------------
    mounts: list[tuple[str, str]] = []
    all_mounts: list[tuple[str, str]] = []  # including major-0 ones without a block source
    fstypes: list[tuple[str, str]] = []
    text = _read(source, MOUNTINFO, MOUNTS, unread)
    if text is not None:
        try:
            entries = parse_mountinfo(text)
        except ParseError as err:
            unread.append((MOUNTS, f"cannot read {MOUNTINFO}: {err}"))
            entries = ()
        for ent in entries:
            name = _resolve(source, ent, by_majmin)
            all_mounts.append((name or f"{ent.fstype}:{ent.source}", ent.mountpoint))
            if name is not None:
                mounts.append((name, ent.mountpoint))
                fstypes.append((name, ent.fstype))

    # ---- swaps -------------------------------------------------------------------------
    swaps: list[tuple[str, str]] = []
    text = _read(source, SWAPS_FILE, SWAPS, unread)
    if text is not None:
        try:
            for s in parse_swaps(text):
                if s.type == "partition":
                    dev = _dev_name(source, s.filename)
                else:
                    dev = _mount_of(s.filename, all_mounts)
                    if MOUNTS in dict(unread):
                        dev = None
                if dev is None:
                    unread.append((SWAPS, f"cannot tell which device holds the swap {s.filename}"))
                else:
                    swaps.append((dev, s.filename))
        except ParseError as e:
            unread.append((SWAPS, f"cannot read {SWAPS_FILE}: {e}"))

    # ---- holders and partitions --------------------------------------------------------
    holders: list[tuple[str, str]] = []
    partitions: list[tuple[str, str]] = []
    if not recorded(SYS_BLOCK):
        unread.append((HOLDERS, f"{SYS_BLOCK} not recorded in this capture"))
    else:
        blocks = source.listdir(SYS_BLOCK)
        if not blocks:
            unread.append((HOLDERS, f"{SYS_BLOCK} unreadable or empty"))
        for disk in blocks:
            base = f"{SYS_BLOCK}/{disk}"
            devs = [(disk, base)]
            if not recorded(base):
                unread.append((HOLDERS, f"{base} not recorded in this capture"))
            entries_ = source.listdir(base) if recorded(base) else ()
            for p in entries_:
                if p.startswith(disk) and p != disk:
                    partitions.append((p, disk))
                    devs.append((p, f"{base}/{p}"))
            for name, path in devs:
                hpath = f"{path}/holders"
                if not recorded(hpath):
                    unread.append((HOLDERS, f"{hpath} not recorded in this capture"))
                    continue
                holders.extend((name, h) for h in source.listdir(hpath))
    return KernelUsage(
        mounts=tuple(dict.fromkeys(mounts)),
        swaps=tuple(dict.fromkeys(swaps)),
        holders=tuple(dict.fromkeys(holders)),
        partitions=tuple(partitions),
        unread=tuple(dict.fromkeys(unread)),
        fstypes=tuple(dict.fromkeys(fstypes)),
    )
