"""The syncs ``raidman monitor`` records and sends (issue 38) on the simulated machine, which
follows md: a "recover" md never ran is no sync, a re-add's short recovery is one, a scheduled
check's windows are check events with one percentage in the log, the alert and the record."""

from __future__ import annotations

import re
from pathlib import Path

from app.routine.config import RoutineConfig
from app.wear.checks import checks_of
from tests.routine.rig import Rig

NVME = ["/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1"]


def _raid10(rig: Rig) -> None:
    """A whole RAID-10 of the four blank NVMe disks with an internal bitmap, no spare."""
    r = rig.b.run(
        ["mdadm", "--create", "/dev/md0", "--run", "--level=10", "--raid-devices=4",
         "--bitmap=internal", *NVME]
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rig.b.run(["sysctl", "-w", "dev.raid.speed_limit_max=2000000"])
    rig.tick()
    rig.run(12 * 3600, step=60, until=lambda: rig.b.probe().array("md0").sync is None)  # type: ignore[union-attr]


def _syncs(rig: Rig) -> list[tuple[str, str | None]]:
    return [(e.action, e.outcome) for e in rig.store.syncs_for("md0", None)]


def test_failing_a_member_of_a_raid10_without_spare_is_no_rebuild(tmp_path: Path) -> None:
    """md_error sets MD_RECOVERY_NEEDED: sync_action reads "recover" until md_check_recovery
    finds no spare (the simulator shows that moment as the VM did); no record, no alert."""
    rig = Rig(tmp_path, "blank")
    rig.tick()
    _raid10(rig)
    before = _syncs(rig)
    said = len(rig.said("RebuildStarted")), len(rig.said("RebuildFinished")), len(rig.lines)
    r = rig.b.run(["mdadm", "/dev/md0", "--fail", "/dev/nvme3n1"])
    assert r.returncode == 0, r.stderr
    a = rig.b.sample().arrays[0]
    assert a.sync is not None and a.sync.action == "recover" and a.sync.targets == ()
    rig.tick()  # the look that sees md's moment of "recover"
    rig.run(60, step=5)
    assert (len(rig.said("RebuildStarted")), len(rig.said("RebuildFinished"))) == said[:2]
    assert [e["RAIDMAN_COMPONENT"] for e in rig.delivered("Fail")] == ["/dev/nvme3n1"]
    assert _syncs(rig) == before
    assert not any("recover" in ln for ln in rig.lines[said[2] :]), rig.lines[said[2] :]
    rig.close()


def test_a_bitmap_readd_is_one_recovery_with_its_bytes(tmp_path: Path) -> None:
    rig = Rig(tmp_path, "blank")
    rig.tick()
    _raid10(rig)
    n = len(_syncs(rig))
    for argv in (["--fail", "/dev/nvme3n1"], ["--remove", "/dev/nvme3n1"]):
        r = rig.b.run(["mdadm", "/dev/md0", *argv])
        assert r.returncode == 0, r.stderr
        rig.tick()
    rig.run(30, step=5)
    io0 = {d.name: d.write_bytes for d in rig.b.sample().disk_io}["nvme3n1"]
    r = rig.b.run(["mdadm", "/dev/md0", "--re-add", "/dev/nvme3n1"])
    assert r.returncode == 0, r.stderr
    rig.run(3600, step=5, until=lambda: bool(rig.said("RebuildFinished")))
    wrote = {d.name: d.write_bytes for d in rig.b.sample().disk_io}["nvme3n1"] - io0
    assert wrote > 0
    assert len(rig.said("RebuildStarted")) == 1
    (ev,) = rig.store.syncs_for("md0", None)[n:]
    assert (ev.action, ev.outcome) == ("recover", "finished")
    got, own = ev.member_written(next(m for m in ev.members if m.device == "nvme3n1"))
    assert own and got is not None and abs(got - wrote) <= max(wrote // 10, 1 << 20)
    # over within a look (a few MiB at full speed): seen after the fact, timed by md's lines
    assert ev.seen_after == "nvme3n1 in sync, md0 degraded 1 -> 0", ev
    assert ev.ended_at is not None and ev.ended_at - ev.started_at < 5
    assert any("the kernel log says the recover ran" in ln for ln in rig.lines), rig.lines[-20:]
    rig.close()


def test_check_windows_send_check_events_with_one_percentage(tmp_path: Path) -> None:
    """monitor --check-every 2m --check-window 30s on a check that needs several windows:
    CheckStarted / CheckFinished per window (never RebuildStarted / RebuildFinished), the
    stop's percentage the same in the log line, the alert and the record, and the check
    numbered as the first check."""
    rig = Rig(tmp_path, "imsm", RoutineConfig(check_every_s=120, check_window_s=30))
    rig.b.state.speed_limit_max = 20_000  # many windows
    for i in range(3):  # other syncs recorded before: the check is still the first check
        sid = rig.store.start_sync("md126", "resync", ["sda"], i * 10.0)
        rig.store.end_sync(sid, i * 10.0 + 5)
    rig.tick()
    rig.run(240, step=5)
    assert rig.said("RebuildStarted") == [] and rig.said("RebuildFinished") == []
    # the next windows' events are folded in the cool-down (logged, delivered later as one)
    (started,) = rig.delivered("CheckStarted")
    assert started["RAIDMAN_MDADM_EVENT"] == "RebuildStarted"
    assert "resumed at" in rig.said("CheckStarted")[1]
    (stop,) = rig.delivered("CheckFinished")
    assert stop["RAIDMAN_OUTCOME"] == "interrupted"
    pct = stop["RAIDMAN_PERCENT"]
    assert re.fullmatch(r"\d+\.\d%", pct) and f"interrupted at {pct}" in stop["RAIDMAN_DETAIL"]
    assert any(ln.startswith("md126: check interrupted at " + pct) for ln in rig.lines)
    (rec,) = checks_of(rig.store, "md126", None)
    first = rec.windows[0]
    assert first.fraction is not None and f"{first.fraction * 100:.1f}%" == pct
    resumed = [ln for ln in rig.lines if "resumes at" in ln]
    assert resumed and all("check #1" in ln for ln in resumed), resumed
    rig.close()
