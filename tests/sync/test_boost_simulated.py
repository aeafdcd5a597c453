"""Boost on the simulated RAID-10 of seed 000: the article had raised speed_limit_max to 500000
(its 384214 → 486124 → 525478 K/sec ramp up to that limit); a boost raises it to what the four
SATA SSDs can do (a RAID-10 resync reads ~2 × 537000 KiB/s of progress), the resync speeds up,
and the limits come back when it ends."""

from __future__ import annotations

from pathlib import Path

from app.plans.audit_log import AuditLog
from app.plans.executor import execute
from app.sync.boost import BoostStore, due_restores, plan_boost_for, restore_plan
from app.sync.tracker import SyncTracker
from backends.simulated import SimClock, SimulatedBackend


def test_boost_speeds_up_the_resync_and_restores_after(tmp_path: Path) -> None:
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    tracker = SyncTracker()
    tracker.update(backend.sample())
    (view,) = tracker.views()
    assert view.action == "resync" and view.speed_kib_s == 384_214
    before = {
        p: backend.read_text(p)
        for p in ("/proc/sys/dev/raid/speed_limit_min", "/proc/sys/dev/raid/speed_limit_max")
    }

    store = BoostStore(tmp_path / "boost.json")
    machine = backend.probe()
    md127 = machine.array(view.array)
    assert md127 is not None
    plan, record = plan_boost_for(machine, backend.read_text, md127, store)
    assert [s.argv for s in plan.steps] == [("sysctl", "-w", "dev.raid.speed_limit_max=1343000")]
    store.add(record)
    report = execute(plan, backend, audit=AuditLog(tmp_path / "audit.log"))
    assert report.ok, report.summary()
    assert backend.read_text("/proc/sys/dev/raid/speed_limit_max") == "1343000\n"

    speeds = []
    for _ in range(60):
        clock.advance(1)
        tracker.update(backend.sample())
        speeds.append(tracker.views()[0].speed_kib_s or 0)
    assert speeds[0] < speeds[-1]
    assert max(speeds) > 600_000  # past the article's 500000 ceiling
    assert due_restores(store, backend.sample()) == []

    # run to the end of the resync, then restore (as the app does on the sample after it ends)
    for _ in range(2000):
        clock.advance(5)
        sample = backend.sample()
        tracker.update(sample)
        due = due_restores(store, sample)
        if due:
            break
    (rec,) = due
    assert execute(restore_plan(rec, store), backend, audit=AuditLog(tmp_path / "audit.log")).ok
    store.remove(rec.array)
    assert {p: backend.read_text(p) for p in before} == before
    (fin,) = tracker.finished
    assert fin.completed and fin.action == "resync"
