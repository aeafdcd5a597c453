"""``/proc/mdstat``: the kernel's one-page summary of every md array.

Format (drivers/md/md.c ``md_seq_show``)::

    Personalities : [raid1] [raid6] ...
    md0 : active (auto-read-only) raid1 sdb1[1] sda1[0](F)
          8387520 blocks super 1.0 [2/2] [UU]
          [====>......]  resync = 23.4% (1963200/8387520) finish=4.6min speed=23178K/sec
          bitmap: 1/1 pages [4KB], 65536KB chunk
    <blank or whitespace-only line>
    unused devices: <none>

The number in ``sda1[0]`` is the kernel's descriptor number (``desc_nr``), which equals the
role for most arrays but not always (a spare that took over keeps its own number); sysfs
``md/dev-*/slot`` is the truth. ``blocks`` and the ``(done/total)`` pair are KiB.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.model import levels, md_names
from app.model.devices import MdArray, MdMember, SyncStatus
from app.parsers.errors import ParseError
from app.parsers.safe import ascii_float, ascii_int, only_parse_errors

SOURCE = "/proc/mdstat"

MEMBER_FLAGS = frozenset("FSWJR")
# mdstat member flag -> sysfs dev-*/state word
FLAG_WORDS = {
    "F": "faulty",
    "S": "spare",
    "W": "write_mostly",
    "J": "journal",
    "R": "replacement",
}

_ARRAY_RE = re.compile(r"^(md[^\s:]*)\s+:\s*(.*)$", re.ASCII)
_MEMBER_RE = re.compile(r"^([^\s\[\]()]+)\[([^\]]*)\]((?:\([^)]*\))*)$", re.ASCII)
_PERSONALITY_RE = re.compile(r"^[a-z][a-z0-9_-]*$", re.ASCII)
_BLOCKS_RE = re.compile(r"^(\d{1,20})\s+blocks\b(.*)$", re.ASCII)
_SUPER_RE = re.compile(r"\bsuper\s+(\S+)", re.ASCII)
_RAID456_RE = re.compile(
    r"\blevel\s+(\d{1,20}),\s*(\d{1,20})k\s+chunk,\s*algorithm\s+(\d{1,20})", re.ASCII
)
_CHUNKS_RE = re.compile(r"\b(\d{1,20})[kK]\s+chunks\b", re.ASCII)
_ROUNDING_RE = re.compile(r"\b(\d{1,20})k\s+rounding\b", re.ASCII)
_COPIES_RE = re.compile(r"\b(\d{1,20})\s+(near|far|offset)-copies\b", re.ASCII)
_DISKS_RE = re.compile(r"\[(\d{1,20})/(\d{1,20})\]\s*\[([U_]*)\]", re.ASCII)
_PROGRESS_RE = re.compile(
    r"^(?:\[[=>.]*\]\s*)?(resync|recovery|check|repair|reshape)\s*=\s*([\d.]+)%"
    r"(?:\s*\((\d{1,20})/(\d{1,20})\))?(?:\s*finish=([\d.]+)min)?(?:\s*speed=(\d{1,20})K/sec)?",
    re.ASCII,
)
_WAITING_RE = re.compile(
    r"^(resync|recovery|check|repair|reshape)\s*=\s*(DELAYED|PENDING|REMOTE)$", re.ASCII
)
_BITMAP_RE = re.compile(
    r"^bitmap:\s*(\d{1,20})/(\d{1,20})\s+pages\s+\[(\d{1,20})KB\],\s*(\d{1,20})(KB|MB|B)?\s+chunk(?:,\s*file:\s*(.+))?$",
    re.ASCII,
)


@dataclass(frozen=True, slots=True)
class MdstatMember:
    name: str  # kernel name: sda1, nvme0n1, loop0
    slot: int  # the bracketed number (kernel desc_nr)
    flags: frozenset[str] = frozenset()  # subset of {"F", "S", "W", "J", "R"}

    @property
    def faulty(self) -> bool:
        return "F" in self.flags

    @property
    def spare(self) -> bool:
        return "S" in self.flags

    @property
    def write_mostly(self) -> bool:
        return "W" in self.flags

    @property
    def journal(self) -> bool:
        return "J" in self.flags

    @property
    def replacement(self) -> bool:
        return "R" in self.flags


@dataclass(frozen=True, slots=True)
class MdstatBitmap:
    pages_used: int
    pages_total: int
    size_kib: int  # the "[nKB]" in memory
    chunk_bytes: int
    file: str | None = None  # for a bitmap kept in a file


@dataclass(frozen=True, slots=True)
class MdstatProgress:
    """The progress line: ``action`` is the mdstat word (resync, recovery, check, repair,
    reshape); ``waiting`` is "DELAYED"/"PENDING"/"REMOTE" for a ``resync=DELAYED`` line."""

    action: str
    percent: float | None = None
    done_kib: int | None = None
    total_kib: int | None = None
    finish_min: float | None = None
    speed_kib_s: int | None = None
    waiting: str | None = None


@dataclass(frozen=True, slots=True)
class MdstatArray:
    name: str  # md0, md127, md_test
    active: bool
    read_only: str | None = None  # "read-only" / "auto-read-only"
    personality: str | None = None  # raid1, raid5, linear, ...; None e.g. for containers
    super: str | None = None  # "1.2", "external:imsm", "external:/md127/0"; None = not printed
    blocks: int | None = None  # KiB
    chunk_bytes: int | None = None
    rounding_bytes: int | None = None  # linear arrays
    algorithm: int | None = None  # raid4/5/6
    layout: str | None = None  # "left-symmetric", "n2", "f2", "o2"
    layout_text: str | None = None  # as printed: "algorithm 2", "2 near-copies"
    raid_disks: int | None = None  # N of "[N/M]"
    active_disks: int | None = None  # M of "[N/M]"
    status: str | None = None  # "UU_"
    members: tuple[MdstatMember, ...] = ()
    bitmap: MdstatBitmap | None = None
    progress: MdstatProgress | None = None
    extra: tuple[str, ...] = ()  # continuation lines this parser does not know

    @property
    def size_bytes(self) -> int | None:
        return None if self.blocks is None else self.blocks * 1024

    @property
    def is_container(self) -> bool:
        s = self.super
        return (
            self.personality is None
            and s is not None
            and s.startswith("external:")
            and not s.startswith(("external:/", "external:-"))
        )

    @property
    def container(self) -> tuple[str, int] | None:
        """(container kernel name, member index) for ``super external:/md127/0``."""
        s = self.super
        if s is None or not s.startswith(("external:/", "external:-")):
            return None
        rest = s[len("external:") + 1 :]
        cname, _, idx = rest.partition("/")
        n = ascii_int(idx)
        if not cname or n is None:
            return None
        return cname, n

    @property
    def failed_count(self) -> int:
        return sum(1 for m in self.members if m.faulty)

    @property
    def spare_count(self) -> int:
        return sum(1 for m in self.members if m.spare)


@dataclass(frozen=True, slots=True)
class Mdstat:
    personalities: tuple[str, ...]
    arrays: tuple[MdstatArray, ...]
    unused: tuple[str, ...] = ()

    def array(self, name: str) -> MdstatArray | None:
        for a in self.arrays:
            if a.name == name:
                return a
        return None


def _parse_member(tok: str, lineno: int) -> MdstatMember:
    m = _MEMBER_RE.match(tok)
    if not m:
        raise ParseError(SOURCE, f"bad member {tok!r}", lineno)
    name, slot, flags_s = m.groups()
    number = ascii_int(slot)
    if number is None or slot != slot.strip():
        raise ParseError(SOURCE, f"member {tok!r}: slot {slot!r} is not a number", lineno)
    if number >= levels.MAX_RAID_DISKS:  # md.c bind_rdev_to_array: desc_nr < max_disks
        raise ParseError(SOURCE, f"member {tok[:40]!r}: number {number} is beyond md's", lineno)
    flags = set()
    for f in re.findall(r"\(([^)]*)\)", flags_s):
        if f not in MEMBER_FLAGS:
            raise ParseError(SOURCE, f"member {tok!r}: unknown flag ({f})", lineno)
        flags.add(f)
    return MdstatMember(name, number, frozenset(flags))


def _parse_header(name: str, rest: str, lineno: int) -> dict[str, object]:
    toks = rest.split()
    if not toks or toks[0] not in ("active", "inactive"):
        got = toks[0] if toks else ""
        raise ParseError(SOURCE, f"{name}: state must be active/inactive, got {got!r}", lineno)
    out: dict[str, object] = {"active": toks[0] == "active"}
    i = 1
    while i < len(toks) and toks[i].startswith("(") and toks[i].endswith(")"):
        out["read_only"] = toks[i][1:-1]
        i += 1
    if i < len(toks) and "[" not in toks[i]:
        if not _PERSONALITY_RE.match(toks[i]):
            raise ParseError(SOURCE, f"{name}: bad personality {toks[i]!r}", lineno)
        out["personality"] = toks[i]
        i += 1
    out["members"] = tuple(_parse_member(t, lineno) for t in toks[i:])
    if not out["members"] and "personality" not in out:
        raise ParseError(SOURCE, f"{name}: array line has neither personality nor members", lineno)
    return out


def _parse_blocks(name: str, text: str, lineno: int) -> dict[str, object]:
    m = _BLOCKS_RE.match(text)
    if not m:
        raise ParseError(SOURCE, f"{name}: expected the 'N blocks' line, got {text!r}", lineno)
    out: dict[str, object] = {"blocks": int(m.group(1))}
    tail = m.group(2)
    if sm := _SUPER_RE.search(tail):
        out["super"] = sm.group(1)
    if rm := _RAID456_RE.search(tail):
        out["chunk_bytes"] = int(rm.group(2)) * 1024
        algo = int(rm.group(3))
        out["algorithm"] = algo
        out["layout"] = md_names.parity_layout_name(algo) or f"algorithm-{algo}"
        out["layout_text"] = f"algorithm {algo}"
    elif cm := _CHUNKS_RE.search(tail):
        out["chunk_bytes"] = int(cm.group(1)) * 1024
    if ro := _ROUNDING_RE.search(tail):
        out["rounding_bytes"] = int(ro.group(1)) * 1024
    copies = _COPIES_RE.findall(tail)
    if copies:
        out["layout"] = "".join(f"{kind[0]}{n}" for n, kind in copies)
        out["layout_text"] = " ".join(f"{n} {kind}-copies" for n, kind in copies)
    if dm := _DISKS_RE.search(tail):
        raid_disks, active_disks = int(dm.group(1)), int(dm.group(2))
        out["raid_disks"] = raid_disks
        out["active_disks"] = active_disks
        if max(raid_disks, active_disks) > levels.MAX_RAID_DISKS:
            raise ParseError(
                SOURCE,
                f"{name}: [{dm.group(1)}/{dm.group(2)}] is beyond md's "
                f"{levels.MAX_RAID_DISKS} slots",
                lineno,
            )
        out["status"] = dm.group(3)
    return out


def _parse_bitmap(text: str) -> MdstatBitmap | None:
    m = _BITMAP_RE.match(text)
    if not m:
        return None
    unit = {"KB": 1024, "MB": 1024 * 1024, "B": 1, None: 1024}[m.group(5)]
    return MdstatBitmap(
        int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)) * unit, m.group(6)
    )


def _parse_progress(text: str) -> MdstatProgress | None:
    if w := _WAITING_RE.match(text):
        return MdstatProgress(action=w.group(1), waiting=w.group(2))
    m = _PROGRESS_RE.match(text)
    if not m:
        return None
    action, pct, done, total, finish, speed = m.groups()
    return MdstatProgress(
        action=action,
        percent=ascii_float(pct),
        done_kib=int(done) if done else None,
        total_kib=int(total) if total else None,
        finish_min=ascii_float(finish) if finish else None,
        speed_kib_s=int(speed) if speed else None,
    )


@only_parse_errors(SOURCE)
def parse_mdstat(text: str) -> Mdstat:
    """Parse the whole of /proc/mdstat. Empty text is a machine without md (no arrays)."""
    lines = text.splitlines()
    personalities: tuple[str, ...] = ()
    unused: tuple[str, ...] = ()
    arrays: list[MdstatArray] = []
    i = 0
    n = len(lines)
    while i < n:
        raw = lines[i]
        line = raw.strip()
        lineno = i + 1
        i += 1
        if not line:
            continue
        if line.startswith("Personalities"):
            _, _, rest = line.partition(":")
            toks = rest.split()
            for t in toks:
                if not (t.startswith("[") and t.endswith("]") and len(t) > 2):
                    raise ParseError(SOURCE, f"bad personality token {t!r}", lineno)
            personalities = tuple(t[1:-1] for t in toks)
            continue
        if line.startswith("unused devices"):
            _, _, rest = line.partition(":")
            unused = tuple(t for t in rest.split() if t != "<none>")
            continue
        if line.startswith("read_ahead") or line.startswith("Event:"):
            continue  # 2.4-era "read_ahead ..." and md-cluster/poll event lines
        am = _ARRAY_RE.match(line)
        if not am:
            raise ParseError(SOURCE, f"unexpected line {line!r}", lineno)
        name = am.group(1)
        fields = _parse_header(name, am.group(2), lineno)
        if i >= n or not lines[i].strip():
            raise ParseError(SOURCE, f"{name}: missing 'blocks' line after the array line", lineno)
        fields.update(_parse_blocks(name, lines[i].strip(), i + 1))
        i += 1
        extra: list[str] = []
        while i < n and lines[i].strip():
            cont = lines[i].strip()
            if cont.startswith("unused devices") or _ARRAY_RE.match(cont):
                break
            if (bm := _parse_bitmap(cont)) is not None:
                fields["bitmap"] = bm
            elif (pm := _parse_progress(cont)) is not None:
                fields["progress"] = pm
            elif lines[i][:1].isspace():
                extra.append(cont)
            else:
                raise ParseError(SOURCE, f"{name}: unexpected line {cont!r}", i + 1)
            i += 1
        fields["extra"] = tuple(extra)
        arrays.append(MdstatArray(name=name, **fields))  # type: ignore[arg-type]
    return Mdstat(personalities, tuple(arrays), unused)


# ---- mapping into the device model ------------------------------------------------------


def _flag_words(m: MdstatMember) -> list[str]:
    return [FLAG_WORDS[f] for f in "FSJRW" if f in m.flags]


def _holds_role(m: MdstatMember) -> bool:
    """md_seq_show prints (S) for raid_disk < 0 and (F)/(J) for faulty/journal; an (R)
    replacement shares its original's role and is not in the ``[UU_]`` string."""
    return not (m.spare or m.faulty or m.journal or m.replacement)


