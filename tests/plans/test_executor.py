"""The executor: order, stop at first failure, 127, dry-run/read-only, audit log, events,
the allowlist, and the audit entries written before each step starts."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from app.backend import CommandResult
from app.plans.audit_log import AuditLog
from app.plans.executor import StepEvent, execute
from app.plans.ops import OpError
from app.plans.plan import Plan, Step
from tests.plans.fakes import FakeBackend, blank_machine

CREATE = (
    "mdadm",
    "--create",
    "/dev/md/127",
    "--level=1",
    "--raid-devices=2",
    "--run",
    "/dev/nvme0n1",
    "/dev/nvme1n1",
)


def _plan() -> Plan:
    return Plan(
        title="three steps",
        steps=(
            Step.decode(CREATE, "create", destructive=True),
            Step.decode(("pvcreate", "/dev/md/127"), "pv", destructive=True),
            Step.decode(("tee", "/sys/block/md127/md/sync_action"), "check", stdin="check\n"),
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
        (CREATE, None),
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
    # one entry before each step starts, one when it ends
    assert [(e.event, e.step) for e in entries] == [
        ("started", 1),
        ("executed", 1),
        ("started", 2),
        ("executed", 2),
        ("started", 3),
        ("executed", 3),
    ]
    assert [e.argv for e in entries] == [s.argv for s in _plan().steps for _ in (1, 2)]
    assert all(e.exit_code == 0 for e in entries if e.event == "executed")
    assert all(e.forced == ("signatures",) and e.plan == "three steps" for e in entries)
    assert all(e.user for e in entries)
    assert len({e.run for e in entries}) == 1 and entries[0].run
    assert entries[0].digest == _plan().digest
    # the value written through stdin is in the log
    assert entries[4].stdin == "check\n"


def test_stops_at_first_failure_rest_not_run(audit: AuditLog) -> None:
    be = FakeBackend(blank_machine())
    be.fail_when("pvcreate", 5, stderr="  Device /dev/md/127 excluded by a filter.\n")
    rep = execute(_plan(), be, audit=audit)
    assert not rep.ok
    assert [o.status for o in rep.outcomes] == ["ok", "failed", "not-run"]
    f = rep.failed
    assert f is not None and f.index == 1 and f.exit_code == 5
    assert "excluded by a filter" in f.stderr and "exited with 5" in f.message
    assert be.argvs == [CREATE, ("pvcreate", "/dev/md/127")]
    done = [e for e in audit.read_entries() if e.event == "executed"]
    assert [e.exit_code for e in done] == [0, 5]
    assert done[1].stderr_tail == "  Device /dev/md/127 excluded by a filter."
    assert "step 2 of 3 failed" in rep.summary() and "1 not run" in rep.summary()


def test_missing_program_is_a_clear_failure(audit: AuditLog) -> None:
    be = FakeBackend(blank_machine())
    be.fail_when("mdadm", 127, stderr="mdadm: not found")
    rep = execute(_plan(), be, audit=audit)
    assert [o.status for o in rep.outcomes] == ["failed", "not-run", "not-run"]
    assert rep.outcomes[0].message.startswith("mdadm: program not found (exit 127)")


def test_backend_exception_never_escapes(audit: AuditLog) -> None:
    be = FakeBackend(blank_machine())

    def boom(argv: tuple[str, ...], stdin: str | None) -> CommandResult | None:
        raise OSError("device vanished")

    be.responders.append(boom)
    rep = execute(_plan(), be, audit=audit)
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
    line = "ARRAY /dev/md/127 metadata=1.2 name=test:127 UUID=3aaf6c4e:4e6fe9d5:9bb0d6a3:2f6c1d0e\n"
    be.fail_when("mdadm", 0, stdout=line)
    plan = Plan(
        "conf",
        (
            Step.decode(
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
    started, ended = audit.read_entries()
    assert started.event == "started" and started.stdin_from == plan.steps[0].stdin_from
    # the value that was piped in is logged when the step ends
    assert ended.event == "executed" and ended.stdin == line
    assert plan.steps[0].shell() == (
        "mdadm --detail --brief /dev/md/127 | tee -a /etc/mdadm/mdadm.conf"
    )


def test_a_piped_mdadm_conf_line_that_is_not_an_array_line_is_not_appended(
    audit: AuditLog,
) -> None:
    """Issue 23 item 11: the ARRAY line mdadm prints carries the array's name from a disk's
    superblock; a name that smuggles in a second line (a PROGRAM to run as root on every md
    event) never reaches mdadm.conf."""
    be = FakeBackend(blank_machine())
    uuid = "3aaf6c4e:4e6fe9d5:9bb0d6a3:2f6c1d0e"
    be.fail_when("mdadm", 0, stdout=f"ARRAY /dev/md/127 name=x UUID={uuid}\nPROGRAM /tmp/evil\n")
    plan = Plan(
        "conf",
        (
            Step.decode(
                ("tee", "-a", "/etc/mdadm/mdadm.conf"),
                "append",
                stdin_from=("mdadm", "--detail", "--brief", "/dev/md/127"),
            ),
        ),
    )
    rep = execute(plan, be, audit=audit)
    assert not rep.ok and "PROGRAM /tmp/evil" in rep.outcomes[0].message
    assert [a[0] for a in be.argvs] == ["mdadm"]  # tee never ran


def test_failing_producer_fails_the_step_without_running_it(audit: AuditLog) -> None:
    be = FakeBackend(blank_machine())
    be.fail_when("mdadm", 1, stderr="mdadm: cannot open /dev/md/127")
    producer = ("mdadm", "--detail", "--brief", "/dev/md/127")
    plan = Plan(
        "conf",
        (Step.decode(("tee", "-a", "/etc/mdadm/mdadm.conf"), "append", stdin_from=producer),),
    )
    rep = execute(plan, be, audit=audit)
    assert rep.outcomes[0].status == "failed"
    assert be.argvs == [producer]
    assert "feeding its input" in rep.outcomes[0].message


def test_unwritable_audit_log_refuses_before_anything_runs(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    audit = AuditLog(blocker / "audit.log")  # parent is a file: mkdir fails, even for root
    be = FakeBackend(blank_machine())
    rep = execute(_plan(), be, audit=audit)
    assert be.calls == [] and not rep.ok
    assert rep.refused is not None and "audit log cannot be written" in rep.refused
    assert all(o.status == "not-run" for o in rep.outcomes)


def test_symlink_at_the_log_is_refused_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    (tmp_path / "audit.log").symlink_to(victim)
    be = FakeBackend(blank_machine())
    rep = execute(_plan(), be, audit=AuditLog(tmp_path / "audit.log"))
    assert be.calls == [] and rep.refused is not None and "symlink" in rep.refused
    assert victim.read_text() == "keep\n"


def test_log_file_is_private(audit: AuditLog) -> None:
    assert execute(_plan(), FakeBackend(blank_machine()), audit=audit).ok
    assert stat.S_IMODE(os.stat(audit.path).st_mode) == 0o600


def test_started_entry_is_on_disk_before_the_program_runs(audit: AuditLog) -> None:
    be = FakeBackend(blank_machine())
    seen: list[list[tuple[str, int | None]]] = []

    def look(argv: tuple[str, ...], stdin: str | None) -> CommandResult | None:
        seen.append([(e.event, e.step) for e in audit.read_entries()])
        return None

    be.responders.append(look)
    assert execute(_plan(), be, audit=audit).ok
    assert seen[0] == [("started", 1)]  # a step killed mid-way leaves its "started" entry
    assert seen[2][-1] == ("started", 3)


def test_step_whose_start_cannot_be_logged_does_not_run(audit: AuditLog, tmp_path: Path) -> None:
    be = FakeBackend(blank_machine())

    def break_log(argv: tuple[str, ...], stdin: str | None) -> CommandResult | None:
        if argv[0] == "mdadm":  # after step 1 the log becomes a symlink: O_NOFOLLOW refuses it
            audit.path.rename(tmp_path / "moved.log")
            audit.path.symlink_to(tmp_path / "moved.log")
        return None

    be.responders.append(break_log)
    rep = execute(_plan(), be, audit=audit)
    assert be.argvs == [CREATE]
    assert [o.status for o in rep.outcomes] == ["ok", "failed", "not-run"]
    assert "not started: the audit log cannot be written" in rep.outcomes[1].message
    assert rep.audit_error is not None


def test_a_step_raidman_never_plans_cannot_be_made() -> None:
    with pytest.raises(OpError, match="'sh' is not a program raidman plans"):
        Step.decode(("sh", "-c", "rm -rf /"), "oops")


def test_steps_out_of_the_order_raidman_plans_are_refused_and_logged(audit: AuditLog) -> None:
    """An fstab edit whose new text is written before the file was compared and backed up:
    each step is one raidman plans, their order is not."""
    be = FakeBackend(blank_machine())
    line = "UUID=0a1b2c3d-0000-4000-8000-00000000abcd /srv/data ext4 defaults,nofail 0 2\n"
    bad = Plan(
        "t",
        (
            *_plan().steps,
            Step.decode(("cp", "-p", "/etc/fstab", "/etc/fstab.raidman-new"), "copy"),
            Step.decode(("tee", "/etc/fstab.raidman-new"), "write", stdin=line),
            Step.decode(("mv", "/etc/fstab.raidman-new", "/etc/fstab"), "rename"),
        ),
        target="127",
    )
    rep = execute(bad, be, audit=audit)
    assert be.calls == [] and rep.refused is not None
    assert "/etc/fstab: compared first, then backed up" in rep.refused
    (entry,) = audit.read_entries()
    assert entry.event == "refused" and "/etc/fstab" in entry.reason


def test_corrupt_log_lines_come_back_as_corrupt_entries(audit: AuditLog) -> None:
    assert execute(_plan(), FakeBackend(blank_machine()), audit=audit).ok
    with audit.path.open("a", encoding="utf-8") as fh:
        fh.write("not json\n")
        fh.write(json.dumps({"event": "executed", "ts": "yesterday"}) + "\n")
        fh.write(json.dumps({"event": "executed", "ts": 1, "argv": [1, 2]}) + "\n")
        fh.write(json.dumps([1, 2]) + "\n")
        fh.write('{"event": "executed", "ts": 1e999}\n')
    entries = audit.read_entries()
    assert [e.event for e in entries[6:]] == ["corrupt"] * 5
    assert entries[6].raw == "not json"


def test_plan_json_roundtrip_keeps_stdin_from_and_notes() -> None:
    p = Plan(
        "t",
        (
            Step.decode(
                ("tee", "-a", "/etc/mdadm/mdadm.conf"),
                "w",
                stdin_from=("mdadm", "--detail", "--brief", "/dev/md/1"),
            ),
        ),
        notes=("n1",),
    )
    q = Plan.from_json(p.to_json())
    assert q.steps == p.steps and q.notes == ("n1",)


def test_audit_log_location_follows_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from app.paths import state_dir
    from app.plans.audit_log import default_path

    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "s"))
    assert default_path() == tmp_path / "s" / "audit.log"
    monkeypatch.delenv("RAIDMAN_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "x"))
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    assert default_path() == tmp_path / "x" / "raidman" / "audit.log" == state_dir() / "audit.log"
    monkeypatch.setattr("os.geteuid", lambda: 0)
    assert str(default_path()) == "/var/log/raidman/audit.log"
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "s"))  # root too: the env wins
    assert default_path() == tmp_path / "s" / "audit.log"
