"""md's sync model, as the kernel runs it: what a sync's progress counts, how md's speed limits
throttle it, how long it takes, which bytes it writes to which member, and which syncs wait for
one another. Pure (no I/O), beside the level table (:mod:`app.model.levels`), which keeps the
per-level facts this builds on.

Sources (kernel ``drivers/md``; mdadm ``Create.c``):

- **Progress and throttle.** ``md_do_sync()`` (``md.c``) adds what each ``sync_request()``
  returns to ``io_sectors`` and every ``SYNC_MARK_STEP`` (3 s) keeps a mark of it (``SYNC_MARKS``
  = 10 marks, ``resync_mark`` / ``resync_mark_cnt`` is the oldest: 27–30 s back). Its throttle
  computes ``currspeed = (io_sectors - resync_mark_cnt) / 2 / ((jiffies - resync_mark) / HZ + 1)``
  and, while ``currspeed > speed_min(mddev)``, sleeps when ``currspeed > speed_max(mddev)`` (or
  when the array is not idle). ``sync_speed`` (``md.c`` ``sync_speed_show``) reports the same
  count over the same mark. So the limits bound the **progress** rate — the unit ``sync_speed``
  shows — not a per-member rate: a 4-disk RAID-10 resync held 4,401 KiB/s under
  ``speed_limit_max`` 4,000 (VM, issue 22). The ``+ 1`` second in ``currspeed``'s divisor lets
  the true rate sit ``1 + 1/t`` above the limit over a mark window of t s (:data:`HELD_RATIO`).
- ``speed_min()`` / ``speed_max()`` (``md.c``) are ``mddev->sync_speed_min/max`` where set (the
  array's own ``md/sync_speed_min/max``, shown "(local)"), else ``sysctl_speed_limit_min/max``
  (``dev.raid.speed_limit_*``, shown "(system)").
- **What progress counts.** ``md_do_sync()`` runs a resync/check/repair and a reshape up to
  ``mddev->resync_max_sectors``, a recovery up to ``mddev->dev_sectors`` (member sectors).
  ``raid10_run()`` sets ``resync_max_sectors`` to the array size, so a RAID-10 resync, check or
  repair counts array sectors (levels' ``array_sector_syncs``); RAID-1/4/5/6 count member
  sectors. Sectors a bitmap lets the personality skip (``*skipped``) advance the position but
  not ``io_sectors``: a bitmap-based sync is throttled and timed by what it really syncs.
- **Bytes written.** RAID-1 resync (``raid1.c`` ``sync_request_write()``): reads one mirror and
  writes every other one (no compare unless a check/repair was requested). RAID-10 resync
  (``raid10.c`` ``sync_request_write()``): reads every copy, compares with the first and writes
  only the copies that differ. RAID-4/5/6 resync (``raid5.c`` ``handle_parity_checks5/6()``):
  checks parity and writes it only where the check fails. A recovery/replacement
  (``raid1/10_sync_request()``, ``raid5.c`` ``handle_stripe()``'s ``s.replacing``/``to_write``)
  writes the target member only. mdadm ``Create.c`` builds a new RAID-4/5 degraded with the
  last device as a spare unless ``--assume-clean``/``--force``: md *recovers* the last member
  (VM, issue 22: ~254 MiB to the last of four 256 MiB members, ~13 kB to the others). Not with
  external metadata (IMSM, DDF): ``Create()`` tests ``st->ss->external == 0`` before it moves
  the last slot to the spares, so such a volume starts whole and *resyncs* (VM, issue 43: an
  IMSM RAID-5 resynced and wrote 46–54 kB per member).
- **One sync per disk.** ``md_do_sync()`` loops over every array and, if one
  ``match_mddev_units()`` (a member on the same whole disk) is already syncing, logs "delaying
  resync of mdX until mdY has finished (they share one or more physical units)" and waits;
  mdstat shows ``resync=DELAYED``. That wait is not a sync yet: it begins when md_do_sync
  leaves the loop, and is recorded from then (:func:`wait_of` says for what and how long).
- **A recover with no target is no sync.** ``md_sync_action()`` (``md.c``; ``action_show()``
  before 6.11) says "recover" whenever ``MD_RECOVERY_NEEDED`` or ``MD_RECOVERY_RUNNING`` is set
  and no other sync bit is ("no sync_action is specified"): ``md_error()`` sets NEEDED when a
  member fails, ``mdadm --add`` of a spare to a whole array too. ``md_check_recovery()`` then
  asks ``remove_and_add_spares()`` for a device to rebuild; with none (no spare, nothing being
  rebuilt), no ``recovery_cp`` to resync and no sync requested it decides "nothing to be
  done" and clears the bits (``goto not_running``): ``md_do_sync()`` never runs, so no
  "md: recovery of RAID array" line, ``last_sync_action`` unchanged, no byte written.
  A real recovery has its target slotted before ``md_do_sync()`` starts
  (``remove_and_add_spares()`` → ``pers->hot_add_disk()``): :func:`md_sync` drops the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.model import levels

if TYPE_CHECKING:
    from app.model.devices import Machine, MdArray, SyncStatus

SECTOR = 512
ACTIONS = ("resync", "recover", "check", "repair", "reshape", "replace")

# md.c: SYNC_MARKS 10, SYNC_MARK_STEP 3 s; the oldest mark is 27..30 s back
MARK_WINDOW_S = 28.5
# the throttle compares currspeed = done / (t + 1) with the limit, so the true rate held at the
# limit is limit × (t + 1) / t (sync_speed divides by t alone: it shows about this rate)
HELD_RATIO = (MARK_WINDOW_S + 1) / MARK_WINDOW_S
# sync_speed within 5 % of the max limit counts as held by it
AT_CEILING = 0.95


@dataclass(frozen=True, slots=True)
class MemberWrite:
    device: str  # kernel name of the member (partition or disk): "sdb1", "nvme0n1p2"
    bytes_low: int  # what the sync will write to this member, low end of the range
    bytes_high: int  # high end (== low where the model is exact)
    member_bytes: int  # the member's size in the array (the "x its size" denominator)

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "bytes_written_low": self.bytes_low,
            "bytes_written_high": self.bytes_high,
            "member_bytes": self.member_bytes,
        }


@dataclass(frozen=True, slots=True)
class SyncForecast:
    array: str  # "md127" (a planned array: the name the plan gives it)
    action: str  # resync | recover | check | repair | reshape | replace
    speed_kib_s: int | None  # expected progress rate, in sync_speed's unit (KiB/s)
    speed_why: str  # "md's limit" | "the array's own limit" | "the members' speed" | ""
    duration_s_low: float | None
    duration_s_high: float | None
    members: tuple[MemberWrite, ...]  # every member the sync writes to or reads
    waits_for: tuple[str, ...] = ()  # arrays sharing a disk whose sync runs first
    why: str = ""  # one line, plain English: why these bytes
    progress_sectors: int | None = None  # what the sync's progress will count (its unit)
    wait_s: float | None = None  # about how long it waits for ``waits_for`` (their ETAs)
    limit_kib_s: int | None = None  # the max limit in force, where the limit holds it
    # where the rate came from: "measured" (the progress over the last second), "md" (md's own
    # sync_speed), "model" (the members' rated speed or the limit, before the sync runs)
    rate_source: str = "model"

    def to_json(self) -> dict[str, Any]:
        return {
            "array": self.array,
            "action": self.action,
            "speed_kib_s": self.speed_kib_s,
            "speed_why": self.speed_why,
            "rate_source": self.rate_source,
            "limit_kib_s": self.limit_kib_s,
            "duration_s_low": self.duration_s_low,
            "duration_s_high": self.duration_s_high,
            "members": [m.to_json() for m in self.members],
            "waits_for": list(self.waits_for),
            "why": self.why,
            "wait_s": self.wait_s,
        }


# ---- progress unit --------------------------------------------------------------------------


def counts_array_sectors(level: str | None, action: str) -> bool:
    """Whether the sync's progress (sync_completed, sync_speed) counts array sectors: a RAID-10
    resync/check/repair (``resync_max_sectors`` is the array size, ``raid10_run()``)."""
    f = levels.facts(level)
    return f is not None and action in f.array_sector_syncs


def progress_per_member(
    level: str | None, raid_devices: int | None, layout: str | None, action: str
) -> float:
    """Members' worth of data one unit of sync progress covers: 1 where progress counts member
    sectors, ``raid_disks / copies`` for a RAID-10 resync/check/repair (array sectors). This is
    a unit conversion only: md's limits bound the progress rate itself (see the module doc)."""
    if not raid_devices or not counts_array_sectors(level, action):
        return 1.0
    copies = levels.raid10_copies(layout) if level == "raid10" else 1
    return raid_devices / max(1, copies)


