"""Alerts from raidman monitor (issue 27 item 4): mdadm's event names from one look to the next,
delivered to a program as argv [event, md-device, component] with the details in the
environment (never a shell, with a time limit), by mail through a sendmail program, folded
within the cool-down, retried when delivery fails; --test-alert."""

from __future__ import annotations

import json
import stat
import sys
import threading
from pathlib import Path

import pytest

from app.cli import main
from app.routine.alerts import Alerter, Targets, resolve_targets
from app.routine.config import RoutineConfig
from app.routine.events import AlertEvent, array_events
from backends.linux.notify import run_notifier
from backends.simulated import SimClock, SimulatedBackend
from tests.routine.rig import Sent


def test_fail_gives_fail_and_degraded_to_the_program_and_mail() -> None:
    clock = SimClock.manual()
    b = SimulatedBackend.from_scenario("imsm", clock=clock)
    sent = Sent()
    lines: list[str] = []
    t = Targets(program="/usr/local/bin/alert", mailaddr="root", sendmail="/usr/sbin/sendmail")
    al = Alerter(b, t, sent, log=lines.append, host="h1", clock=clock.now)
    al.observe(b.sample())
    r = b.run(["mdadm", "/dev/md126", "--fail", "/dev/sdb"])
    assert r.returncode == 0, r.stderr
    clock.advance(1)
    events = al.observe(b.sample())
    names = [(e.event, e.array, e.component) for e in events]
    assert ("Fail", "md126", "sdb") in names and ("DegradedArray", "md126", "") in names
    sent.wait(4)
    progs = [c for c in sent.calls if c[0][0] == "/usr/local/bin/alert"]
    assert ("/usr/local/bin/alert", "Fail", "/dev/md126", "/dev/sdb") in [c[0] for c in progs]
    assert ("/usr/local/bin/alert", "DegradedArray", "/dev/md126") in [c[0] for c in progs]
    env = next(c[1] for c in progs if c[0][1] == "Fail")
    assert env["RAIDMAN_EVENT"] == "Fail" and env["RAIDMAN_COMPONENT"] == "/dev/sdb"
    mails = [c for c in sent.calls if c[0] == ("/usr/sbin/sendmail", "-t", "-oi")]
    body = next(c[2] for c in mails if c[2] and "Subject: Fail event on /dev/md126:h1" in c[2])
    assert body is not None and "md126 : active raid1" in body and "degraded 1" in body
    kernel = body.split("Last kernel lines about it:\n", 1)[1]
    assert "md/raid1:md126: Disk failure on sdb, disabling device." in kernel
    al.close()


def test_cooldown_folds_and_failed_delivery_is_retried() -> None:
    clock = SimClock.manual()
    b = SimulatedBackend.from_scenario("imsm", clock=clock)
    sent = Sent(fail=1)
    lines: list[str] = []
    al = Alerter(b, Targets(program="/p"), sent, log=lines.append, cooldown_s=600, clock=clock.now)
    e = AlertEvent("CheckMismatch", "md126", detail="the check of md126 found 8")
    al.emit(e)
    sent.wait(1)
    for _ in range(3):
        clock.advance(10)
        assert al.emit(e) == []  # folded
    clock.advance(60)
    al.tick()  # the failed first delivery, retried after 60 s
    sent.wait(2)
    clock.advance(600)
    al.tick()  # the cool-down is over: "3 more since"
    sent.wait(3)
    assert sent.calls[2][1]["RAIDMAN_FOLDED"] == "3"
    assert "3 more since" in sent.calls[2][1]["RAIDMAN_DETAIL"]
    assert any("not delivered by program" in ln and "retried in 60 s" in ln for ln in lines)
    al.close()


