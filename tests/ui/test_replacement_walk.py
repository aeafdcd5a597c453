"""Issue 40: the replacement, end to end, driven in the TUI at 80x24 on the simulated ``spare``
scenario (md0: RAID-1 of sda1 and sdb1, sdb counting reallocated sectors; sdc new and blank; the
three in an enclosure): its key (D, a, t) opens each wizard on the tree's selection, each preview runs what it
shows.

qualify sdc (its verdict kept by serial) → locate sdb (its bay's LED) → fail sdb1 → replace
sdb1 with sdc (the verdict in the plan; the old bay's fault LED lit) → the rebuild ends in
simulated time → check md0 → retire sdb (its serial typed) → every step in the audit log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select, SelectionList, Static

from app.plans.audit_log import AuditLog
from app.ui.app import RaidmanApp
from app.ui.screens.main import MainScreen
from app.ui.screens.plan_preview import PlanPreviewScreen
from app.ui.screens.wizards import DiskWizard, MemberWizard, SyncWizard
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import plain, preview_of, wait_for, wait_ready


async def _key(
    pilot: Pilot[None], app: RaidmanApp, key: str, screen: type, field: str, action: str
) -> Any:
    """Open a wizard with its key on the tree's selection and choose its action (the palette's
    entries open the same wizards on the same actions: tests/ui/test_palette_plans.py)."""
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, screen))
    wiz = app.screen
    if wiz.query_one(field, Select).value != action:
        wiz.query_one(field, Select).value = action
        await pilot.pause()
    return wiz


async def _run(pilot: Pilot[None], app: RaidmanApp, typed: str | None) -> PlanPreviewScreen:
    """Preview the wizard's plan, type what it asks for, run it, wait until it has run."""
    await pilot.press("ctrl+r")
    prev = await preview_of(pilot, app, timeout=20)
    assert isinstance(prev, PlanPreviewScreen)
    await wait_for(pilot, lambda: not prev.workers or all(w.is_finished for w in prev.workers))
    if typed is not None:
        field = prev.query_one("#pp-confirm", Input)
        assert field.region.y + field.region.height <= 24  # on screen at 80x24
        field.value = typed
        field.focus()
        await pilot.press("enter")
    else:
        await pilot.press("ctrl+r")
    await wait_for(pilot, lambda: prev.report is not None, timeout=20)
    assert prev.report is not None and prev.report.ok, prev.report.summary() if prev.report else ""
    return prev


async def _back_to_main(pilot: Pilot[None], app: RaidmanApp) -> None:
    for _ in range(4):
        if isinstance(app.screen, MainScreen):
            break
        await pilot.press("escape")
        await pilot.pause()
    await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))


