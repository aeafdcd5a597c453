"""What the create plan says before an array is made: layout choice, member preparation, the
write hole and its md remedies, parity threads, RAID-0's missing redundancy. Domain text only;
the create wizard (TUI) and `raidman plan create-array` both show it as the plan's notes and
warnings.

Sources: the two-failure counts come from the model (app.model.levels.raid10_copy_sets, after
drivers/md/raid10.c ``__raid10_find_phys``); ppl from drivers/md/raid5-ppl.c (RAID-5 only: the
partial parity of each write is logged in the members' metadata area, and a bitmap cannot be used
with it); the journal from raid5-cache.c (every write goes to the journal device first);
``group_thread_cnt`` from raid5.c (``raid5_store_group_thread_cnt``: worker threads that handle
stripes beside raid5d, default 0).
"""

from __future__ import annotations

from itertools import combinations

from app.model import Machine, levels
from app.plans.builders.expectations import expectations

OVERPROVISION = "7–12 %"
FAST_MEMBERS_FOR_THREADS = 4  # parity arrays of this many SSD/NVMe members get the thread hint


def two_failures_survived(n: int, layout: str | None) -> tuple[int, int]:
    """(two-member failures the RAID-10 survives, all two-member failures) for ``n`` members."""
    sets = levels.raid10_copy_sets(n, layout)
    pairs = list(combinations(range(n), 2))
    ok = sum(1 for p in pairs if not any(s <= set(p) for s in sets))
    return ok, len(pairs)


def raid10_layouts(n: int, chosen: str | None) -> str:
    parts = []
    for lay in ("n2", "f2", "o2"):
        if levels.raid10_copies(lay) > n:
            continue
        ok, total = two_failures_survived(n, lay)
        parts.append(f"{lay} survives {ok} of {total}")
    return (
        "RAID-10 layout: n2 (near, mdadm's default) reads and writes like RAID-1+0; f2 (far) "
        "and o2 (offset) stripe reads over all members (faster large reads, for one reader "
        "too) but writes pay extra seeks on rotating disks (o2 fewer than f2). Two members "
        f"failing at once on these {n}: " + ", ".join(parts) + f"; this plan: {chosen or 'n2'}"
    )


def member_preparation(machine: Machine, devices: tuple[str, ...]) -> str:
    ssd = any((d := machine.disk(x)) is not None and d.is_ssd for x in devices)
    text = (
        "members: partitions should start on 1 MiB boundaries (2048 sectors; parted -a optimal "
        "with MiB units, sgdisk's default)"
    )
    if ssd:
        text += (
            f"; on SSDs leave {OVERPROVISION} of each unallocated (spare area keeps sustained "
            "writes steady); discarding the members first (blkdiscard) makes them empty, and "
            "where they read back zeros after a discard (SATA 'Deterministic read ZEROs after "
            "TRIM', NVMe DLFEAT) --assume-clean can then skip the initial sync, which "
            "otherwise writes whole members"
        )
    return text


def write_hole(level: str) -> str | None:
    if level not in levels.PARITY:
        return None
    ppl = (
        "--consistency-policy=ppl (RAID-5 only: each write also logs its partial parity in the "
        "metadata area, no extra device, costs write speed, and excludes a bitmap)"
        if level == "raid5"
        else "(ppl exists for RAID-5 only)"
    )
    return (
        f"write hole: a crash in the middle of a write can leave a stripe's parity out of step "
        "with its data; if a member then fails, that stripe rebuilds wrong. md's remedies: "
        f"{ppl}, or a journal device (--write-journal, a fast, ideally mirrored SSD: every write "
        "goes to it first, so writes cost a second write and the journal's speed caps them). "
        "Without either, a UPS and a clean shutdown are the protection"
    )


def parity_threads(machine: Machine, level: str, devices: tuple[str, ...]) -> str | None:
    if level not in levels.PARITY or len(devices) < FAST_MEMBERS_FOR_THREADS:
        return None
    fast = [x for x in devices if (d := machine.disk(x)) is not None and d.is_ssd]
    if len(fast) < FAST_MEMBERS_FOR_THREADS:
        return None
    return (
        f"{len(fast)} fast members: one md thread computes parity by default "
        "(md/group_thread_cnt = 0); on many SSD/NVMe members it can be the limit. After "
        "creating, try echo 4 > /sys/block/mdX/md/group_thread_cnt and measure"
    )


PARITY_DISCARD = (
    "md RAID-4/5/6 passes discards only with the raid456 module parameter "
    "devices_handle_discard_safely=Y, which is safe only if every member returns zeroes for "
    "discarded blocks (deterministic read zero after TRIM)"
)


def parity_discards(machine: Machine, level: str, devices: tuple[str, ...]) -> str | None:
    """Parity RAID on SSDs: fstrim from above stops at the array (raid5.c sets
    max_discard_sectors only when devices_handle_discard_safely is on)."""
    if level not in levels.PARITY:
        return None
    if not any((d := machine.disk(x)) is not None and d.is_ssd for x in devices):
        return None
    return (
        "discards: fstrim on a filesystem above this array will not reach the SSDs: "
        f"{PARITY_DISCARD}. Without it the SSDs treat deleted blocks as live data (more write "
        "amplification, slower writes as the array fills); RAID-1/10 pass discards on"
    )


RAID0_WARNING = (
    "RAID-0 has no redundancy: when any one member fails, all data on the array is lost; "
    "use it only for data that can be recreated"
)


def guidance(
    machine: Machine,
    level: str,
    devices: tuple[str, ...],
    layout: str | None,
    chunk: int | None,
) -> tuple[list[str], list[str]]:
    """(notes, warnings) for a create plan."""
    notes: list[str] = []
    warnings: list[str] = []
    n = len(devices)
    if level == "raid10":
        notes.append(raid10_layouts(n, layout))
    notes += [f"expect: {t}" for t in expectations(level, n, layout, chunk)]
    if level in levels.STRIPED:
        notes.append(
            "measure before you choose: raidman plan benchmark --devices "
            f"{','.join(devices)} --chunks 32K,512K (overwrites them: run it before the array "
            "holds data), then create with --chunk-for random-small|sequential-large|mixed"
        )
    notes.append(member_preparation(machine, devices))
    for text in (
        write_hole(level),
        parity_threads(machine, level, devices),
        parity_discards(machine, level, devices),
    ):
        if text is not None:
            notes.append(text)
    if level == "raid0":
        warnings.append(RAID0_WARNING)
    return notes, warnings
