"""Settings kept at boot as plan steps (issue 28 item 4): files written atomically through the
executor, shown before, removable by a plan, refused by the allowlist in any other shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.plans.audit_log import AuditLog
from app.plans.builders import persist
from app.plans.builders.sync_actions import build_speed_limits
from app.plans.executor import execute
from app.plans.guards.allowlist import argv_problem
from app.rules import audit
from backends.simulated import SimulatedBackend


def _run(backend: SimulatedBackend, plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    report = execute(plan, backend, audit=AuditLog(tmp_path / "audit.log"))
    assert report.refused is None and all(o.status == "ok" for o in report.executed), report


def test_speed_limits_kept_at_boot_then_removed(tmp_path: Path) -> None:
    """Article 000 (../shared/seeds/000_*.txt, "Optionaler Schritt 3.1"): it raises
    speed_limit_min/max with echo into /proc, which a reboot forgets; raidman writes
    /etc/sysctl.d as plan steps (temporary name, then rename) and removes it with a plan."""
    b = SimulatedBackend.from_scenario("blank")
    m = b.probe()
    plan = build_speed_limits(m, min_kib_s=200000, max_kib_s=500000, persist_file=None)
    argvs = [s.argv for s in plan.steps]
    f = persist.FILES["speed-limits"]
    assert argvs[2] == ("tee", f.temp) and argvs[3] == ("mv", "-f", f.temp, f.path)
    assert "dev.raid.speed_limit_max = 500000" in (plan.steps[2].stdin or "")
    _run(b, plan, tmp_path)
    text = b.read_text(f.path)
    assert text is not None and "dev.raid.speed_limit_min = 200000\n" in text
    assert b.read_text(f.temp) is None
    # a second plan keeps the other key and replaces the one it sets
    again = build_speed_limits(m, max_kib_s=300000, persist_file=text)
    _run(b, again, tmp_path)
    text = b.read_text(f.path) or ""
    assert "speed_limit_min = 200000" in text and "speed_limit_max = 300000" in text
    assert "500000" not in text
    _run(b, persist.build_remove("speed-limits"), tmp_path)
    assert b.read_text(f.path) is None


def test_scheduler_fix_keeps_the_scheduler_at_boot_keyed_on_the_serial() -> None:
    """Article 002 (../shared/seeds/002_*.txt) sets the scheduler per disk at runtime; the fix
    also writes a udev rule for it, keeping the rules already there for other disks. The rule
    matches the disk's serial (udev's ENV{ID_SERIAL_SHORT}, set by 60-persistent-storage.rules
    before 65-raidman-*), not KERNEL=="sda": kernel names change between boots (issue 43)."""
    from dataclasses import replace

    from app.rules.inputs import AuditInputs, SchedulerState
    from tests.rules.machines import Stack

    bare = Stack(rotational=True).machine()
    m = replace(
        bare, disks=tuple(replace(d, serial=f"WD-WCC4N{i}0001") for i, d in enumerate(bare.disks))
    )
    scheds = {d.name: SchedulerState.parse("[mq-deadline] kyber bfq none") for d in m.disks}
    old = persist.scheduler_line("Z9OTHER", "none")
    inputs = replace(
        AuditInputs(), schedulers=scheds, persisted={persist.SCHEDULER_RULES: f"{old}\n"}
    )
    fix = next(f.fix for f in audit(m, inputs) if f.code == "scheduler" and f.device == "sda")
    assert fix is not None
    now, temp, rename = fix.steps
    assert now.argv == ("tee", "/sys/block/sda/queue/scheduler") and now.stdin == "bfq\n"
    assert temp.stdin is not None and old in temp.stdin
    serial = m.disks[0].serial
    assert m.disks[0].name == "sda" and serial is not None
    line = persist.scheduler_line(serial, "bfq")
    assert line in temp.stdin
    assert f'ENV{{ID_SERIAL_SHORT}}=="{serial}"' in line and 'ENV{DEVTYPE}=="disk"' in line
    assert "KERNEL" not in temp.stdin and "sda" not in temp.stdin
    assert rename.argv == ("mv", "-f", temp.argv[1], persist.SCHEDULER_RULES)
    assert [argv_problem(s.argv, s.stdin, s.stdin_from) for s in fix.steps] == [None] * 3
    # no serial (or one with a glob or quote in it): set now, no rule, and the plan says why
    for bad in (None, 'a"b', "x*"):
        nos = replace(m, disks=(replace(m.disks[0], serial=bad), *m.disks[1:]))
        f = next(f.fix for f in audit(nos, inputs) if f.code == "scheduler" and f.device == "sda")
        assert f is not None and [s.argv[0] for s in f.steps] == ["tee"]
        assert any(n.startswith("not kept at boot") for n in f.notes)


@pytest.mark.parametrize(
    ("argv", "stdin"),
    [
        (("tee", "/etc/udev/rules.d/.65-raidman-stripe-cache.rules.raidman-new"),
         'RUN+="/bin/sh -c evil"\n'),
        (("tee", "/etc/udev/rules.d/99-evil.rules"), "# hi\n"),
        (("mv", "-f", "/tmp/x", persist.STRIPE_CACHE_RULES), None),
        (("mv", "-f", persist.FILES["scheduler"].temp, persist.STRIPE_CACHE_RULES), None),
        (("rm", "-f", "/etc/fstab"), None),
        (("rm", "-rf", persist.SCHEDULER_RULES), None),
    ],
)  # fmt: skip
def test_allowlist_refuses_other_files_and_lines(argv: tuple[str, ...], stdin: str | None) -> None:
    assert argv_problem(argv, stdin) is not None


def test_stripe_cache_rule_is_guarded_and_checked() -> None:
    f = persist.FILES["stripe-cache"]
    line = persist.stripe_cache_line("0123abcd:0123abcd:0123abcd:0123abcd", 8192)
    text = persist.merged(f, None, {"0123abcd:0123abcd:0123abcd:0123abcd": line})
    assert 'TEST=="md/stripe_cache_size"' in text and persist.content_problem(f, text) is None
    assert persist.content_problem(f, text + line + "\n") is not None  # the same array twice
    assert persist.mdadm_uuid("b4550b11-983c-b249-5bc1-73952272aa9f") == (
        "b4550b11:983cb249:5bc17395:2272aa9f"
    )
