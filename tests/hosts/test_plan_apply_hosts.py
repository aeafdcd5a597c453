"""``raidman plan/apply --host``: the same plan and pre-flight as on the machine itself, the host
in the preview, plans bound to the host they were made for, and audit entries naming the host."""

from __future__ import annotations

import json
from pathlib import Path

from app.hosts import HostAuditLog
from backends.linux import LinuxBackend
from backends.linux.ssh import SshSource, SshTarget
from tests.hosts.sshd import LocalSshd
from tests.hosts.test_cli_hosts import raidman


def _two_disks() -> list[str]:
    r = raidman("report", "--json", "--no-smart", "--no-audit")
    names = [d["name"] for d in json.loads(r.stdout)["disks"] if d.get("kind") == "disk"]
    return [*names, "sdx", "sdy"][:2]


def test_plan_over_ssh_is_the_local_plan_with_the_host_shown(ssh_env: LocalSshd) -> None:
    args = ["plan", "create-array", "--level", "1", "--devices", ",".join(_two_disks())]
    local = raidman(*args)
    remote = raidman(*args, "--host", "fleet1")
    assert remote.returncode == local.returncode
    assert remote.stdout == "on host: fleet1 (over ssh)\n" + local.stdout
    assert remote.stderr == local.stderr


def test_apply_runs_a_plan_only_on_the_host_it_was_made_for(
    ssh_env: LocalSshd, tmp_path: Path
) -> None:
    made = tmp_path / "plan.json"
    args = ["plan", "create-array", "--level", "1", "--devices", ",".join(_two_disks())]
    raidman(*args, "--host", "fleet1", "--out", str(made))
    if not made.exists():  # the machine has no two disks to plan with
        made.write_text(raidman("plan", "--demo", *args[1:], "--json").stdout)
        data = json.loads(made.read_text())
        data["host"] = "fleet1"
        made.write_text(json.dumps(data))
    assert json.loads(made.read_text())["host"] == "fleet1"
    here = raidman("apply", str(made), "--dry-run")
    assert here.returncode == 3
    assert "made for host fleet1, not this machine" in here.stderr
    other = raidman("apply", str(made), "--dry-run", "--host", "fleet2")
    assert other.returncode == 3 and "not fleet2" in other.stderr
    there = raidman("apply", str(made), "--dry-run", "--host", "fleet1")
    assert "made for" not in there.stderr
    assert there.stdout.startswith("on host: fleet1 (over ssh)\n")
    bad = json.loads(made.read_text())
    bad["host"] = "-oProxyCommand=x"
    made.write_text(json.dumps(bad))
    r = raidman("apply", str(made), "--dry-run", "--host", "fleet1")
    assert r.returncode == 3 and "not a host name" in r.stderr


def test_audit_entries_name_the_host_and_go_over_the_connection(
    ssh_env: LocalSshd, tmp_path: Path
) -> None:
    src = SshSource(
        SshTarget("fleet1", ssh_config=str(ssh_env.ssh_config), control_dir=ssh_env.control_dir)
    )
    log = HostAuditLog("fleet1", LinuxBackend(src), tmp_path / "audit.jsonl")
    assert log.record_start(plan="create md127", run="r1", step=1, argv=["mdadm", "--create"])
    assert log.record_finish(
        plan="create md127",
        run="r1",
        step=1,
        argv=["mdadm", "--create"],
        exit_code=0,
        duration_s=0.1,
    )
    entries = log.read_entries()
    assert [e.plan for e in entries] == ["create md127 @ fleet1"] * 2
    assert [e.event for e in entries] == ["started", "executed"]
    assert src.round_trips == 2  # one `logger -t raidman` on the host per entry