def test_mdadm_conf_targets_when_raidman_has_none() -> None:
    b = SimulatedBackend.from_scenario("imsm", clock=SimClock.manual())
    b.state.mdadm_conf = "MAILADDR admin@example.org\nMAILFROM md@example.org\nPROGRAM /sbin/x\n"
    t = resolve_targets(RoutineConfig(), b)
    assert (t.mailaddr, t.mailfrom, t.program, t.source) == (
        "admin@example.org",
        "md@example.org",
        "/sbin/x",
        "/etc/mdadm/mdadm.conf",
    )
    al = Alerter(b, t, Sent(), log=lambda _line: None, host="h1")
    head = al.message(AlertEvent("TestMessage", "md126")).split("\n\n", 1)[0].splitlines()
    assert head[:3] == [
        "From: md@example.org",
        "To: admin@example.org",
        "Subject: TestMessage event on /dev/md126:h1",
    ]
    al.close()
    t2 = resolve_targets(RoutineConfig(mailaddr="root"), b)
    assert (t2.mailaddr, t2.program) == ("root", None)


def test_array_events_first_look_and_disappeared() -> None:
    b = SimulatedBackend.from_scenario("raid5-cable", clock=SimClock.manual())
    s = b.sample()
    assert [e.event for e in array_events(None, s)] == ["DegradedArray"]
    gone = type(s)(s.taken_at + 1, ())
    assert [e.event for e in array_events(s, gone)] == ["DeviceDisappeared"]
    assert [e.event for e in array_events(gone, s)] == ["NewArray", "DegradedArray"]


def test_notifier_runs_no_shell_with_a_time_limit(tmp_path: Path) -> None:
    rc, why = run_notifier(["/bin/sleep", "5"], env={}, stdin=None, timeout=0.5)
    assert rc is None and "did not finish within 0.5 s" in why
    rc, why = run_notifier([str(tmp_path / "none; echo x")], env={}, stdin=None, timeout=5)
    assert rc is None and "No such file" in why


def test_test_alert_runs_the_program_for_every_array(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "got.jsonl"
    prog = tmp_path / "alert"
    prog.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"open({str(out)!r}, 'a').write(json.dumps([sys.argv[1:], os.environ['RAIDMAN_EVENT']]) + '\\n')\n"
    )
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    rc = main(["monitor", "--demo", "raid6-wd", "--test-alert", "--alert-program", str(prog)])
    assert rc == 0
    got = [json.loads(x) for x in out.read_text().splitlines()]
    assert got == [[["TestMessage", "/dev/md0"], "TestMessage"]]


class _Log:
    """The alerter's log; a test waits for a line the delivery threads write."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.cv = threading.Condition()

    def __call__(self, line: str) -> None:
        with self.cv:
            self.lines.append(line)
            self.cv.notify_all()

    def wait(self, words: str, n: int = 1) -> None:
        with self.cv:
            ok = self.cv.wait_for(lambda: sum(words in x for x in self.lines) >= n, timeout=10)
            assert ok, (words, self.lines)


def test_undeliverable_alert_is_retried_later_and_later_until_it_goes(tmp_path: Path) -> None:
    """The program fails twice (exits 1): each failure is logged, retried after 60 s, then
    120 s (doubling); nothing is sent before it is due; the third run delivers it."""
    clock = SimClock.manual()
    b = SimulatedBackend.from_scenario("imsm", clock=clock)
    sent = Sent(fail=2)
    log = _Log()
    al = Alerter(b, Targets(program="/p"), sent, log=log, clock=clock.now)
    al.emit(AlertEvent("Fail", "md126", "sdb", detail="sdb of md126 failed"))
    log.wait("not delivered by program: /p exited with status 1; retried in 60 s")
    clock.advance(59)
    al.tick()
    assert len(sent.calls) == 1  # not due yet: nothing queued
    clock.advance(1)
    al.tick()
    log.wait("retried in 120 s")
    clock.advance(119)
    al.tick()
    assert len(sent.calls) == 2
    clock.advance(1)
    al.tick()
    log.wait("alert: Fail delivered by program")
    assert len(sent.calls) == 3
    assert {c[0] for c in sent.calls} == {("/p", "Fail", "/dev/md126", "/dev/sdb")}
    al.close()
