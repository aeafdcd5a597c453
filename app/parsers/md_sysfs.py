"""Pure parsers for the values of md sysfs attributes (``/sys/block/mdX/md/*``).

Documentation/admin-guide/md.rst describes the files; the numbers for layouts come from
the kernel's ``drivers/md/raid5.h`` and ``raid10.c`` (the same names mdadm prints).
Every function takes the text of one attribute (trailing newline allowed) and raises
``ParseError`` when the text is not what the kernel writes there.
"""

from __future__ import annotations

from typing import NamedTuple

from app.model import levels, md_names
from app.parsers.errors import ParseError
from app.parsers.safe import ascii_int, only_parse_errors

SOURCE = "md sysfs"

# the state words of md/dev-*/state (md.rst), which raidman keeps as they are
DEV_STATE_WORDS = frozenset(
    {
        "faulty",
        "in_sync",
        "writemostly",
        "write_mostly",
        "blocked",
        "spare",
        "write_error",
        "want_replacement",
        "replacement",
        "external_bbl",
        "journal",
        "failfast",
        "check_sb",
    }
)


class SyncCompleted(NamedTuple):
    """``md/sync_completed``: ``done / total`` sectors, or a word (none, delayed, pending)."""

    done: int | None
    total: int | None
    word: str | None  # "none", "delayed", "pending" when no numbers


def _clean(text: str) -> str:
    if not isinstance(text, str):
        raise ParseError(SOURCE, f"expected text, got {type(text).__name__}")
    return text.strip()


@only_parse_errors(SOURCE)
def parse_int(text: str, *, none_words: tuple[str, ...] = ("none",)) -> int | None:
    """A non-negative integer attribute (every md count, size and position is); the kernel's
    "none" (or other ``none_words``) is ``None``. A negative or beyond-64-bit value is a
    ParseError (the probe turns it into a note)."""
    t = _clean(text)
    if t in none_words:
        return None
    v = ascii_int(t, signed=True)
    if v is None:
        raise ParseError(SOURCE, f"not an integer: {t[:40]!r}")
    if v < 0:
        raise ParseError(SOURCE, f"negative value {v}: not a plausible md attribute")
    return v


def _new_of_reshape(t: str, what: str) -> str:
    """The first number of ``"new (old)"``: md.c chunk_size_show and layout_show print both
    while a reshape changes them (seen in the VM: chunk_size "131072 (65536)" would be a
    chunk change, layout "2 (18)" during RAID-5 -> 6, "18 (2)" during 6 -> 5)."""
    parts = t.split()
    if len(parts) == 2 and parts[1].startswith("(") and parts[1].endswith(")"):
        if ascii_int(parts[1][1:-1], signed=True) is None:
            raise ParseError(SOURCE, f"not a {what} value: {t[:40]!r}")
        return parts[0]
    return t


@only_parse_errors(SOURCE)
def parse_chunk_size(text: str) -> int | None:
    """``md/chunk_size`` in bytes: ``"524288"``, or ``"131072 (65536)"`` (new (old)) while a
    reshape changes it: the new one, as raid_disks and level read."""
    return parse_int(_new_of_reshape(_clean(text), "chunk_size"))


@only_parse_errors(SOURCE)
def parse_raid_disks(text: str) -> int:
    """``md/raid_disks``: ``"4"``, or ``"4 (3)"`` while a reshape changes the count (new (old))."""
    t = _clean(text)
    head = t.split(None, 1)[0] if t else ""
    v = ascii_int(head)
    if v is None:
        raise ParseError(SOURCE, f"not a raid_disks value: {t[:40]!r}")
    if v > levels.MAX_RAID_DISKS:
        raise ParseError(SOURCE, f"raid_disks={v} is beyond md's {levels.MAX_RAID_DISKS} slots")
    return v