def _roles(a: MdstatArray, raid_disks: int | None) -> list[tuple[int | None, tuple[str, ...]]]:
    """(slot, state words) per member.

    The bracketed number is the descriptor number, not the role (a spare that took over role 2
    keeps its number 3), and mdstat has no "rebuilding" flag: a member rebuilding into a role
    is printed like an in-sync one. The ``[UU_]`` string is indexed by role and shows ``U`` for
    in-sync members only, so:

    * members holding a role (no S/F/J/R flag) whose numbers are exactly the ``U`` positions are
      in sync in those slots;
    * a member whose number is not a ``U`` position is not in sync: it is being rebuilt
      (sysfs calls it ``spare`` with a slot); its slot is the missing role when only one is
      missing, else unknown;
    * anything else (numbers that do not fit) leaves slots unknown, and states unknown where
      mdstat cannot tell in-sync from rebuilding.

    Without a ``[UU_]`` string (raid0, linear, containers) the numbers are slots only when they
    are exactly 0..n-1.
    """
    holders = [m for m in a.members if _holds_role(m)]
    slot_of: dict[int, int | None] = {}
    state_of: dict[int, tuple[str, ...] | None] = {}  # None: in_sync or rebuilding, unknown
    if a.status is None or not a.active:
        n = raid_disks if raid_disks is not None else len(holders)
        fits = sorted(m.slot for m in holders) == list(range(n))
        for m in holders:
            slot_of[id(m)] = m.slot if fits else None
            state_of[id(m)] = ("in_sync",)
    else:
        up = {i for i, c in enumerate(a.status) if c == "U"}
        down = [i for i, c in enumerate(a.status) if c == "_"]
        outside = [m for m in holders if m.slot not in up]
        inside = [m for m in holders if m.slot in up]
        if len(inside) == len(up) and len(outside) == len(holders) - len(up):
            for m in inside:
                slot_of[id(m)], state_of[id(m)] = m.slot, ("in_sync",)
            for m in outside:
                slot_of[id(m)] = down[0] if len(down) == 1 and len(outside) == 1 else None
                state_of[id(m)] = ("spare",)
        else:
            rebuilding = len(holders) - len(up)
            for m in holders:
                slot_of[id(m)] = None
                state_of[id(m)] = ("in_sync",) if rebuilding <= 0 else None
    out: list[tuple[int | None, tuple[str, ...]]] = []
    for m in a.members:
        words = _flag_words(m)
        if _holds_role(m):
            base = state_of[id(m)]
            words = [*(base or ()), *words]
            out.append((slot_of[id(m)], tuple(words)))
        else:
            out.append((None, tuple(words)))
    return out