# ---- throttle -------------------------------------------------------------------------------


def held_rate(limit_max_kib_s: int) -> float:
    """The progress rate md holds a sync at when ``speed_max`` binds (KiB/s)."""
    return limit_max_kib_s * HELD_RATIO


def at_ceiling(
    speed_kib_s: int | float | None, max_kib_s: int | None, min_kib_s: int | None = None
) -> bool | None:
    """Whether a sync's ``sync_speed`` is at (within 5 % of, or above) the max limit in force:
    the limit, not the disks, holds it back. None when either figure is unknown. md's throttle
    sleeps only while ``currspeed > speed_min`` too (``md_do_sync()``), so a max below the min
    in force binds at the min (an LV's ``--maxrecoveryrate 256K`` under the system's 1000 KiB/s
    min synced at ~1,660 KiB/s, VM, issue 42)."""
    if speed_kib_s is None or not max_kib_s:
        return None
    return speed_kib_s >= AT_CEILING * max(max_kib_s, min_kib_s or 0)


def effective_limits(
    array: MdArray, sysctl_min: int | None, sysctl_max: int | None
) -> tuple[int | None, int | None]:
    """The array's own md/sync_speed_min/max where set ("(local)"), else the system's
    (``speed_min()``/``speed_max()`` in ``md.c``)."""
    lo = array.speed_min_local if array.speed_min_local is not None else sysctl_min
    hi = array.speed_max_local if array.speed_max_local is not None else sysctl_max
    return lo, hi


