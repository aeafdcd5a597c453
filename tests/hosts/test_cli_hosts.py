"""``raidman report --host``: over a real local sshd the report equals the local one; several
hosts are one report each; the hosts file and --host values are untrusted input (exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.hosts.sshd import LocalSshd


def raidman(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
        check=False,
    )


def _without_times(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "taken_at"}


def test_report_over_ssh_equals_the_local_report(ssh_env: LocalSshd) -> None:
    remote = raidman("report", "--json", "--host", "fleet1")
    assert remote.returncode == 0, remote.stderr
    local = raidman("report", "--json")
    assert local.returncode == 0, local.stderr
    assert _without_times(json.loads(remote.stdout)) == _without_times(json.loads(local.stdout))


def test_several_hosts_are_one_report_each_keyed_by_host(ssh_env: LocalSshd) -> None:
    r = raidman("report", "--json", "--no-smart", "--host", "@fleet")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert sorted(out) == ["fleet1", "fleet2", "fleet3"]
    assert len({json.dumps(_without_times(v), sort_keys=True) for v in out.values()}) == 1
    text = raidman("report", "--no-smart", "--host", "fleet1", "--host", "fleet2")
    assert "== fleet1 ==" in text.stdout and "== fleet2 ==" in text.stdout


def test_an_unreachable_alias_is_a_note_and_exit_1(ssh_env: LocalSshd, tmp_path: Path) -> None:
    cfg = Path(ssh_env.ssh_config)
    cfg.write_text("Host gone\n  HostName 192.0.2.1\n" + cfg.read_text())  # TEST-NET: no answer
    t0 = time.monotonic()
    r = raidman("report", "--json", "--host", "gone", "--host", "fleet1")
    took = time.monotonic() - t0
    assert took < 30  # connect_timeout = 3 in hosts.toml, never a hang
    assert r.returncode == 1
    out = json.loads(r.stdout)
    assert out["fleet1"]["disks"]
    notes = out["gone"]["notes"]
    assert any(n["source"] == "ssh" and n["severity"] == "error" for n in notes), notes


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("hosts = [", "not TOML"),
        ('hosts = ["-oProxyCommand=x"]', "not a host name"),
        ("hosts = 3", "not a list"),
        ("[groups]\nfleet = [1]", "not a host name"),
        ("connect_timeout = -1", "connect_timeout"),
        ("surprise = 1", "unknown key"),
    ],
)
def test_a_bad_hosts_file_is_one_line_and_exit_2(
    toml: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "raidman").mkdir()
    (tmp_path / "raidman" / "hosts.toml").write_text(toml)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    r = raidman("report", "--host", "@fleet")
    assert r.returncode == 2
    assert message in r.stderr and "Traceback" not in r.stderr


def test_bad_host_values_are_refused_before_ssh_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    for value in ("-oProxyCommand=touch PWNED", "@nogroup", "a b"):
        r = raidman("report", f"--host={value}")
        assert r.returncode == 2, (value, r.stderr)
        assert "Traceback" not in r.stderr
    assert not (Path.cwd() / "PWNED").exists()


@pytest.mark.parametrize("command", ["monitor", "metrics"])
def test_commands_with_this_machines_database_refuse_host(command: str) -> None:
    r = raidman(command, "--host", "fleet1")
    assert r.returncode == 2
    assert "no --host" in r.stderr