def _sync(p: MdstatProgress | None) -> SyncStatus | None:
    if p is None:
        return None
    if p.waiting is not None:
        return SyncStatus(action=p.waiting.lower())
    return SyncStatus(
        action=md_names.MDSTAT_SYNC_ACTIONS[p.action],
        done_sectors=None if p.done_kib is None else p.done_kib * 2,
        total_sectors=None if p.total_kib is None else p.total_kib * 2,
        speed_kib_s=p.speed_kib_s,
    )


def mdstat_array_to_model(a: MdstatArray) -> MdArray:
    """One mdstat array as an ``MdArray``.

    What mdstat cannot tell is left ``None``: ``array_state`` is only set for inactive /
    read-only arrays, ``metadata`` is ``None`` when no ``super`` is printed (0.90 or very old
    kernels), member slots and in-sync/rebuilding states as far as ``_roles`` can derive them.
    """
    if a.personality is not None:
        level = a.personality
    elif a.is_container:
        level = "container"
    else:
        level = "unknown"
    raid_disks = a.raid_disks
    if raid_disks is None and a.personality in ("raid0", "linear"):
        raid_disks = sum(1 for m in a.members if not (m.spare or m.faulty or m.journal))
    degraded = 0
    if a.raid_disks is not None and a.active_disks is not None and a.active:
        degraded = max(0, a.raid_disks - a.active_disks)
    members = [
        MdMember(device=m.name, slot=slot, state=state)
        for m, (slot, state) in zip(a.members, _roles(a, raid_disks), strict=True)
    ]
    if not a.active:
        array_state: str | None = "inactive"
    elif a.read_only == "read-only":
        array_state = "readonly"
    elif a.read_only == "auto-read-only":
        array_state = "read-auto"
    else:
        array_state = None
    bitmap = None
    if a.bitmap is not None:
        bitmap = a.bitmap.file or "internal"
    cont = a.container
    return MdArray(
        name=a.name,
        level=level,
        size_bytes=a.size_bytes,
        raid_disks=raid_disks,
        chunk_bytes=a.chunk_bytes,
        layout=a.layout,
        metadata=a.super,
        array_state=array_state,
        degraded=degraded,
        bitmap=bitmap,
        members=tuple(members),
        sync=_sync(a.progress),
        container=cont[0] if cont else None,
        member_index=cont[1] if cont else None,
        read_only=a.read_only is not None,
    )


@only_parse_errors(SOURCE)
def mdstat_to_arrays(m: Mdstat) -> tuple[MdArray, ...]:
    return tuple(mdstat_array_to_model(a) for a in m.arrays)
