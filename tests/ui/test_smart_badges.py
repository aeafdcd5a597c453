"""Issue 12, "SMART as findings with tree badges": the TUI's audit judges SMART from the readings
the live session already takes (never running smartctl itself), so a disk whose health is FAILED
gets its finding and an error badge in the tree, as in ``raidman report``. Simulated scenario
raid6-wd (seed 001: a RAID-6 of five WD Red whose sdb failed, 1,816 reallocated sectors)."""

from __future__ import annotations

from app.ui.app import RaidmanApp
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready


async def test_smart_failed_disk_has_its_finding_and_an_error_badge() -> None:
    backend = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0.05)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_ready(pilot)
        # the session reads SMART of every disk when first seen; the audit follows the readings
        await wait_for(pilot, lambda: "sdb" in app._smart_seen, timeout=10)
        await wait_for(
            pilot,
            lambda: any(f.code == "smart-failed" and f.device == "sdb" for f in app.findings),
            timeout=10,
        )
        assert app.storage_tree._badges.get("sdb") == "error"
        # the healthy disks get no SMART finding
        smart = {f.device for f in app.findings if f.code.startswith("smart-")}
        assert "sdc" not in smart and "sdd" not in smart, smart
