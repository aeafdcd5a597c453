"""The chunk benchmarks kept in the state database, read back for choosing: the create plan's
``--chunk-for`` and the create wizard's workload field take the same choice (``choose_chunk``)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from app.plans.builders.benchmark import best_chunk, result_from_json
from app.wear.snapshots import SnapshotStore

# the workloads of WORKLOADS as the wizard names them
WORKLOAD_WORDS: dict[str, str] = {
    "random-small": "random small I/O",
    "sequential-large": "sequential large I/O",
    "mixed": "mixed I/O",
}


@dataclass(frozen=True, slots=True)
class ChunkChoice:
    """The chunk that won a workload in one kept benchmark, and which benchmark that was."""

    chunk: int  # bytes
    workload: str
    taken_at: float | None  # when the benchmark ran (epoch seconds)

    def chunk_text(self) -> str:
        """As mdadm's --chunk takes it (32K)."""
        return f"{self.chunk // 1024}K"

    def reason(self) -> str:
        date = (
            time.strftime("%Y-%m-%d", time.gmtime(self.taken_at))
            if self.taken_at is not None
            else "unknown date"
        )
        return (
            f"chunk {self.chunk_text()}: fastest for {WORKLOAD_WORDS[self.workload]} in the "
            f"benchmark of {date} on these disks"
        )


def choose_chunk(
    docs: Iterable[object], devices: Iterable[str], workload: str
) -> ChunkChoice | None:
    """The chunk that won ``workload`` in the newest of ``docs`` (kept results, newest first, as
    ``SnapshotStore.benchmarks`` returns them) measured on exactly ``devices``."""
    want = {d.removeprefix("/dev/") for d in devices}
    if not want:
        return None
    for doc in docs:
        r = result_from_json(doc)
        if r is not None and set(r.devices) == want:
            chunk = best_chunk(r, workload)
            if chunk is not None:
                return ChunkChoice(chunk, workload, r.taken_at)
    return None


def winning_chunk(store: SnapshotStore, devices: Iterable[str], workload: str) -> int | None:
    """The chunk that won ``workload`` in the newest kept benchmark of exactly ``devices``."""
    choice = choose_chunk(store.benchmarks(), devices, workload)
    return None if choice is None else choice.chunk
