"""The create wizard's mdadm.conf step and the next audit agree (issue 24 item 9: the step
succeeded and the audit then said "not listed in mdadm.conf"): the plan appends where the
audit reads (app.plans.shapes.MDADM_CONF), and the ARRAY line it appends carries the UUID the
audit compares with."""

from __future__ import annotations

from pathlib import Path

from app.plans.audit_log import AuditLog
from app.plans.builders.create_array import CreateArrayParams, build_create_array
from app.plans.executor import execute
from app.report import report_findings
from backends.simulated import SimClock, SimulatedBackend


def test_conf_step_satisfies_the_audit(tmp_path: Path) -> None:
    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    conf = be.read_text("/etc/mdadm/mdadm.conf")
    scan = be.run(["mdadm", "--detail", "--scan"]).stdout
    params = CreateArrayParams(
        level="5", devices=("nvme0n1", "nvme1n1", "nvme2n1"), update_conf=True
    )
    plan = build_create_array(be.probe(), params, current_conf=conf, current_scan=scan)
    report = execute(plan, be, audit=AuditLog(tmp_path / "audit.log"))
    assert [o.status for o in report.outcomes] == ["ok", "ok"]
    m = be.probe()
    (a,) = m.arrays
    codes = {(f.code, f.device) for f in report_findings(be, m, {}, None)}
    assert ("md-not-in-mdadm-conf", a.name) not in codes
    # and without the step the audit does say it (the test can fail)
    be2 = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    plan2 = build_create_array(
        be2.probe(),
        CreateArrayParams(level="5", devices=("nvme0n1", "nvme1n1", "nvme2n1")),
    )
    execute(plan2, be2, audit=AuditLog(tmp_path / "audit2.log"))
    m2 = be2.probe()
    codes2 = {(f.code, f.device) for f in report_findings(be2, m2, {}, None)}
    assert ("md-not-in-mdadm-conf", m2.arrays[0].name) in codes2
