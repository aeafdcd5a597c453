"""``raidman monitor`` as a command (issue 27 items 1, 5): SIGHUP reloads raidman.toml (a file
out of shape leaves the configuration in force), the command line's names over the file's, the
schedule installed by a plan."""

from __future__ import annotations

import argparse
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli import main
from app.commands.monitor import routine_config
from app.plans.audit_log import AuditLog
from app.plans.builders.check_schedule import DROPIN, schedule_plan, unschedule_plan
from app.plans.executor import execute
from app.routine.config import ConfigError
from backends.simulated import SimClock, SimulatedBackend


class _Out:
    """sys.stdout for the monitor's log lines; a thread can wait for one."""

    def __init__(self) -> None:
        self.text = ""
        self.cv = threading.Condition()

    def write(self, s: str) -> int:
        with self.cv:
            self.text += s
            self.cv.notify_all()
        return len(s)

    def flush(self) -> None:
        pass

    def wait_for(self, words: str, after: int = 0) -> int:
        with self.cv:
            ok = self.cv.wait_for(lambda: words in self.text[after:], timeout=30)
            assert ok, (words, self.text[-2000:])
            return self.text.index(words, after) + len(words)


@pytest.fixture
def handlers() -> Iterator[None]:
    """The monitor installs SIGHUP/SIGTERM/SIGINT handlers: put pytest's back."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT)}
    yield
    for s, h in saved.items():
        signal.signal(s, h)


def test_sighup_reloads_the_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, handlers: None
) -> None:
    conf = tmp_path / "cfg" / "raidman" / "raidman.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text('[checks]\nevery = "off"\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("RAIDMAN_CHECK_EVERY", raising=False)  # a drop-in's, over the file
    monkeypatch.delenv("RAIDMAN_CHECK_WINDOW", raising=False)
    out = _Out()
    monkeypatch.setattr("sys.stdout", out)
    failed: list[BaseException] = []

    def drive() -> None:
        try:
            at = out.wait_for("watching")
            assert "checks: scheduled checks are off in the configuration" in out.text
            conf.write_text(
                '[checks]\nevery = "7d"\nwindow = "1h"\n'
                '[alerts]\nprogram = "/usr/local/bin/md-alert"\n'
            )
            os.kill(os.getpid(), signal.SIGHUP)
            at = out.wait_for("configuration reloaded", at)
            assert "checks: every 604800 s, window 3600 s" in out.text
            # a demo: the file's program is not used (issue 41: nothing simulated leaves)
            assert (
                "alerts: the log only (--demo/--replay: nothing simulated leaves"
                in out.text[at - 200 :]
            )
            assert "program /usr/local/bin/md-alert" not in out.text
            conf.write_text('[checks]\nevery = "soon"\n')
            os.kill(os.getpid(), signal.SIGHUP)
            out.wait_for("configuration not reloaded (the one in force stays)", at)
            assert "'soon' is not a duration" in out.text[at:]
        except BaseException as e:
            failed.append(e)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)

    t = threading.Thread(target=drive)
    t.start()
    rc = main(["monitor", "--demo", "imsm", "--poll", "0.2", "--interval", "3600"])
    t.join()
    assert not failed, failed
    assert rc == 0 and "stopped" in out.text


def test_command_line_names_over_the_file(tmp_path: Path) -> None:
    conf = tmp_path / "raidman.toml"
    conf.write_text('[checks]\nevery = "monthly"\nwindow = "6h"\n[alerts]\nmailaddr = "root"\n')
    args = argparse.Namespace(
        config=str(conf),
        check_every="2m",
        check_window="30s",
        alert_program="/usr/local/bin/md-alert",
        mailaddr="ops@example.org",
    )
    cfg = routine_config(args)
    assert (cfg.check_every_s, cfg.check_window_s) == (120, 30)
    assert (cfg.alert_program, cfg.mailaddr) == ("/usr/local/bin/md-alert", "ops@example.org")
    args.check_every = "30s"
    with pytest.raises(ConfigError, match="shorter than a minute"):
        routine_config(args)
    args.check_every, args.alert_program = "off", "md-alert"
    with pytest.raises(ConfigError, match="absolute path"):
        routine_config(args)


def test_the_schedule_plan_runs_and_the_monitor_takes_it_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``raidman plan check-schedule --every 2m --window 30s`` through the executor: the drop-in
    sets the monitor's environment (systemd's Environment= lines, as the unit gets them), which
    routine_config takes as the flags' defaults; removing it leaves the file's schedule."""
    b = SimulatedBackend.from_scenario("imsm", clock=SimClock.manual())
    audit = AuditLog(tmp_path / "audit.log")
    report = execute(schedule_plan("2m", "30s"), b, audit=audit)
    assert report.ok, report.summary()
    dropin = b.read_text(DROPIN) or ""
    for line in dropin.splitlines():
        if line.startswith("Environment="):
            key, _, value = line.removeprefix("Environment=").partition("=")
            monkeypatch.setenv(key, value)
    none = argparse.Namespace(config=str(tmp_path / "absent.toml"))
    cfg = routine_config(none)
    assert (cfg.check_every_s, cfg.check_window_s) == (120, 30)
    report = execute(unschedule_plan(), b, audit=audit)
    assert report.ok, report.summary()
    assert b.read_text(DROPIN) is None
    assert [ln for ln in audit.path.read_text().splitlines() if "try-restart" in ln]