async def test_replacement_walk_in_the_tui_at_80x24(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "state"))
    clock = SimClock.manual()
    be = SimulatedBackend.from_scenario("spare", clock=clock)
    app = RaidmanApp(be, probe_interval=0, sample_interval=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)

        # 1. qualify the new disk: D (disk actions) on the tree's disk
        app.go_to("sdc")
        await pilot.pause()
        wiz = await _key(pilot, app, "D", DiskWizard, "#dk-action", "qualify")
        assert wiz.query_one("#dk-device", Select).value == "sdc"
        prev = await _run(pilot, app, "sdc")
        kinds = [s.op.KIND for s in prev.plan.steps]
        assert kinds[:3] == ["smart-report", "self-test-captive", "self-test-captive"]
        assert kinds.count("surface-test") == 10 and kinds[-1] == "smart-report"
        result = plain(prev.query_one("#pp-result", Static))
        assert "verdict:" in result and "passed: sdc" in result, result
        kept = tmp_path / "state" / "qualified" / "S3Z9NB0K400123W.json"
        assert json.loads(kept.read_text())[-1]["passed"] is True
        await _back_to_main(pilot, app)

        # 2. locate the old disk: its bay's locate LED
        app.go_to("sdb")
        await pilot.pause()
        await _key(pilot, app, "D", DiskWizard, "#dk-action", "locate")
        prev = await _run(pilot, app, None)
        assert "bay 1 of enclosure 0:0:8:0" in prev.plan.title
        assert be.state.files["/sys/class/enclosure/0:0:8:0/Slot 01/locate"] == "1\n"
        await _back_to_main(pilot, app)

        # 3. fail sdb1 (the member actions, key a)
        app.go_to("md0")
        await pilot.pause()
        wiz = await _key(pilot, app, "a", MemberWizard, "#mb-action", "fail")
        wiz.query_one("#mb-device", Select).value = "sdb1"
        await pilot.pause()
        await _run(pilot, app, "md0")
        await _back_to_main(pilot, app)
        await wait_for(pilot, lambda: app.machine is not None and app.machine.array("md0")
                       .member("sdb1").role == "faulty")  # fmt: skip

        # 4. replace the faulty sdb1 with the qualified sdc: a rebuild onto it, not --replace
        wiz = await _key(pilot, app, "a", MemberWizard, "#mb-action", "replace")
        wiz.query_one("#mb-device", Select).value = "sdb1"
        await pilot.pause()
        wiz.query_one("#mb-new", SelectionList).select("sdc")
        await pilot.pause()
        prev = await _run(pilot, app, "sdc")
        argvs = [s.argv for s in prev.plan.steps]
        assert ("mdadm", "/dev/md0", "--remove", "/dev/sdb1") in argvs
        assert ("mdadm", "/dev/md0", "--add", "/dev/sdc") in argvs
        assert not any("--replace" in a for a in argvs)
        assert any("sdc's qualification" in n and "passed" in n for n in prev.plan.notes)
        assert be.state.files["/sys/class/enclosure/0:0:8:0/Slot 01/fault"] == "1\n"
        await _back_to_main(pilot, app)

        # 5. the rebuild ends (simulated time), then 6. check md0
        for _ in range(48):
            clock.advance(600)
            a = be.probe().array("md0")
            if a is not None and a.sync is None and not a.is_degraded:
                break
        assert a is not None and not a.is_degraded and a.member("sdc").role == "in_sync"
        app.refresh_probe()
        await wait_for(pilot, lambda: app.machine is not None
                       and not app.machine.array("md0").is_degraded)  # fmt: skip
        app.go_to("md0")
        await pilot.pause()
        await _key(pilot, app, "t", SyncWizard, "#sy-action", "check")
        await _run(pilot, app, None)
        await _back_to_main(pilot, app)

        # 7. retire the old disk: its serial typed
        app.go_to("sdb")
        await pilot.pause()
        await _key(pilot, app, "D", DiskWizard, "#dk-action", "retire")
        prev = await _run(pilot, app, "S2RBNX0J100001B")
        argvs = [s.argv for s in prev.plan.steps]
        assert ("mdadm", "--zero-superblock", "/dev/sdb1") in argvs
        assert ("wipefs", "-a", "/dev/sdb") in argvs
        assert "devices=/dev/sda1\n" in (be.state.mdadm_conf or "").replace(" ", "\n")
        assert (
            "sdb1" not in be.state.md_superblocks and be.state.disks["sdb"].partition_table is None
        )

        # 8. every step of every plan is in the audit log
        entries = AuditLog(tmp_path / "state" / "audit.log").read_entries()
        ran = [e.argv for e in entries if e.event == "executed" and e.exit_code == 0]
        assert any(a[:2] == ("smartctl", "-t") for a in ran)
        assert any(a[:1] == ("fio",) for a in ran)
        assert ("tee", "/sys/class/enclosure/0:0:8:0/Slot 01/locate") in ran
        assert ("mdadm", "/dev/md0", "--fail", "/dev/sdb1") in ran
        assert ("mdadm", "/dev/md0", "--add", "/dev/sdc") in ran
        assert ("tee", "/sys/block/md0/md/sync_action") in ran
        assert ("mdadm", "--zero-superblock", "/dev/sdb1") in ran
        assert not [e for e in entries if e.event == "executed" and e.exit_code != 0]