@only_parse_errors(SOURCE)
def parse_previous_raid_disks(text: str) -> int | None:
    """The old count of ``md/raid_disks`` ``"4 (3)"`` while a reshape changes it, else None.

    drivers/md/md.c ``raid_disks_show``: ``"%d (%d)"`` of raid_disks and raid_disks - delta_disks
    while ``reshape_position`` is set and ``delta_disks`` is not 0 (seen in the VM: ``4 (3)``
    during a RAID-5 3 -> 4 grow)."""
    t = _clean(text)
    parts = t.split()
    if len(parts) != 2:
        return None
    old = parts[1]
    if not (old.startswith("(") and old.endswith(")")):
        raise ParseError(SOURCE, f"not a raid_disks value: {t[:40]!r}")
    v = ascii_int(old[1:-1])
    if v is None or v > levels.MAX_RAID_DISKS:
        raise ParseError(SOURCE, f"not a raid_disks value: {t[:40]!r}")
    return v


@only_parse_errors(SOURCE)
def parse_speed_limit(text: str) -> int:
    """``sync_speed_min``/``sync_speed_max``: ``"1000 (system)"`` or ``"200000 (local)"`` -> KiB/s."""
    t = _clean(text)
    head = t.split(None, 1)[0] if t else ""
    v = ascii_int(head)
    if v is None:
        raise ParseError(SOURCE, f"not a speed limit: {t[:40]!r}")
    return v


@only_parse_errors(SOURCE)
def parse_local_speed_limit(text: str) -> int | None:
    """The array's own limit: ``"4000 (local)"`` -> 4000; ``"1000 (system)"`` -> None (md.c
    ``sync_min_show``/``sync_max_show`` print "(local)" where ``mddev->sync_speed_min/max`` is
    set, and the system's value with "(system)" otherwise)."""
    v = parse_speed_limit(text)
    words = _clean(text).split()
    return v if words[1:] == ["(local)"] else None


@only_parse_errors(SOURCE)
def parse_sync_completed(text: str) -> SyncCompleted:
    """``"123 / 456"`` -> done and total sectors; ``none``/``delayed``/``pending`` -> the word."""
    t = _clean(text)
    if t in ("none", "delayed", "pending"):
        return SyncCompleted(None, None, t)
    parts = t.split("/")
    if len(parts) != 2:
        raise ParseError(SOURCE, f"not a sync_completed value: {t!r}")
    done, total = ascii_int(parts[0], signed=True), ascii_int(parts[1], signed=True)
    if done is None or total is None:
        raise ParseError(SOURCE, f"not a sync_completed value: {t[:40]!r}")
    if done < 0 or total < 0:
        raise ParseError(SOURCE, f"negative sync_completed: {t!r}")
    return SyncCompleted(done, total, None)


@only_parse_errors(SOURCE)
def parse_dev_state(text: str) -> tuple[str, ...]:
    """``md/dev-*/state``: comma-separated words; ``writemostly`` becomes ``write_mostly``.

    An empty file means the device has no state flags yet (just added): ``()``.
    """
    t = _clean(text)
    if not t:
        return ()
    out: list[str] = []
    for word in t.split(","):
        w = word.strip()
        if not w or any(c.isspace() for c in w):
            raise ParseError(SOURCE, f"not a member state: {t!r}")
        if w == "writemostly":
            w = "write_mostly"
        out.append(w)
    return tuple(out)


@only_parse_errors(SOURCE)
def parse_slot(text: str) -> int | None:
    """``md/dev-*/slot``: the role number, or ``None`` for "none" (spare, faulty, journal)."""
    v = parse_int(text)
    if v is not None and v < 0:
        raise ParseError(SOURCE, f"negative slot: {text.strip()!r}")
    if v is not None and v >= levels.MAX_RAID_DISKS:
        raise ParseError(SOURCE, f"slot={v} is beyond md's {levels.MAX_RAID_DISKS} slots")
    return v


