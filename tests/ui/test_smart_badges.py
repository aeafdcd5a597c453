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
        await wait_for(pilot, lambda: "sdb" in app.hostview.smart_seen, timeout=10)
        await wait_for(
            pilot,
            lambda: any(f.code == "smart-failed" and f.device == "sdb" for f in app.findings),
            timeout=10,
        )
        assert app.storage_tree._badges.get("sdb") == "error"
        # the healthy disks get no SMART finding
        smart = {f.device for f in app.findings if f.code.startswith("smart-")}
        assert "sdc" not in smart and "sdd" not in smart, smart


async def test_a_failed_self_test_is_marked_on_the_disk_itself() -> None:
    """raid6-wd's sdb: its newest self-test ended "Completed: read failure" (the scenario's
    log); the badge says only "an error", the label says which: ``self-test✖`` after the size,
    before the tags and the model (what a narrow tree cuts first). The other disks passed."""
    backend = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0.05)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await wait_for(
            pilot,
            lambda: any(f.code == "smart-selftest-failed" for f in app.findings),
            timeout=10,
        )
        await pilot.pause()
        sdb = app.storage_tree.label_for("dev:sdb")
        assert sdb is not None
        assert sdb.plain.startswith("✖ sdb") and "  self-test✖  hdd" in sdb.plain, sdb.plain
        sdc = app.storage_tree.label_for("dev:sdc")
        assert sdc is not None and "self-test" not in sdc.plain


def test_a_new_self_test_result_re_audits() -> None:
    """The SMART worker re-audits only when the verdict changes (workers.smart_verdict): a
    self-test that finished failing since the last reading must change it, or the tree's mark
    would wait for the next audit cadence."""
    from app.model.smart import SelfTest, SmartReading
    from app.ui.workers import smart_verdict

    passed = SelfTest("Short offline", "Completed without error", True, 100)
    failed = SelfTest("Short offline", "Completed: read failure", False, 102, 1234)
    before = SmartReading("sdb", True, health="PASSED", self_tests=(passed,))
    after = SmartReading("sdb", True, health="PASSED", self_tests=(failed, passed))
    assert smart_verdict(before) != smart_verdict(after)
    running = SmartReading("sdb", True, health="PASSED", self_tests=(failed, passed), taken_at=9)
    assert smart_verdict(after) == smart_verdict(running)  # a later reading, same verdict
