"""Issue 40: a qualify plan run through the executor on the simulator, judged into a verdict per
serial: passed, failed (a zone's verify, a self-test), outliers (within the disk, against its
model's kept verdicts, a latency no disk of its kind has), kept and read back by serial."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.plans.audit_log import AuditLog
from app.plans.disk_plans import qualify_plan
from app.plans.executor import execute
from app.plans.guards.identity import record_disks
from app.plans.qualify_store import every_latest, keep, keep_run, latest, verdict_dir
from app.plans.qualify_verdict import Verdict
from backends.simulated import SimClock, SimulatedBackend


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "state"))


def _qualify(be: SimulatedBackend, disk: str, tmp_path: Path, zones: int = 4) -> list[str]:
    m = be.probe()
    plan = record_disks(qualify_plan(m, be, disk, zones=zones), m)
    report = execute(plan, be, audit=AuditLog(tmp_path / "audit.log"))
    return keep_run(plan, report, be, None)


def test_a_healthy_disk_passes_and_its_verdict_is_kept_by_serial(tmp_path: Path) -> None:
    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    lines = _qualify(be, "nvme0n1", tmp_path)
    assert lines[1].startswith("  passed: nvme0n1 (Samsung SSD 970 EVO Plus 1TB, S4EWNX0R512300K)")
    v = latest("S4EWNX0R512300K", None)
    assert v is not None and v.passed and len(v.zones) == 4 and not v.outliers
    assert v.self_tests == ("short: passed (Completed without error)",
                            "long: passed (Completed without error)")  # fmt: skip
    assert v.bytes_written == sum(z.size for z in v.zones) and v.bad_sectors_after == 0
    # the disk renamed later is found by its serial
    assert latest("S4EWNX0R512300K", "any-wwn") is not None


def test_a_zone_that_fails_its_verify_fails_the_verdict(tmp_path: Path) -> None:
    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    size = be.state.disks["nvme1n1"].size_bytes
    be.state.disks["nvme1n1"].bad_region = (size // 2, size // 2 + (1 << 20))
    _qualify(be, "nvme1n1", tmp_path)
    v = latest(be.state.disks["nvme1n1"].serial, None)
    assert v is not None and not v.passed and v.word == "FAILED"
    assert any("surface test failed" in r and "bad magic header" in r for r in v.reasons)
    assert any("did not finish" in r for r in v.reasons)  # the executor stopped at the zone


def test_a_failed_self_test_fails_the_verdict_with_its_lba(tmp_path: Path) -> None:
    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    be.state.disks["nvme2n1"].smart.fail_test_at_lba = 123456
    _qualify(be, "nvme2n1", tmp_path)
    v = latest(be.state.disks["nvme2n1"].serial, None)
    assert v is not None and not v.passed
    assert any("self-test ended 'Completed: read failure' at LBA 123456" in r for r in v.reasons)


def test_latency_outliers_against_its_kind_and_its_model(tmp_path: Path) -> None:
    """The case of openfoodfacts-infrastructure PR#520: a new disk at 140 ms write latency made
    one rebuild take months. Its verdict names the latency against what its kind takes and
    against the kept verdicts of its model."""
    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    _qualify(be, "nvme0n1", tmp_path)
    _qualify(be, "nvme1n1", tmp_path)
    be.state.disks["nvme3n1"].write_latency_ms = 140.0
    lines = _qualify(be, "nvme3n1", tmp_path)
    v = latest(be.state.disks["nvme3n1"].serial, None)
    assert v is not None and v.passed and v.word == "passed with outliers"
    text = " ".join(v.outliers)
    assert "154.0 ms: over 20 ms" in text  # its kind (an SSD)
    assert "its model's kept verdicts (Samsung SSD 970 EVO Plus 1TB)" in text
    assert any(line.startswith("  outlier: ") for line in lines)


def test_a_verdict_file_that_is_not_ours_is_skipped(tmp_path: Path) -> None:
    d = verdict_dir()
    d.mkdir(parents=True, mode=0o700)
    (d / "X1.json").write_text('[{"passed": "yes"}, 3, "x"]')
    (d / "X1.json").chmod(0o600)
    assert latest("X1", None) is None and every_latest() == []
    v = Verdict("sdz", "X1", None, "M", 1 << 30, False, 1.0, True)
    keep(v)
    assert latest("X1", None) == v
    assert json.loads((d / "X1.json").read_text())[-1]["serial"] == "X1"
