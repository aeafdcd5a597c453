"""What md can give per level and layout, said beside measured figures (the benchmark's table) and
before an array is made (the create plan), so a slow result is explained or flagged.

From the kernel's request paths:

* RAID-1 (drivers/md/raid1.c ``read_balance``): each read goes to one mirror, chosen per request;
  one sequential reader stays on one disk, so reads approach N × one disk only with at least N
  concurrent readers. Every write goes to every mirror: writes ≈ one disk.
* RAID-10 (raid10.c ``__raid10_find_phys``): near copies (n2) place a chunk's copies on
  neighbouring members: a request within one chunk is one disk's work; writes reach the data
  disks' speed only for requests over chunk × data disks (or with several writers). Far and
  offset copies stripe over all members for reads (one reader ≈ N × one disk on large reads),
  and writes pay the extra copy seeks on rotating disks.
* RAID-0: a request reaches ``ceil(size / chunk)`` members: N × one disk for requests of at least
  chunk × N, or with several jobs.
* RAID-4/5/6 (raid5.c ``handle_stripe_dirtying``): a write below a full stripe (chunk × data
  disks) is read-modify-write (or reconstruct-write): RAID-5 reads old data and parity, then
  writes both (4 I/Os for one small write), RAID-6 6; full-stripe writes reach (N − parity) × one
  disk.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from app.format import human_bytes
from app.model import levels

# a measured ratio below this share of what the level can give is flagged
FLAG_SHARE = 0.6


@dataclass(frozen=True, slots=True)
class Ceiling:
    """The most the level gives over one disk, for large requests with enough jobs."""

    read: float
    write: float


def ceiling(level: str, n: int, layout: str | None) -> Ceiling:
    lvl = level if level.startswith("raid") or level == "linear" else f"raid{level}"
    if lvl == "raid1":
        return Ceiling(float(n), 1.0)
    if lvl == "raid0":
        return Ceiling(float(n), float(n))
    if lvl == "raid10":
        copies = levels.raid10_copies(layout)
        return Ceiling(float(n), n / copies)
    if lvl in levels.PARITY:
        data = n - levels.LEVELS[lvl].parity
        return Ceiling(float(data), float(data))
    return Ceiling(1.0, 1.0)


def expectations(level: str, n: int, layout: str | None, chunk: int | None) -> list[str]:
    """Plain sentences: what to expect from this level, layout and chunk."""
    lvl = level if level.startswith("raid") else f"raid{level}"
    c = ceiling(lvl, n, layout)
    stripe = None
    if chunk and lvl in levels.STRIPED:
        dd = levels.data_disks(lvl, n, layout) or 1
        stripe = chunk * dd
    out: list[str] = []
    if lvl == "raid1":
        out.append(
            f"RAID-1 of {n}: reads reach about {n} × one disk only with {n} or more concurrent "
            "readers (each read goes to one mirror); every write goes to all mirrors, so "
            "writes stay near one disk"
        )
    elif lvl == "raid10":
        near = (layout or "n2").startswith("n")
        if near:
            out.append(
                f"RAID-10 {layout or 'n2'} of {n}: a request inside one chunk is one disk's "
                f"work; writes reach about {c.write:g} × one disk only for requests over "
                f"{human_bytes(stripe) if stripe else 'chunk × data disks'} or with several "
                f"writers; reads up to {c.read:g} × with several readers. Measured on SATA "
                "SSDs with one job, requests above that size but under about 1 MiB still "
                f"stayed well short of {c.write:g} ×; near {c.write:g} × came only from about "
                "1 MiB up"
            )
        else:
            out.append(
                f"RAID-10 {layout} of {n}: reads stripe over all {n} members (one reader with "
                f"large requests up to {n} × one disk); writes up to {c.write:g} ×, and on "
                "rotating disks each write pays the seek to its far copy"
            )
    elif lvl == "raid0":
        out.append(
            f"RAID-0 of {n}: up to {n} × one disk for requests of "
            f"{human_bytes(chunk * n) if chunk else 'chunk × members'} or more, or with several "
            "jobs; a request inside one chunk is one disk's work"
        )
    elif lvl in levels.PARITY:
        ios = 4 if lvl in ("raid4", "raid5") else 6
        out.append(
            f"{levels.label(lvl)} of {n}: full-stripe writes "
            f"({human_bytes(stripe) if stripe else 'chunk × data disks'}) reach about "
            f"{c.write:g} × one disk; a smaller write is read-modify-write ({ios} I/Os for one "
            "small write), so small random writes can be slower than one disk"
        )
    return out


def flags(
    level: str, n: int, layout: str | None, ratios: dict[tuple[str, str, int], float]
) -> Iterator[str]:
    """Measured ratios (rw, bs, numjobs) -> ratio to one disk, against the level's ceiling: a
    large-request, many-jobs figure far below it points at a shared limit."""
    c = ceiling(level, n, layout)
    for (rw, bs, jobs), ratio in sorted(ratios.items()):
        if bs != "1m" or jobs < 2:
            continue
        # reads: flagged against the data disks' share only (how many mirrors concurrent
        # readers keep busy depends on read_balance's choices, not a fixed count)
        top = c.write if "write" in rw else min(c.read, max(c.write, 2.0))
        if top >= 2 and ratio < FLAG_SHARE * top:
            yield (
                f"{rw} {bs} ×{jobs}: {ratio:.2f} × one disk where the level can give about "
                f"{top:g} ×: {n} disks give what {max(1, round(ratio))} give — look for a shared "
                "limit (controller, bus or expander bandwidth, a slow member) by measuring the "
                "disks alone at the same time"
            )
