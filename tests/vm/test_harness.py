"""The harness itself: the agent's channel, checked commands, guest Python, QMP, disks."""

from __future__ import annotations

import pytest

from tests.vm.machine import VM, GuestCommandError

pytestmark = pytest.mark.vm


def test_agent_runs_commands_in_the_guest_kernel(vm: VM) -> None:
    res = vm.run(["uname", "-r"])
    assert res.ok
    assert res.stdout.strip() in vm.config.kernel  # the Debian kernel, not the host's
    assert vm.run(["sh", "-c", "exit 3"]).returncode == 3
    assert vm.run(["cat"], stdin="through stdin\n").stdout == "through stdin\n"
    assert vm.run(["no-such-program-xyz"]).returncode == 127
    with pytest.raises(GuestCommandError, match="rc=5"):
        vm.sh("echo oops >&2; exit 5")
    slow = vm.run(["sleep", "5"], timeout=1)
    assert slow.returncode == -9 and "timed out" in slow.stderr


def test_guest_python_sees_the_repo_and_md(vm: VM) -> None:
    out = vm.python("import app.model, sys; print(sys.prefix); print(open('/proc/cmdline').read())")
    assert "virtme" in out
    assert vm.call("os.path:exists", "/sys/module/md_mod") or vm.run(["modprobe", "md_mod"]).ok
    assert "Personalities" in vm.read("/proc/mdstat")


def test_disks_are_present_with_their_topology(vm: VM) -> None:
    assert sorted(vm.nvme) == [f"N{i}" for i in range(vm.config.nvme_count)]
    assert vm.virtio
    q = f"/sys/block/{vm.virtio}/queue"
    data = vm.read_many(
        [f"{q}/physical_block_size", f"{q}/optimal_io_size", f"{q}/logical_block_size"]
    )
    assert data[f"{q}/physical_block_size"] == "4096\n"
    assert data[f"{q}/optimal_io_size"] == "33553920\n"
    assert data[f"{q}/logical_block_size"] == "512\n"
    size = int(vm.read(f"/sys/block/{vm.nvme['N0']}/size"))
    assert size * 512 == vm.config.nvme_size


def test_qmp_answers(vm: VM) -> None:
    status = vm.qmp("query-status")
    assert status["running"] is True
    names = {d["qdev"] for d in vm.qmp("query-block") if d.get("qdev")}
    assert any("nvme0" in n for n in names), names


def test_call_forks_the_preloaded_agent(vm: VM) -> None:
    assert vm.call("os:getuid") == 0
    assert vm.call("os.path:join", "/a", "b") == "/a/b"
    with pytest.raises(GuestCommandError, match="ZeroDivisionError"):
        vm.call("operator:truediv", 1, 0)
    res = vm.raidman("--help")
    assert res.ok and "usage: raidman" in res.stdout
    bad = vm.raidman("--no-such-option")
    assert bad.returncode == 2 and "unrecognized arguments" in bad.stderr
    # the fork does not inherit state changes from earlier calls
    vm.call("os:chdir", "/")
    assert vm.call("os:getcwd") != "/"
