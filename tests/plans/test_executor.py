"""The executor: order, stop at first failure, 127, dry-run/read-only, audit log, events."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.plans.audit_log import AuditLog
from app.plans.executor import StepEvent, execute
from app.plans.plan import Plan, Step
from backends.base import CommandResult
from tests.plans.fakes import FakeBackend, blank_machine


def _plan() -> Plan:
    return Plan(
        title="three steps",
        steps=(
            Step(("mdadm", "--create", "/dev/md/127"), "create", destructive=True),
            Step(("pvcreate", "/dev/md/127"), "pv", destructive=True),
            Step(("tee", "/sys/block/md127/md/sync_action"), "check", stdin="check\n"),
        ),
        target="127",
    )


@pytest.fixture
def audit(tmp_path: Path) -> AuditLog:
    return AuditLog(tmp_path / "audit.log")


def test_runs_all_steps_in_order_with_stdin_and_audits_each(audit: AuditLog) -> None:
    be = FakeBackend(blank_machine())
    events: list[StepEvent] = []
    rep = execute(_plan(), be, audit=audit, on_event=events.append, forced=("signatures",))
    assert rep.ok and rep.refused is None
    assert be.calls == [
        (("mdadm", "--create", "/dev/md/127"), None),
        (("pvcreate", "/dev/md/127"), None),
        (("tee", "/sys/block/md127/md/sync_action"), "check\n"),
    ]
    assert [(e.kind, e.index, e.status) for e in events] == [
        ("started", 0, None),
        ("finished", 0, "ok"),
        ("started", 1, None),
        ("finished", 1, "ok"),
        ("started", 2, None),
        ("finished", 2, "ok"),
    ]
    entries = audit.read_entries()
    assert [e.argv for e in entries] == [s.argv for s in _plan().steps]
    assert all(e.event == "executed" and e.exit_code == 0 for e in entries)
    assert all(e.forced == ("signatures",) and e.plan == "three steps" for e in entries)
    assert all(e.user for e in entries)


def test_stops_at_first_failure_rest_not_run(audit: AuditLog) -> None:
    be = FakeBackend(blank_machine())
    be.fail_when("pvcreate", 5, stderr="  Device /dev/md/127 excluded by a filter.\n")
    rep = execute(_plan(), be, audit=audit)
    assert not rep.ok
    assert [o.status for o in rep.outcomes] == ["ok", "failed", "not-run"]
    f = rep.failed
    assert f is not None and f.index == 1 and f.exit_code == 5
    assert "excluded by a filter" in f.stderr and "exited with 5" in f.message
    assert be.argvs == [("mdadm", "--create", "/dev/md/127"), ("pvcreate", "/dev/md/127")]
    assert [e.exit_code for e in audit.read_entries()] == [0, 5]
    assert "step 2 of 3 failed" in rep.summary() and "1 not run" in rep.summary()


def test_missing_program_is_a_clear_failure() -> None:
    be = FakeBackend(blank_machine())
    be.fail_when("mdadm", 127, stderr="mdadm: not found")
    rep = execute(_plan(), be)
    assert [o.status for o in rep.outcomes] == ["failed", "not-run", "not-run"]
    assert rep.outcomes[0].message.startswith("mdadm: program not found (exit 127)")


def test_backend_exception_never_escapes() -> None:
    be = FakeBackend(blank_machine())

    def boom(argv: tuple[str, ...], stdin: str | None) -> CommandResult | None:
        raise OSError("device vanished")

    be.responders.append(boom)
    rep = execute(_plan(), be)
    assert rep.outcomes[0].status == "failed"
    assert "device vanished" in rep.outcomes[0].stderr


def test_dry_run_executes_nothing_and_logs_nothing(audit: AuditLog) -> None:
    be = FakeBackend(blank_machine())
    rep = execute(_plan(), be, dry_run=True, audit=audit)
    assert be.calls == []
    assert rep.refused and "dry run" in rep.refused and not rep.ok
    assert all(o.status == "not-run" for o in rep.outcomes)
    assert audit.read_entries() == []


def test_read_only_executes_nothing_and_records_the_refusal(audit: AuditLog) -> None:
    be = FakeBackend(blank_machine(), read_only="not root")
    events: list[StepEvent] = []
    rep = execute(_plan(), be, audit=audit, on_event=events.append)
    assert be.calls == [] and events == []
    assert rep.refused == "read-only: not root"
    entries = audit.read_entries()
    assert [e.event for e in entries] == ["refused"]
    assert not [e for e in entries if e.event == "executed"]
    assert entries[0].reason == "read-only: not root"


def test_stdin_from_pipes_producer_stdout_into_the_step(audit: AuditLog) -> None:
    be = FakeBackend(blank_machine())
    line = "ARRAY /dev/md/127 metadata=1.2 name=test:127 UUID=aa:bb:cc:dd\n"
    be.fail_when("mdadm", 0, stdout=line)
    plan = Plan(
        "conf",
        (
            Step(
                ("tee", "-a", "/etc/mdadm/mdadm.conf"),
                "append",
                stdin_from=("mdadm", "--detail", "--brief", "/dev/md/127"),
            ),
        ),
    )
    rep = execute(plan, be, audit=audit)
    assert rep.ok
    assert be.calls == [
        (("mdadm", "--detail", "--brief", "/dev/md/127"), None),
        (("tee", "-a", "/etc/mdadm/mdadm.conf"), line),
    ]
    assert [e.argv[0] for e in audit.read_entries()] == ["mdadm", "tee"]
    assert plan.steps[0].shell() == (
        "mdadm --detail --brief /dev/md/127 | tee -a /etc/mdadm/mdadm.conf"
    )


def test_failing_producer_fails_the_step_without_running_it() -> None:
    be = FakeBackend(blank_machine())
    be.fail_when("mdadm", 1, stderr="mdadm: cannot open /dev/md/127")
    plan = Plan(
        "conf", (Step(("tee", "-a", "/x"), "append", stdin_from=("mdadm", "-Db", "/dev/md/127")),)
    )
    rep = execute(plan, be)
    assert rep.outcomes[0].status == "failed"
    assert be.argvs == [("mdadm", "-Db", "/dev/md/127")]
    assert "feeding its input" in rep.outcomes[0].message


def test_unwritable_audit_log_does_not_stop_the_run(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    audit = AuditLog(blocker / "audit.log")  # parent is a file: mkdir fails
    be = FakeBackend(blank_machine())
    rep = execute(_plan(), be, audit=audit)
    assert rep.ok and len(be.calls) == 3
    assert rep.audit_error is not None


def test_plan_json_roundtrip_keeps_stdin_from_and_notes() -> None:
    p = Plan(
        "t",
        (Step(("tee", "-a", "/x"), "w", stdin_from=("mdadm", "-Db", "/dev/md/1")),),
        notes=("n1",),
    )
    q = Plan.from_json(p.to_json())
    assert q.steps == p.steps and q.notes == ("n1",)


def test_audit_log_location_follows_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from app.plans.audit_log import default_path

    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "s"))
    assert default_path() == tmp_path / "s" / "audit.log"
    monkeypatch.delenv("RAIDMAN_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "x"))
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    assert default_path() == tmp_path / "x" / "raidman" / "audit.log"
    monkeypatch.setattr("os.geteuid", lambda: 0)
    assert str(default_path()) == "/var/log/raidman/audit.log"
