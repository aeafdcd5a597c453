"""The simulator's write-intent bitmap: what a re-add resyncs and what ``mdadm -X`` says.

One model for both. md keeps a chunk's bit set after a write that did not reach every member
(md-bitmap.c: ``md_bitmap_endwrite`` with ``success`` false — raid1.c/raid10.c pass
``!R1BIO_Degraded``/``!R10BIO_Degraded`` — sets ``NEEDED_MASK``; only a write that reached
every member lets the daemon clear the bit), so the in-sync members' bitmaps count the chunks
written while a member was out, and a re-add resyncs exactly those (``mdadm -X`` prints them:
mdadm bitmap.c ``ExamineBitmap``, "Bitmap : N bits (chunks), M dirty").

The simulator has no per-block writes: a member away for ``s`` seconds finds a share
``BITMAP_DIRTY_MIN + s × BITMAP_DIRTY_PER_S`` of the component dirty (a constant trickle of
foreground writes dirties it all in a day), counted from its removal (a member failed but not
removed yet: ``BITMAP_DIRTY_MIN``). A removed member's own bitmap is left as it was: 0 dirty.
"""

from __future__ import annotations

import math
from fractions import Fraction

from backends.simulated.records import SimArray
from backends.simulated.state import SimState

BITMAP_DIRTY_PER_S = Fraction(1, 86400)
BITMAP_DIRTY_MIN = Fraction(1, 1000)
BITMAP_CHUNK_KIB = 65536  # what mdstat's "bitmap:" line says (mdstat.render_array)


def dirty_fraction(since: float | None, now: float) -> Fraction:
    """The share of the component dirty for a member away since ``since`` (None: not yet)."""
    away = Fraction(max(0.0, now - since)).limit_denominator(10**6) if since is not None else 0
    return min(Fraction(1), BITMAP_DIRTY_MIN + away * BITMAP_DIRTY_PER_S)


def array_dirty_fraction(st: SimState, a: SimArray) -> Fraction:
    """What the bitmap of ``a``'s in-sync members holds dirty now: nothing while no member is
    missing; else since the earliest removal of a member still out."""
    if a.bitmap != "internal" or a.degraded() == 0:
        return Fraction(0)
    since = min((t for t, _nr in a.removed.values()), default=None)
    return dirty_fraction(since, st.t)


def examine_bitmap(st: SimState, dev: str, path: str) -> tuple[int, str, str]:
    """``mdadm -X /dev/DEV``: the bitmap on an array member (or a removed one's, as it left)."""
    a = next((x for x in st.arrays.values() if any(m.device == dev for m in x.members)), None)
    removed = next((x for x in st.arrays.values() if dev in x.removed), None)
    arr = a or removed
    if arr is None or arr.bitmap != "internal":
        return 2, "", "mdadm: invalid bitmap magic 0x0, the bitmap file appears to be corrupted\n"
    # RAID-10's bitmap counts array sectors (raid10.c: raid10_sync_request asks the bitmap for
    # raid10_find_virt(), the array address); RAID-1/4/5/6's count member sectors
    span_kib = arr.size_kib() if arr.level == "raid10" else arr.component_kib
    bits = max(1, -(-span_kib // BITMAP_CHUNK_KIB))
    frac = array_dirty_fraction(st, arr) if a is not None else Fraction(0)
    dirty = min(bits, math.ceil(frac * bits))
    size_kib = span_kib
    text = (
        f"        Filename : {path}\n"
        "           Magic : 6d746962\n"
        "         Version : 4\n"
        f"            UUID : {arr.uuid}\n"
        f"       Chunksize : {BITMAP_CHUNK_KIB // 1024} MB\n"
        "          Daemon : 5s flush period\n"
        "      Write Mode : Normal\n"
        f"       Sync Size : {size_kib} ({size_kib / 1024:.2f} MiB {size_kib * 1.024 / 1000:.2f} MB)\n"
        f"          Bitmap : {bits} bits (chunks), {dirty} dirty ({100 * dirty / bits:.1f}%)\n"
    )
    return 0, text, ""
