"""The chunk benchmarks kept in the state database, read back for choosing (the create plan's
``--chunk-for``; a create wizard can pre-select the same)."""

from __future__ import annotations

from collections.abc import Iterable

from app.plans.benchmark import best_chunk, result_from_json
from app.wear.snapshots import SnapshotStore


def winning_chunk(store: SnapshotStore, devices: Iterable[str], workload: str) -> int | None:
    """The chunk that won ``workload`` in the newest kept benchmark of exactly ``devices``."""
    want = {d.removeprefix("/dev/") for d in devices}
    for doc in store.benchmarks():
        r = result_from_json(doc)
        if r is not None and set(r.devices) == want:
            chunk = best_chunk(r, workload)
            if chunk is not None:
                return chunk
    return None
