"""Quitting during the start-up SMART sweep (issue 44): the sweep is a worker reading every
disk in turn (1,000 on big), and the App's quit waited for all of them; once the App cancels
its workers the sweep stops at the next disk."""

from __future__ import annotations

from typing import Any

import pytest

import app.ui.workers as workers
from app.ui.app import RaidmanApp
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for


async def test_a_cancelled_sweep_reads_no_further_disk(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))
    taken: list[tuple[object, str]] = []  # (the sweep's worker, the disk it read)
    real = workers.take_snapshot

    def first_then_quit(backend: Any, store: Any, read: Any, *a: Any, **kw: Any) -> Any:
        worker = workers.get_current_worker()
        taken.append((worker, read.disk))
        if len(taken) == 1:  # as the App's quit does: the worker cancelled
            app.call_from_thread(worker.cancel)
        return real(backend, store, read, *a, **kw)

    monkeypatch.setattr(workers, "take_snapshot", first_then_quit)
    be = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual())
    app = RaidmanApp(be, probe_interval=0, sample_interval=1.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: bool(taken))
        first = taken[0][0]
        await wait_for(pilot, lambda: first.is_finished)  # type: ignore[attr-defined]
        assert len(be.probe().disks) > 1  # a sweep of several disks...
        assert [d for w, d in taken if w is first] == [taken[0][1]]  # ...stopped after one