@only_parse_errors(SOURCE)
def parse_bitmap_location(text: str) -> str | None:
    """``md/bitmap/location``: ``"none"`` -> None; ``"+8"``/``"-16"`` (internal, offset in
    sectors from the superblock) and ``"file"`` are returned as the kernel wrote them."""
    t = _clean(text)
    if t == "none":
        return None
    if t == "file":
        return t
    if len(t) >= 2 and t[0] in "+-" and t[1:].isdigit():
        return t
    raise ParseError(SOURCE, f"not a bitmap location: {t!r}")


def raid10_layout_name(layout: int) -> str:
    """raid10 layout number -> ``n2``/``f2``/``o2`` (copies included); mixes as ``n2f2``."""
    if layout < 0:
        raise ParseError(SOURCE, f"negative raid10 layout: {layout}")
    g = levels.Raid10Layout.from_number(layout)
    if g is None:
        raise ParseError(SOURCE, f"not a raid10 layout: {layout}")
    return g.name  # one copy: degenerate, mdadm calls it n1


@only_parse_errors(SOURCE)
def layout_name(level: str, text: str) -> str | None:
    """``md/layout`` as a name for the array's level (the new one while a reshape changes it);
    None where the level has no layout."""
    t = _new_of_reshape(_clean(text), "layout")
    if t in ("", "none"):
        return None
    n_or_none = ascii_int(t, signed=True)
    if n_or_none is None:
        raise ParseError(SOURCE, f"not a layout number: {t[:40]!r}")
    n = n_or_none
    lvl = level.strip()
    if lvl in levels.PARITY:
        if lvl == "raid4":
            return md_names.parity_layout_name(n) or str(n)
        name = md_names.parity_layout_name(n)
        if name is None:
            raise ParseError(SOURCE, f"unknown {lvl} layout {n}")
        return name
    if lvl == "raid10":
        return raid10_layout_name(n)
    if lvl == "raid0":
        return md_names.RAID0_LAYOUT_NAMES.get(n)
    return None


class ExternalMetadata(NamedTuple):
    container: str  # kernel name of the container ("md127")
    member: str  # the volume's index inside it, as written ("0")


@only_parse_errors(SOURCE)
def parse_external_member(metadata: str) -> ExternalMetadata | None:
    """``external:/md127/0`` (or ``external:-md127/0``, read-only) -> (md127, "0"); None for
    anything that is not a container member volume."""
    t = _clean(metadata)
    if not t.startswith("external:") or len(t) < 11 or t[9] not in "/-":
        return None
    rest = t[10:]
    if "/" not in rest:
        raise ParseError(SOURCE, f"not an external member metadata: {t!r}")
    container, index = rest.split("/", 1)
    if not container or not index:
        raise ParseError(SOURCE, f"not an external member metadata: {t!r}")
    return ExternalMetadata(container, index)


@only_parse_errors(SOURCE)
def parse_metadata_version(text: str) -> str | None:
    """``md/metadata_version``: ``"1.2"``, ``"0.90"``, ``"external:imsm"`` ...; "none" -> None."""
    t = _clean(text)
    return None if t in ("", "none") else t


@only_parse_errors(SOURCE)
def parse_array_uuid(text: str) -> str | None:
    """``md/uuid`` (``%pU``: ``5e0b9d3d-5e00-a775-24e5-088cfc28dedc``) or udev's ``MD_UUID``
    (mdadm's ``5e0b9d3d:5e00a775:24e5088c:fc28dedc``), kept as written.

    All zeros is ``None``: md shows that while an array is still being created, before
    mdadm has written its superblock, and it names no array: a sync filed under it would
    be listed with every other array's sync filed so (seen in the VM: a resync recorded
    under ``00000000-0000-0000-0000-000000000000`` by a monitor that probed 0.04 s early).
    """
    t = _clean(text)
    if not t:
        return None
    digits = t.replace("-", "").replace(":", "")
    if len(digits) != 32 or any(c not in "0123456789abcdefABCDEF" for c in digits):
        raise ParseError(SOURCE, f"not an array UUID: {t[:60]!r}")
    return None if set(digits) == {"0"} else t
