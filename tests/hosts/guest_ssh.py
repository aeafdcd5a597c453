"""Run inside the VM guest (``vm.call("tests.hosts.guest_ssh:reports")``): the guest's own sshd
(tests/hosts/sshd.py, the host's binaries through the shared filesystem) and raidman's report of
the guest, once locally and once through ``--host fleet1``."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from tests.hosts.sshd import LocalSshd
from tests.vm.guest import run_forked


def reports() -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="raidman-ssh-"))
    server = LocalSshd("/usr/sbin/sshd", tmp, aliases=1, use_pam=True)
    server.start(timeout=180)  # under TCG sshd's start-up alone takes seconds
    try:
        server.hosts_toml(tmp / "config", connect_timeout=60)
        env = dict(os.environ)
        env.update(
            XDG_CONFIG_HOME=str(tmp / "config"),
            RAIDMAN_SSH_CONTROL_DIR=server.control_dir,
            RAIDMAN_STATE_DIR=str(tmp / "state"),
        )
        out: dict[str, Any] = {}
        for key, extra in (("local", []), ("remote", ["--host", "fleet1"])):
            # each report in a process of its own (a fork of this pre-loaded one: the same as
            # `python -m app.cli`, without half a minute of imports under TCG)
            rc, stdout, stderr = run_forked("app.cli:main", ["report", "--json", *extra], env)
            out[key] = {"rc": rc, "stderr": stderr, "report": json.loads(stdout)}
        probe = subprocess.run(
            ["ssh", "-F", str(server.ssh_config), "-o", "BatchMode=yes", "fleet1", "id -u"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        out["diagnosis"] = {
            "ssh": f"exit {probe.returncode}: {probe.stdout} {probe.stderr}",
            "sshd_log": server.log.read_text(errors="replace")[-3000:],
        }
        return out
    finally:
        server.stop()
