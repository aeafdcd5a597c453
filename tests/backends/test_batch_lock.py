"""A source that answers in batches (ssh) holds one batch: the TUI's probe worker and its 1 Hz
sample worker must not replace it under each other (found with the hosts view: a sample landing
mid-probe made the probe read the poll's answers or fall back to extra round trips)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import backends.linux as linux
from app.model import Machine
from backends.linux import LinuxBackend


class BatchingSource:
    smart = True

    """Keeps the kind of the last prefetch, as SshSource keeps its last batch."""

    def __init__(self) -> None:
        self.batch = ""
        self.mixed: list[str] = []

    def prefetch(self, kind: str) -> None:
        self.batch = kind

    def read_for(self, kind: str) -> None:
        for _ in range(20):  # a probe reads many files from its batch
            if self.batch != kind:
                self.mixed.append(f"{kind} read from the {self.batch} batch")
            time.sleep(0.002)

    def take_notes(self) -> tuple[Any, ...]:
        return ()

    def now(self) -> float:
        return 0.0

    def disk_io(self) -> tuple[Any, ...]:
        return ()


def test_a_probe_and_a_poll_never_share_the_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    src = BatchingSource()

    def probe_with_fs_info(source: BatchingSource) -> tuple[Machine, dict[str, Any]]:
        source.read_for("probe")
        return Machine(host="h", kernel="k", taken_at=0.0, is_root=True), {}

    def md_names(source: BatchingSource) -> list[str]:
        source.read_for("sample")
        return []

    monkeypatch.setattr(linux, "probe_with_fs_info", probe_with_fs_info)
    monkeypatch.setattr(linux, "md_names", md_names)
    backend = LinuxBackend(src)  # type: ignore[arg-type]

    def loop(fn: Any) -> None:
        for _ in range(5):
            fn()

    threads = [threading.Thread(target=loop, args=(f,)) for f in (backend.probe, backend.sample)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert src.mixed == []
