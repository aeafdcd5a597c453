"""md alerts (article 001, /work/shared/seeds/001_*.txt): "Достаточно например просто мыло
указать в конфиге mdadm и он пришлет вам письмо" — a mail address in mdadm.conf and the monitor
running — and "Рекоменую протестировать перед использованием: mdadm --monitor -1 -m ... -t"."""

from __future__ import annotations

from dataclasses import replace

from app.parsers.mdadm import parse_scan
from app.rules import AuditInputs, Finding, audit
from app.rules.alerts import alert_targets
from tests.rules.machines import Stack, conf_text

TEST_ALERT = ("mdadm", "--monitor", "--scan", "--oneshot", "--test")


def _inputs(conf: str | None, monitor: str | None = "active") -> AuditInputs:
    return AuditInputs(
        mdadm_conf=parse_scan(conf) if conf is not None else (),
        mdadm_conf_path="/etc/mdadm/mdadm.conf" if conf is not None else None,
        mdadm_conf_text=conf,
        mdmonitor=monitor,
    )


def _codes(inputs: AuditInputs) -> dict[str, Finding]:
    return {f.code: f for f in audit(Stack().machine(), inputs) if f.code.startswith("md-")}


def test_alert_targets_parse_abbreviations_and_comments() -> None:
    assert alert_targets("MAILADDR root\n") == {"MAILADDR": "root"}
    assert alert_targets("mail admin@example.org\nprog /usr/local/bin/md-alert\n") == {
        "MAILADDR": "admin@example.org",
        "PROGRAM": "/usr/local/bin/md-alert",
    }
    assert alert_targets("# MAILADDR root\nMAILADDR\n   MAILADDR indented\n") == {}


def test_no_mailaddr_is_a_warning_with_a_test_alert_plan() -> None:
    conf = conf_text().replace("MAILADDR root\n", "")
    f = _codes(_inputs(conf))["md-no-alert-address"]
    assert f.severity == "warning" and "unnoticed until a second failure" in f.detail
    assert f.fix is not None
    steps = f.fix.steps
    assert steps[0].argv == ("tee", "-a", "/etc/mdadm/mdadm.conf")
    assert steps[0].stdin == "MAILADDR root\n"
    assert steps[-1].argv == TEST_ALERT == ("mdadm", "--monitor", "--scan", "--oneshot", "--test")
    assert "md-no-alert-address" not in _codes(_inputs(conf_text()))
    assert "md-no-alert-address" in _codes(_inputs(None))  # no mdadm.conf at all


def test_monitor_not_running_is_a_warning_and_unknown_is_silent() -> None:
    f = _codes(_inputs(conf_text(), "inactive"))["md-monitor-inactive"]
    assert f.fix is not None
    steps = f.fix.steps
    assert steps[0].argv == ("systemctl", "enable", "--now", "mdmonitor.service")
    assert steps[1].argv == TEST_ALERT
    assert "md-monitor-inactive" not in _codes(_inputs(conf_text(), None))
    assert "md-monitor-inactive" not in _codes(_inputs(conf_text(), "active"))


def test_arrays_without_redundancy_need_no_alerts() -> None:
    m = Stack(level="raid0", layout=None).machine()
    inputs = replace(_inputs(None, "inactive"))
    assert not [
        f for f in audit(m, inputs) if f.code in ("md-no-alert-address", "md-monitor-inactive")
    ]
