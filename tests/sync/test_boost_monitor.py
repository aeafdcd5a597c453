"""`raidman monitor` puts boosted limits back when the sync ends, as the TUI does (issue 11 §7):
a boost raised from a TUI that was closed meanwhile must not leave the limits raised forever.
Seed 000's RAID-10 resync on the simulated backend, run to its end by the monitor alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.monitor import WearMonitor
from app.plans.audit_log import AuditLog
from app.plans.executor import execute
from app.sync.boost import BoostStore, plan_boost_for
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimClock, SimulatedBackend

LIMITS = ("/proc/sys/dev/raid/speed_limit_min", "/proc/sys/dev/raid/speed_limit_max")


def test_the_monitor_restores_a_boost_when_its_sync_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    before = {p: backend.read_text(p) for p in LIMITS}
    # a TUI boosted the resync (record written before the raise), then went away
    tui_store = BoostStore(tmp_path / "boost.json")
    machine = backend.probe()
    md127 = machine.array("md127")
    assert md127 is not None
    plan, record = plan_boost_for(machine, backend.read_text, md127, tui_store)
    tui_store.begin(record)
    assert execute(plan, backend, audit=AuditLog(tmp_path / "audit.log")).ok
    assert backend.read_text(LIMITS[1]) != before[LIMITS[1]]

    lines: list[str] = []
    store = SnapshotStore.open(tmp_path / "state.db")
    mon = WearMonitor(backend, store, log=lines.append, boosts=BoostStore(tmp_path / "boost.json"))
    for _ in range(3000):
        mon.tick()
        if not BoostStore(tmp_path / "boost.json").records:
            break
        clock.advance(5)
    mon.close()
    assert {p: backend.read_text(p) for p in LIMITS} == before, lines[-5:]
    assert not BoostStore(tmp_path / "boost.json").records
    assert any("boosted limits restored" in ln for ln in lines)
    # the restore went through the executor: audited like every step
    entries = AuditLog(tmp_path / "audit.log").read_entries()
    assert any(
        e.event == "executed" and "speed_limit_max" in " ".join(e.argv) for e in entries[-4:]
    )