def hardware_progress_kib_s(
    level: str, raid_disks: int, layout: str | None, action: str, member_speed_kib_s: int
) -> float:
    """The progress rate the members allow, from one member's sequential speed: a RAID-10
    resync/check/repair reads each array sector's copies spread over all members (progress =
    member speed × raid_disks / copies); a reshape reads and rewrites every member (half);
    else one progress sector is one sector of each member, in parallel."""
    rate = member_speed_kib_s * progress_per_member(level, raid_disks, layout, action)
    if action == "reshape":
        rate /= 2
    return float(rate)


# ---- bytes written --------------------------------------------------------------------------


def _first_copy_slots(level: str, raid_disks: int, layout: str | None) -> set[int] | None:
    """RAID-10 near layouts whose disk count divides by the copies: the slots that hold only
    first copies (read, compared against, never written by a resync). None: mixed slots."""
    if level != "raid10":
        return None
    g = levels.raid10_layout(layout)
    if g.far > 1 or raid_disks % g.near:
        return None
    return {i for i in range(raid_disks) if i % g.near == 0}


def _compare_write_high(
    level: str, raid_disks: int, layout: str | None, slot: int, member_bytes: int
) -> int:
    """The most a compare-and-write resync/repair can write to a member: the copies or parity
    it holds (RAID-10: non-first copies; RAID-4/5/6: its share of parity)."""
    if level == "raid10":
        first = _first_copy_slots(level, raid_disks, layout)
        if first is not None:
            return 0 if slot in first else member_bytes
        copies = levels.raid10_copies(layout)
        return member_bytes * (copies - 1) // max(1, copies)
    f = levels.facts(level)
    if f is not None and f.parity:
        if level == "raid4":
            return member_bytes if slot == raid_disks - 1 else 0
        return member_bytes * f.parity // max(1, raid_disks)
    return member_bytes


def recovery_reads(
    level: str,
    raid_disks: int,
    layout: str | None,
    survivors: Sequence[tuple[str, int]],
    targets: Sequence[int],
    component: int,
    action: str = "recover",
) -> dict[str, int]:
    """What a recovery of the slots ``targets`` reads from each survivor (``survivors``: (device,
    slot) of the members in sync; ``component``: each member's data, :func:`component_bytes`):

    - RAID-4/5/6: every survivor reads its whole component — ``raid5.c`` ``handle_stripe()``
      fetches every block of a stripe being synced (``s->syncing``: ``fetch_block()``) to
      compute the missing ones;
    - RAID-1: one mirror per block — ``raid1_sync_request()`` reads the first in-sync mirror
      (``disk``; every mirror only for a requested check/repair) and writes the targets;
    - RAID-10: one copy per target's block — ``raid10_sync_request()``'s recovery loop reads
      the first in-sync copy of each chunk: the target's size, from the slots sharing a copy
      set with it (``levels.raid10_copy_sets``), shared evenly here; a replace's member stays
      in sync in its slot and is one of those copies (the loop skips only a copy not
      ``In_sync``);
    - a replace (``action``) of a RAID-4/5/6 member reads the member it replaces, still in sync
      in the target slot (``raid5.c`` ``handle_stripe()``, ``s->replacing``: the block of the
      device being replaced is read and written to its replacement; the others only where it
      cannot be read).
    """
    reads = {d: 0 for d, _ in survivors}
    if not survivors or not targets or component <= 0:
        return reads
    if level in levels.PARITY and action == "replace":
        return {d: component if s in targets else 0 for d, s in survivors}
    if level in levels.PARITY:
        return {d: component for d, _ in survivors}
    if level == "raid1":
        first = min(survivors, key=lambda x: x[1])[0]
        reads[first] = component
        return reads
    if level == "raid10":
        sets = levels.raid10_copy_sets(raid_disks, layout)
        for t in targets:
            partners = {s for cs in sets if t in cs for s in cs}
            if action != "replace":
                partners -= {t}
            src = [d for d, s in survivors if s in partners] or [d for d, _ in survivors]
            for d in src:
                reads[d] += component // len(src)
        return reads
    return reads


