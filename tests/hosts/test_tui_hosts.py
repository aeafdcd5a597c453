"""The TUI over two hosts of a real sshd on loopback (``raidman --host fleet1 --host fleet2``):
the hosts view shows both with the roll-up of what the ssh probe read, and each opens to its
full view through its own ssh backend."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from app.cli import build_parser
from app.commands.backend_options import make_backends
from app.fleet import HostStatus, host_line
from app.ui.app import RaidmanApp
from app.ui.screens.hosts import HostsScreen
from app.ui.screens.main import MainScreen
from backends.linux import LinuxBackend
from tests.hosts.sshd import LocalSshd
from tests.ui.helpers import wait_for
from tests.ui.test_tmux_walk import CAPTURES, RAIDMAN, _screen, _tmux, _wait


async def test_the_tui_opens_two_ssh_hosts_from_the_hosts_view(ssh_env: LocalSshd) -> None:
    args = build_parser().parse_args(["--host", "fleet1", "--host", "fleet2"])
    backends = make_backends(args)
    assert [h for h, _ in backends] == ["fleet1", "fleet2"]
    hosts = [(str(h), b) for h, b in backends]
    app = RaidmanApp(hosts[0][1], hosts=hosts, probe_interval=0, sample_interval=0)
    async with app.run_test(size=(120, 30)) as pilot:
        assert isinstance(app.screen, HostsScreen)
        await wait_for(pilot, lambda: all(s.machine is not None for s in app.fleet), 60)
        local = LinuxBackend().probe()  # both aliases lead to this machine
        for s in app.fleet:
            assert s.unreachable is None, s.unreachable
            assert s.machine is not None and s.machine.host == local.host
            assert host_line(s) == host_line(HostStatus(s.host, local))
        for i, (host, backend) in enumerate(hosts):
            await pilot.press(*(["down"] * i), "enter")
            await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
            await wait_for(pilot, lambda: app.machine is not None and app.storage_tree.keys, 60)
            assert app.host == host and app.backend is backend
            assert app.machine is not None
            assert {d.name for d in app.machine.disks} == {d.name for d in local.disks}
            await pilot.press("H")
            await wait_for(pilot, lambda: isinstance(app.screen, HostsScreen))
            await pilot.press("home")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
@pytest.mark.skipif(not RAIDMAN.exists(), reason="raidman entry point not installed")
def test_hosts_view_walked_in_tmux_at_80x24(ssh_env: LocalSshd, tmp_path: Path) -> None:
    """``raidman --host @fleet --host gone`` in a real terminal: the hosts view, a host opened
    with Enter (its own banner), H back; the unreachable one a line of its own, never a hang.
    The screens go to ``tests/ui/captures/fleet-80x24-hosts*.screen.txt`` (for people) with
    RAIDMAN_UPDATE_CAPTURES=1; what is pinned is here (the rows depend on this machine)."""
    cfg = Path(ssh_env.ssh_config)
    cfg.write_text("Host gone\n  HostName 192.0.2.1\n" + cfg.read_text())  # TEST-NET: no answer
    session = f"raidman-hosts-{uuid.uuid4().hex[:8]}"
    env = " ".join(
        f"{k}={shlex.quote(os.environ[k])}"
        for k in ("XDG_CONFIG_HOME", "RAIDMAN_SSH_CONTROL_DIR", "RAIDMAN_STATE_DIR")
    )
    cmd = (
        f"env -u COLUMNS -u LINES {env} {RAIDMAN} --host @fleet --host gone;"
        " echo RAIDMAN-EXITED; sleep 30"
    )
    _tmux(session, "new-session", "-d", "-s", session, "-x", "80", "-y", "24", cmd)
    try:
        hosts = _wait(session, "unreachable: gone", timeout=60)
        hosts = _wait(session, "hosts · ", timeout=60)
        end = time.monotonic() + 60
        while "probing" in hosts and time.monotonic() < end:  # every host answered or not
            time.sleep(0.5)
            hosts = _screen(session)
        lines = hosts.splitlines()
        assert lines[0].strip().startswith("raidman  hosts  4 hosts")
        rows = {ln.split()[1]: ln for ln in lines[2:6]}
        assert list(rows) == ["fleet1", "fleet2", "fleet3", "gone"]
        assert "unreachable: " in rows["gone"] and "unreachable" not in rows["fleet1"]
        assert "Quit" in lines[-1] and "Open" in lines[-1]
        _tmux(session, "send-keys", "-t", session, "Enter")
        opened = _wait(session, "@ fleet1]", timeout=60)
        opened = _wait(session, "H Hosts", timeout=30)
        _tmux(session, "send-keys", "-t", session, "H")
        back = _wait(session, "raidman  hosts  4 hosts", timeout=30)
        assert "Traceback" not in back and "RAIDMAN-EXITED" not in back
        if os.environ.get("RAIDMAN_UPDATE_CAPTURES"):
            (CAPTURES / "fleet-80x24-hosts.screen.txt").write_text(hosts, encoding="utf-8")
            (CAPTURES / "fleet-80x24-hosts-open.screen.txt").write_text(opened, encoding="utf-8")
    finally:
        subprocess.run(["tmux", "-L", session, "kill-server"], capture_output=True, check=False)
