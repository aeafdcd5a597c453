"""What a re-add will resync, read before it runs: the array's write-intent bitmap.

md keeps a chunk's bit set after a write that did not reach every member (md-bitmap.c:
``md_bitmap_endwrite`` with ``success`` false — raid1.c/raid10.c pass it as "not degraded" —
sets ``NEEDED_MASK``, and only a write that reached every member lets the bitmap daemon clear
the bit), so while a member is out the in-sync members' bitmaps collect the chunks written
meanwhile; a re-add resyncs those chunks and nothing else. ``mdadm -X`` on an in-sync member
prints them (mdadm bitmap.c ``ExamineBitmap``: "Chunksize", "Bitmap : N bits (chunks), M dirty";
app.parsers.mdadm_bitmap): dirty bits × chunk. md's sysfs has no dirty count. The member being
re-added is not asked: its own bitmap stopped being written when it left.

``mdadm -X`` reads the bits on disk, which md clears lazily (the bitmap daemon, every "flush
period", and only while the array is not degraded): the count is what md will resync at most.
Measured in the VM: right after ``mdadm --create`` all 64 bits read dirty while md's in-memory
counters needed nothing; once clean, 16 MiB written to a RAID-10 n2 x4 with one member out read
as the chunks written, and the re-add wrote that share to the member.

Run through the backend at plan time (``raidman plan``, ``apply``, the TUI preview's workers),
never on the UI thread. Anything unreadable is unknown: the forecast keeps its range (nothing …
the whole member).
"""

from __future__ import annotations

from app.backend import Backend
from app.model import Machine
from app.parsers.mdadm_bitmap import parse_examine_bitmap
from app.plans import ops
from app.plans.outcome.sync_steps import array_paths
from app.plans.plan import Plan

MAX_ASKED = 16  # arrays whose bitmap one plan reads at most


def read_bitmap_dirty(plan: Plan, machine: Machine, backend: Backend | None) -> dict[str, int]:
    """Array → the bytes its bitmap holds dirty, for each array a step ``--re-add``s to that has
    an internal bitmap (an external bitmap file is not read: unknown)."""
    out: dict[str, int] = {}
    if backend is None:
        return out
    for a in machine.arrays:
        if len(out) >= MAX_ASKED or a.bitmap is None or a.bitmap.startswith("/"):
            continue
        paths = array_paths(machine, a.name)
        readded = {
            s.op.device.removeprefix("/dev/")
            for s in plan.steps
            if isinstance(s.op, ops.ReAddMember) and s.op.array_path in paths
        }
        if not readded:
            continue
        ask = next(
            (m.device for m in a.members if m.role == "in_sync" and m.device not in readded), None
        )
        if ask is None:
            continue
        try:
            res = backend.run(["mdadm", "-X", f"/dev/{ask}"], timeout=10)
            if res.returncode == 0:
                out[a.name] = parse_examine_bitmap(res.stdout).dirty_bytes
        except Exception:  # out of shape, or the backend failed: unknown, never an error
            continue
    return out
