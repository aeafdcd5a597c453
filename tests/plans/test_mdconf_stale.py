"""Stale mdadm.conf ARRAY lines get a plan that removes them (app/rules/md.py ``md-conf-stale``,
app/plans/builders/mdconf_edit.py): a line whose UUID no running array has and no device's superblock
carries (mdadm --examine --scan) is stale; the plan keeps a backup, stops if the file changed
since it was made (cmp), writes the file less those entries through a copy renamed into place,
and rebuilds the initramfs (it holds its own copy of mdadm.conf). On the simulated backend."""

from __future__ import annotations

from pathlib import Path

from app.plans.audit_log import AuditLog
from app.plans.builders.mdconf_edit import array_entries, build_remove_stale, without_uuids
from app.plans.executor import execute
from app.plans.guards.allowlist import argv_problem, plan_step_problems
from app.plans.ops.system_files import backup_name
from app.plans.plan import Plan, Step
from app.report import report_findings
from app.rules.finding import Finding
from backends.simulated import SimClock, SimulatedBackend

CONF = "/etc/mdadm/mdadm.conf"
GONE = "ARRAY /dev/md/old metadata=1.2 name=homeserver:old UUID=0badc0de:11112222:33334444:55556666"
GONE2 = "ARRAY /dev/md9 metadata=1.2 UUID=deadbeef:00000000:00000000:00000009"


def _with_stale(scenario: str = "raid6-wd") -> tuple[SimulatedBackend, str]:
    be = SimulatedBackend.from_scenario(scenario, clock=SimClock.manual())
    before = be.read_text(CONF)
    assert before is not None and "ARRAY" in before
    # the stale entries as an admin's file has them: one with a continuation line
    extra = f"{GONE}\n# kept: a comment\n{GONE2.split(' UUID=')[0]}\n   UUID={GONE2.split('UUID=')[1]}\n"
    assert be.run(["tee", "-a", CONF], stdin=extra).ok
    return be, before


def _finding(be: SimulatedBackend) -> Finding | None:
    found = [f for f in report_findings(be, be.probe(), {}, None) if f.code == "md-conf-stale"]
    assert len(found) <= 1
    return found[0] if found else None


def test_entries_and_their_continuation_lines() -> None:
    text = f"DEVICE partitions\n{GONE}\n# c\nARRAY /dev/md1\n  uuid=AAAAAAAA:bbbbbbbb:cccccccc:dddddddd\nMAILADDR root\n"
    entries = array_entries(text)
    assert entries == [
        ((1,), "0badc0de111122223333444455556666"),
        ((3, 4), "aaaaaaaabbbbbbbbccccccccdddddddd"),
    ]
    new, removed = without_uuids(text, ["aaaaaaaa-bbbbbbbb-cccccccc-dddddddd"])
    assert new == f"DEVICE partitions\n{GONE}\n# c\nMAILADDR root\n"
    assert removed == ["ARRAY /dev/md1", "  uuid=AAAAAAAA:bbbbbbbb:cccccccc:dddddddd"]


def test_stale_lines_are_found_and_the_plan_removes_them(tmp_path: Path) -> None:
    be, before = _with_stale()
    f = _finding(be)
    assert f is not None and f.fix is not None, "the finding links the plan"
    assert f.severity == "advice" and "lists 2 arrays that no disk carries" in f.title
    plan = f.fix
    assert plan.kind == "audit-mdadm-conf" and not plan.destructive
    backup = backup_name(CONF, be.read_text(CONF) or "")
    assert [s.argv for s in plan.steps] == [
        ("cmp", CONF, "-"),
        ("cp", "-p", CONF, backup),
        ("cp", "-p", CONF, CONF + ".raidman-new"),
        ("tee", CONF + ".raidman-new"),
        ("mv", CONF + ".raidman-new", CONF),
        ("update-initramfs", "-u"),
    ]
    assert "initramfs holds its own copy of mdadm.conf" in plan.steps[-1].why
    # the preview shows the lines removed (the notes and the new text's step)
    shown = "\n".join(plan.notes)
    assert "less the 3 line(s) the notes list" in plan.steps[3].why
    assert f"- {GONE}" in shown and "-    UUID=deadbeef:00000000:00000000:00000009" in shown
    assert "# kept" not in shown
    assert plan_step_problems(plan) == []
    report = execute(plan, be, audit=AuditLog(tmp_path / "audit.log"))
    assert [o.status for o in report.outcomes] == ["ok"] * 6
    after = be.read_text(CONF)
    assert after == before + "# kept: a comment\n"  # the running array's line stays
    assert GONE in (be.read_text(backup) or "")
    assert _finding(be) is None  # and the audit is satisfied


