"""The TUI over two hosts of a real sshd on loopback (``raidman --host fleet1 --host fleet2``):
the hosts view shows both with the roll-up of what the ssh probe read, and each opens to its
full view through its own ssh backend."""

from __future__ import annotations

from app.cli import build_parser, make_backends
from app.fleet import HostStatus, host_line
from app.ui.app import RaidmanApp
from app.ui.screens.hosts import HostsScreen
from app.ui.screens.main import MainScreen
from backends.linux import LinuxBackend
from tests.hosts.sshd import LocalSshd
from tests.ui.helpers import wait_for


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
