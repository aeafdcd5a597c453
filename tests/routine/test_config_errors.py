"""Every configuration error is a message naming the file, the key and the reason; SIGHUP never
stops the monitor (issue 37, item 9): a 5,000-digit number in raidman.toml was a ValueError
from tomllib (a traceback at start, and the monitor dead at SIGHUP: a crash loop under
systemd); a 400-digit one an OverflowError from ``_number``; the same in hosts.toml a
traceback at every command."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from app.cli import main
from app.hosts import HostsError, parse_hosts_file
from app.routine.config import ConfigError, parse_config
from tests.routine.test_monitor_command import _Out, handlers

__all__ = ["handlers"]  # the fixture, used by name

HUGE = "9" * 5000


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"[alerts]\nwear_high = {HUGE}\n", "line 2, wear_high: a number of 5000 digits"),
        (f"[alerts]\nwear_high = {'9' * 400}\n", "alerts.wear_high is not between 1 and 100"),
        (f"[checks]\nmax_age_days = -{'9' * 400}\n", "checks.max_age_days is not between"),
        ("[checks]\nmax_age_days = 1e999\n", "checks.max_age_days is not a number"),
        (f"[checks]\nevery = {HUGE}\n", "line 2, every: a number of 5000 digits"),
    ],
    ids=["5000 digits", "400 digits", "-400 digits", "1e999", "5000 digits, every"],
)
def test_a_number_out_of_reach_is_a_message(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(text, "/etc/raidman.toml")


def test_hosts_toml_with_a_huge_number_is_a_message() -> None:
    with pytest.raises(HostsError, match=r"hosts\.toml: line 1, connect_timeout: a number of 5000"):
        parse_hosts_file(f"connect_timeout = {HUGE}\n")
    with pytest.raises(HostsError, match="connect_timeout is not a number of seconds"):
        parse_hosts_file(f"connect_timeout = {'9' * 400}\n")


def test_the_monitor_starts_with_a_message_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 37's bar: a 5,000-digit number in raidman.toml gives a message."""
    conf = tmp_path / "raidman.toml"
    conf.write_text(f"[alerts]\ncooldown = 1\nwear_high = {HUGE}\n")
    rc = main(["monitor", "--config", str(conf), "--demo", "imsm", "--once"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err == (
        f"raidman monitor: {conf}: line 3, wear_high: a number of 5000 digits is no value "
        "raidman takes\n"
    )


def test_report_with_a_huge_number_in_hosts_toml_is_a_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hosts = tmp_path / "cfg" / "raidman" / "hosts.toml"
    hosts.parent.mkdir(parents=True)
    hosts.write_text(f'hosts = ["db1"]\nconnect_timeout = {HUGE}\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    with pytest.raises(SystemExit) as ex:
        main(["report", "--host", "db1"])
    assert ex.value.code == 2
    assert "connect_timeout: a number of 5000 digits" in capsys.readouterr().err


def test_sighup_with_a_huge_number_keeps_the_monitor_and_its_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, handlers: None
) -> None:
    conf = tmp_path / "cfg" / "raidman" / "raidman.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text('[checks]\nevery = "off"\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.delenv("RAIDMAN_CHECK_EVERY", raising=False)
    monkeypatch.delenv("RAIDMAN_CHECK_WINDOW", raising=False)
    out = _Out()
    monkeypatch.setattr("sys.stdout", out)
    failed: list[BaseException] = []

    def drive() -> None:
        try:
            at = out.wait_for("watching")
            for bad in (f"[alerts]\nwear_high = {HUGE}\n", f"[alerts]\nwear_high = {'9' * 400}\n"):
                conf.write_text(bad)
                os.kill(os.getpid(), signal.SIGHUP)
                at = out.wait_for("configuration not reloaded (the one in force stays)", at)
            assert "line 2, wear_high: a number of 5000 digits" in out.text
            assert "alerts.wear_high is not between 1 and 100" in out.text
            conf.write_text('[checks]\nevery = "7d"\n')
            os.kill(os.getpid(), signal.SIGHUP)
            out.wait_for("configuration reloaded", at)  # still there, still listening
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