def test_an_array_on_some_disk_is_not_stale() -> None:
    """retire's stray superblock (an old array's, on a disk, not assembled): its ARRAY line
    is how it would be assembled, not a stale one."""
    be = SimulatedBackend.from_scenario("retire", clock=SimClock.manual())
    scan = be.run(["mdadm", "--examine", "--scan", "--verbose"]).stdout
    m = be.probe()
    running = {(a.uuid or "").replace("-", "").replace(":", "").lower() for a in m.arrays}
    stray = [e for e in scan.splitlines() if e.startswith("ARRAY") and "UUID=" in e]
    stray_lines = [
        line.split(" devices=")[0]
        for line in stray
        if line.split("UUID=")[1].split()[0].replace(":", "").lower() not in running
    ]
    assert stray_lines, "the retire scenario has a stray superblock"
    assert be.run(["tee", "-a", CONF], stdin="\n".join(stray_lines) + "\n").ok
    assert _finding(be) is None
    assert be.run(["tee", "-a", CONF], stdin=GONE + "\n").ok
    f = _finding(be)
    assert f is not None and f.fix is not None
    assert "lists 1 array that" in f.title and GONE in f.detail
    assert all(s.split(" UUID=")[0] not in f.detail for s in stray_lines)


def test_a_file_changed_since_the_plan_is_left_alone(tmp_path: Path) -> None:
    be, _ = _with_stale()
    f = _finding(be)
    assert f is not None and f.fix is not None
    assert be.run(["tee", "-a", CONF], stdin="MAILADDR root\n").ok  # the admin edits it
    edited = be.read_text(CONF)
    report = execute(f.fix, be, audit=AuditLog(tmp_path / "audit.log"))
    assert [o.status for o in report.outcomes][:2] == ["failed", "not-run"]  # cmp, first
    assert be.read_text(CONF) == edited  # nothing written over the admin's edit
    assert be.read_text(CONF + ".raidman-new") is None
    backups = [p for p in be.state.files if ".raidman-backup" in p]
    assert backups == []  # not even a backup: a second run never overwrites the first's


def test_a_plan_run_twice_keeps_the_first_backup(tmp_path: Path) -> None:
    """Issue 37 item 8: two runs overwrote the one backup with the first run's output. The
    file is compared before anything else, so the second run stops there."""
    be, _ = _with_stale()
    f = _finding(be)
    assert f is not None and f.fix is not None
    original = be.read_text(CONF) or ""
    assert execute(f.fix, be, audit=AuditLog(tmp_path / "audit.log")).ok
    again = execute(f.fix, be, audit=AuditLog(tmp_path / "audit.log"))
    assert next(o.status for o in again.outcomes) == "failed"
    assert be.read_text(backup_name(CONF, original)) == original


def test_the_allowlist_takes_only_whole_entries_removed() -> None:
    be, before = _with_stale()
    text = be.read_text(CONF) or ""
    plan = build_remove_stale(CONF, text, ["0badc0de:11112222:33334444:55556666"])
    assert plan_step_problems(plan) == []

    def with_new(new: str) -> Plan:
        steps = list(plan.steps)
        steps[3] = Step.decode(steps[3].argv, steps[3].why, stdin=new)
        return Plan(plan.title, tuple(steps), kind=plan.kind, params=plan.params)

    new = plan.steps[3].stdin or ""
    assert "HOMEHOST" in new
    assert plan_step_problems(with_new(new + "PROGRAM /tmp/x\n"))  # a line added
    assert plan_step_problems(with_new(new.replace("HOMEHOST", "#HOMEHOST")))  # a line changed
    half = new.replace(GONE2.split(" UUID=")[0] + "\n", "")  # half of an entry
    assert plan_step_problems(with_new(half))
    assert plan_step_problems(with_new(text))  # nothing removed
    # a step out of order; a cmp or cp of another file is no operation at all
    steps = list(plan.steps)
    assert plan_step_problems(Plan("x", (steps[3], *steps[:3], *steps[4:]), kind=plan.kind))
    assert argv_problem(("cmp", "/etc/shadow", "-"), "x\n")
    assert argv_problem(("cp", "-p", CONF, "/tmp/x"))
    assert before in text