def forecast_sync(
    *,
    array: str,
    level: str,
    raid_disks: int,
    layout: str | None,
    action: str,
    members: Sequence[tuple[str, int]],
    targets: Sequence[str] = (),
    initial: bool = False,
    content: str = "unknown",
    bitmap_dirty_bytes: int | None = None,
    limit_kib_s: tuple[int | None, int | None] = (None, None),
    member_speed_kib_s: int | None = None,
    done_sectors: int = 0,
    limit_local: bool = False,
    waits_for: Sequence[str] = (),
    mismatch_bytes: int | None = None,
    wait_s: float | None = None,
    external_metadata: bool = False,
) -> SyncForecast:
    """What a sync of ``array`` will do: its rate, duration and the bytes it writes per member.

    ``members`` are (device, member bytes) in slot order. ``limit_local``: the max limit is the
    array's own (md/sync_speed_max "(local)"). ``mismatch_bytes``: what a check found (a repair
    writes at most that). ``waits_for``/``wait_s``: syncing arrays that share a disk with this
    one and about how long until they end (:func:`waiting_for`): md starts this sync after
    them. ``external_metadata``: an IMSM/DDF volume (mdadm builds it whole, no degraded
    create). See the module docstring for the kernel facts."""
    slots = list(members)
    size = max((b for _, b in slots), default=0)
    writes: dict[str, tuple[int, int]] = {d: (0, 0) for d, _ in slots}
    kind = action
    why = ""
    io_fraction = 1.0  # share of the progress range md really syncs (bitmap: dirty share)

    degraded_create = initial and not external_metadata and level in ("raid4", "raid5")
    if action in ("resync", "repair") and degraded_create:
        # mdadm Create.c: a new RAID-4/5 starts degraded, the last device a spare to rebuild
        kind = "recover"
        last = slots[-1][0] if slots else ""
        writes[last] = (slots[-1][1], slots[-1][1]) if slots else (0, 0)
        why = (
            f"mdadm builds a new {levels.label(level)} degraded and rebuilds its last member "
            f"({last}); the others are only read"
        )
    elif action in ("recover", "replace"):
        tgt = [t for t in targets if t in writes] or ([slots[-1][0]] if slots else [])
        for t in tgt:
            b = dict(slots)[t]
            if bitmap_dirty_bytes is not None and action == "recover":
                w = min(b, bitmap_dirty_bytes)
                writes[t] = (w, w)
            else:
                writes[t] = (b, b)
        if bitmap_dirty_bytes is not None and action == "recover":
            io_fraction = min(1.0, bitmap_dirty_bytes / size) if size else 1.0
            why = (
                f"a re-add with a write-intent bitmap resyncs only what was written while "
                f"{', '.join(tgt)} was out"
            )
        else:
            verb = "copied onto its replacement" if action == "replace" else "rebuilt in full"
            why = f"{', '.join(tgt)} is {verb}: one member's size written; the others are read"
    elif action == "check":
        why = "a check only reads: nothing is written unless it is a repair"
    elif action == "reshape":
        for d, b in slots:
            writes[d] = (b, b)
        why = "a reshape rewrites every member"
    elif action in ("resync", "repair"):
        dirty = bitmap_dirty_bytes if (bitmap_dirty_bytes is not None and not initial) else None
        if dirty is not None and size:
            io_fraction = min(1.0, dirty / size)
        if level == "raid1" and action == "resync":
            for i, (d, b) in enumerate(slots):
                if i:
                    w = b if dirty is None else min(b, dirty)
                    writes[d] = (w, w)
            why = "a RAID-1 resync copies the first mirror onto every other one"
        else:
            for i, (d, b) in enumerate(slots):
                hi = _compare_write_high(level, raid_disks, layout, i, b)
                if dirty is not None:
                    hi = min(hi, dirty)
                if action == "repair" and mismatch_bytes is not None:
                    hi = min(hi, mismatch_bytes)
                lo = 0
                if content == "zero" and action == "resync":
                    hi = 0
                writes[d] = (lo, hi)
            why = (
                f"a {levels.label(level)} {action} compares and writes only blocks that differ: "
                "nothing on new or trimmed disks, up to the copies or parity on used ones"
            )

    # progress: the unit and how much of it the sync really does
    per_member = progress_per_member(level, raid_disks, layout, kind)
    total = int(size // SECTOR * per_member)
    remaining = max(0, total - done_sectors) * io_fraction

    # rate
    hi_lim = limit_kib_s[1]  # md sleeps above the max; the min only keeps it from yielding
    limit_rate = held_rate(hi_lim) if hi_lim else None
    hw = (
        hardware_progress_kib_s(level, raid_disks, layout, kind, member_speed_kib_s)
        if member_speed_kib_s
        else None
    )
    speed: float | None
    held_by: int | None = None
    if limit_rate is not None and (hw is None or hw >= limit_rate):
        speed = limit_rate
        speed_why = "the array's own limit" if limit_local else "md's limit"
        held_by = hi_lim
    elif hw is not None:
        speed = hw
        speed_why = "the members' speed"
    else:
        speed = None
        speed_why = ""
    d_low = d_high = None
    if speed:
        d_low = remaining / 2 / speed
        # unknown member speed: the limit is only a bound, the sync may take longer; unknown
        # limit: the members' speed is only a bound (md's limit in force may hold it lower)
        d_high = d_low if hw is not None and hi_lim else None
    return SyncForecast(
        array=array,
        action=kind,
        speed_kib_s=round(speed) if speed else None,
        speed_why=speed_why,
        duration_s_low=d_low,
        duration_s_high=d_high,
        members=tuple(MemberWrite(d, writes[d][0], writes[d][1], b) for d, b in slots),
        waits_for=tuple(waits_for),
        why=why,
        progress_sectors=total,
        wait_s=wait_s,
        limit_kib_s=held_by,
    )


# ---- what md runs ----------------------------------------------------------------------------

WAITING_ACTIONS = ("pending", "delayed")  # a sync md holds back: nothing synced yet


def md_sync(sync: SyncStatus | None) -> SyncStatus | None:
    """``sync`` when md runs (or holds) a sync; None for idle, frozen and a "recover" with no
    target (md_check_recovery found nothing to rebuild: see the module's notes)."""
    if sync is None or sync.action in ("idle", "frozen"):
        return None
    if sync.action == "recover" and not sync.targets:
        return None
    return sync


# ---- syncs that wait for each other ------------------------------------------------------


def whole_disks(members: Iterable[str], disk_of: Callable[[str], str | None]) -> set[str]:
    """The whole disks an array's members sit on (a member that is a whole disk, or a device
    ``disk_of`` does not know, stands for itself)."""
    return {disk_of(d) or d for d in members}


def shares_disk(a: Iterable[str], b: Iterable[str], disk_of: Callable[[str], str | None]) -> bool:
    """Whether two arrays' members sit on one whole disk (``match_mddev_units()``)."""
    return not whole_disks(a, disk_of).isdisjoint(whole_disks(b, disk_of))


# ---- what the members can do (boost's ceiling) ---------------------------------------------

# One member's sequential rate where nothing better is known, KiB/s: the interface's practical
# maximum (SATA 6 Gb/s ~550 MB/s; a PCIe 3 x4 NVMe ~2 GB/s sustained; a 7200 rpm disk's outer
# tracks ~250 MB/s). A boost needs an upper bound, not a promise.
RATED_KIB_S = {"nvme": 2_000_000, "ssd": 537_000, "hdd": 250_000}
BOOST_HEADROOM = 1.25  # a boosted max a quarter above what the members can do: not held by it
BOOST_FLOOR_KIB_S = 200_000  # the kernel's default speed_limit_max: a boost never sets less
BOOST_UNKNOWN_KIB_S = 500_000  # members' speed unknown: seed 000's "echo 500000"


def rated_member_kib_s(rotational: bool | None, transport: str | None) -> int | None:
    """A member disk's sequential rate by kind (:data:`RATED_KIB_S`); None when unknown."""
    if transport == "nvme":
        return RATED_KIB_S["nvme"]
    if rotational is True:
        return RATED_KIB_S["hdd"]
    if rotational is False:
        return RATED_KIB_S["ssd"]
    return None


def component_bytes(a: MdArray) -> int | None:
    """Each member's data in ``a`` (md's ``component_size``, ``mddev->dev_sectors``): the
    array's size over its data copies — what a recovery writes to a member. ``md/dev-*/size``
    is the space the device offers (``rdev->sectors``), larger for an array made with --size
    (VM: --size=131072 on 255 MiB NVMe members; a re-add without a bitmap wrote 128 MiB)."""
    n, size = a.raid_disks, a.size_bytes
    if not n or not size:
        return None
    if a.level == "raid10":
        return size * max(1, levels.raid10_copies(a.layout)) // n
    if a.level == "raid1":
        return size
    if a.level in levels.PARITY:
        return size // max(1, n - levels.LEVELS[a.level].parity)
    return None


def members_rated_kib_s(machine: Machine, devices: Iterable[str]) -> int | None:
    """The slowest rated speed of the whole disks under ``devices`` (members or an array):
    what :func:`forecast_sync`'s ``member_speed_kib_s`` and a boost's ceiling take; None when
    any disk's kind is unknown."""
    speeds: list[int | None] = []
    for dev in devices:
        for name in machine.disks_under(dev):
            d = machine.disk(name)
            speeds.append(rated_member_kib_s(d.rotational, d.transport) if d else None)
    if not speeds or None in speeds:
        return None
    return min(s for s in speeds if s is not None)


def boost_max_kib_s(
    level: str, raid_disks: int, layout: str | None, action: str, member_kib_s: int | None
) -> tuple[int, str]:
    """The speed_max a boost sets for this sync — from what its slowest member can do, in
    progress units (:func:`hardware_progress_kib_s`) with headroom, never below the kernel's
    default max — and why, in words."""
    if not member_kib_s:
        return BOOST_UNKNOWN_KIB_S, "the members' speed is not known"
    hw = hardware_progress_kib_s(level, raid_disks, layout, action, member_kib_s)
    value = max(BOOST_FLOOR_KIB_S, int(-(-hw * BOOST_HEADROOM // 1000) * 1000))
    return value, (
        f"the members can do about {round(hw):,} KiB/s of {action} progress "
        f"(slowest member ~{member_kib_s:,} KiB/s)"
    )


@dataclass(frozen=True, slots=True)
class Wait:
    """What a sync of one array waits for (md_do_sync's ``match_mddev_units()`` loop)."""

    arrays: tuple[str, ...]  # the arrays syncing on a disk it shares, in the machine's order
    disks: tuple[str, ...]  # the whole disks it shares with them, sorted
    wait_s: float | None  # about how long until they end: the longest ETA (None: one unknown)


def wait_of(machine: Machine, array: str, members: Iterable[str]) -> Wait:
    """The arrays whose sync md lets finish before a sync of ``array`` (on ``members``) starts
    — those sharing a whole disk (``match_mddev_units()``) — the disks shared, and about how
    long that takes (the longest of their ETAs; None when one is unknown: one still waiting
    itself has none)."""
    mine = list(members)

    def disk_of(dev: str) -> str | None:
        under = machine.disks_under(dev)
        return under[0] if len(under) == 1 else None

    own = whole_disks(mine, disk_of)
    names: list[str] = []
    shared: set[str] = set()
    etas: list[float | None] = []
    for other in machine.arrays:
        s = other.sync
        if other.name == array or s is None or s.action in ("idle", "frozen", "pending"):
            continue
        common = own & whole_disks((m.device for m in other.members), disk_of)
        if common:
            names.append(other.name)
            shared |= common
            etas.append(s.eta_s)
    if not names:
        return Wait((), (), None)
    wait = None if any(e is None for e in etas) else max(e for e in etas if e is not None)
    return Wait(tuple(names), tuple(sorted(shared)), wait)


def waiting_for(
    machine: Machine, array: str, members: Iterable[str]
) -> tuple[tuple[str, ...], float | None]:
    """:func:`wait_of`'s arrays and time."""
    w = wait_of(machine, array, members)
    return w.arrays, w.wait_s
