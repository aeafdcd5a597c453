"""Prometheus and Ansible against the real kernel (issue 14, "Done when"): with an array
syncing (held slow), Debian's node_exporter in the guest serves raidman's sync metrics from the
textfile directory and ``promtool check metrics`` accepts them; ``ansible-playbook`` on the host
with the ``--format ansible`` plan for the RAID-10 (n2, 32K, 4 disks), its tasks run in the guest,
builds it, and a second run changes nothing. The guest shares this machine's filesystem, so the
binaries are the host's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from tests.tools import ansible_playbook, node_exporter, promtool
from tests.vm.ansible_relay import relay
from tests.vm.kernel import KernelMd, md_paths, read_md
from tests.vm.machine import VM
from tests.vm.scenarios import SLOW_KIB, create_array, wait_sync_progress

pytestmark = pytest.mark.vm

TF = "/tmp/raidman-textfile"
PORT = 19100  # inside the guest: its own network namespace, nothing else listens there


def _module_python() -> str:
    """The interpreter ansible starts for each module in the guest."""
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def _series(text: str, name: str) -> dict[str, float]:
    """{label text: value} of ``name`` in an exposition."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = re.match(rf"^{name}\{{(.*)\}} (\S+)$", line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def test_node_exporter_serves_raidman_sync_metrics(blank_vm: VM) -> None:
    vm = blank_vm
    exporter, checker = node_exporter(), promtool()
    vm.set_speed_limits(1000, SLOW_KIB)
    create_array(vm, "md0", "raid5", vm.disks(4), chunk_kib=64)
    wait_sync_progress(vm, "md0", min_done=2048)
    vm.sh(f"rm -rf {TF} && mkdir -m 755 {TF}")

    before = read_md(vm, "md0")
    res = vm.raidman(
        "metrics",
        "--no-smart",
        "--no-audit",
        "--db",
        "/tmp/raidman-metrics.db",
        "--textfile-dir",
        TF,
        check=True,
    )
    after = read_md(vm, "md0")
    assert res.returncode == 0

    proc = vm.spawn(
        [
            exporter,
            f"--collector.textfile.directory={TF}",
            f"--web.listen-address=127.0.0.1:{PORT}",
            "--collector.disable-defaults",
            "--collector.textfile",
        ]
    )
    try:
        body: str = vm.call("tests.vm.guest:http_get", f"http://127.0.0.1:{PORT}/metrics")
    finally:
        proc.kill()
    assert "node_textfile_scrape_error 0" in body.splitlines()
    ours = "\n".join(ln for ln in body.splitlines() if "raidman_" in ln) + "\n"
    check = vm.run([checker, "check", "metrics"], stdin=ours, timeout=120)
    assert check.returncode == 0 and not (check.stdout + check.stderr).strip(), check

    action = {
        k: v for k, v in _series(body, "raidman_md_sync_action").items() if 'array="md0"' in k
    }
    assert [k for k, v in action.items() if v == 1] == [
        next(k for k in action if f'action="{before.sync_action}"' in k)
    ]
    assert before.sync_action == after.sync_action == "recover"
    (done,) = [
        v for k, v in _series(body, "raidman_md_sync_completed_bytes").items() if 'array="md0"' in k
    ]
    (total,) = [
        v for k, v in _series(body, "raidman_md_sync_total_bytes").items() if 'array="md0"' in k
    ]
    assert before.completed and after.completed
    assert before.completed[0] * 512 <= done <= after.completed[0] * 512
    assert total == before.completed[1] * 512
    (speed,) = [
        v
        for k, v in _series(body, "raidman_md_sync_speed_bytes_per_second").items()
        if 'array="md0"' in k
    ]
    # md's own figure as read: young marks make it up to 2x the limit (md.c sync_speed_show
    # divides by whole seconds since the oldest mark) and the throttle lets a window through
    # before it checks (seen: 8448 KiB/s at a 4000 KiB/s limit a few seconds in)
    assert 0 < speed <= SLOW_KIB * 1024 * 3
    assert any('array="md0"' in k for k in _series(body, "raidman_md_sync_remaining_seconds"))


def test_ansible_builds_raid10_then_changes_nothing(blank_vm: VM, etc_mdadm: str) -> None:
    """The playbook appends to the real mdadm.conf path (the guest's own, a tmpfs-backed
    /etc/mdadm): ``--conf-path`` takes only the two paths mdadm reads, as apply does.
    ``ansible-playbook`` runs on the host, as on an admin's workstation; its tasks run in the
    guest (the ``raidman_vm`` connection: each module on the guest's /usr/bin/python3)."""
    vm = blank_vm
    ansible = ansible_playbook()
    disks = vm.disks(4)
    plan = vm.raidman(
        "plan",
        "create-array",
        "--level",
        "10",
        "--devices",
        ",".join(disks),
        "--chunk",
        "32K",
        "--layout",
        "n2",
        "--bitmap",
        "none",
        "--name",
        "127",
        "--conf",
        "--conf-path",
        etc_mdadm,
        "--format",
        "ansible",
        "--no-become",
    )
    assert plan.returncode == 0, plan.stderr
    work = Path(tempfile.mkdtemp(prefix="raidman-ansible-"))  # short: a unix socket lives here
    (work / "raid10.yml").write_text(plan.stdout, encoding="utf-8")
    sock = work / "relay.sock"
    env = {
        **os.environ,
        "ANSIBLE_HOME": str(work / "home"),
        "ANSIBLE_LOCAL_TEMP": str(work / "tmp"),
        "ANSIBLE_REMOTE_TMP": "/tmp/raidman-ansible-remote",  # the guest's /root is read-only
        "ANSIBLE_PIPELINING": "1",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_CONNECTION_PLUGINS": str(Path(__file__).parent / "ansible_vm" / "connection"),
        "RAIDMAN_VM_RELAY": str(sock),
        "HOME": str(work),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }
    argv = [
        ansible,
        "-i",
        "guest,",
        "-c",
        "raidman_vm",
        "-e",
        # the modules need no package of raidman's venv: the system's interpreter starts
        # without the venv's .pth files (under TCG each start is seconds of 9p reads)
        f"ansible_python_interpreter={_module_python()}",
        str(work / "raid10.yml"),
    ]
    paths, globs = md_paths("md127")
    runs: dict[str, dict[str, Any]] = {}
    with relay(vm, sock, {"LANG": "C.UTF-8"}) as ran:
        for key in ("first", "second"):
            t0 = time.monotonic()
            p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
            runs[key] = {"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr}
            runs[key]["s"] = time.monotonic() - t0
            vm.run(["udevadm", "settle"], timeout=60)
            runs[key]["conf"] = vm.read(etc_mdadm)
            runs[key]["md"] = vm.read_many(paths, globs)
    first, second = runs["first"], runs["second"]
    vm.note(
        f"timing: ansible on the host, tasks in the guest ({len(ran)} commands): "
        f"first run {first['s']:.1f} s, second run {second['s']:.1f} s"
    )
    assert first["rc"] == 0, first["stdout"] + first["stderr"]
    assert re.search(r"guest\s*: ok=\d+\s+changed=2\s+unreachable=0\s+failed=0", first["stdout"]), (
        first["stdout"]
    )
    k = KernelMd.parse("md127", first["md"])
    assert k.level == "raid10"
    assert k.num("raid_disks") == 4 and k.num("chunk_size") == 32 * 1024
    assert k.get("layout") == str(0x102)  # near=2, far=1: md's raid10 layout word
    assert set(k.members) == set(disks)
    conf = first["conf"]
    assert conf.count("ARRAY /dev/md/127 ") == 1

    assert second["rc"] == 0, second["stdout"] + second["stderr"]
    assert re.search(
        r"guest\s*: ok=\d+\s+changed=0\s+unreachable=0\s+failed=0", second["stdout"]
    ), second["stdout"]
    assert second["conf"] == conf
    assert set(KernelMd.parse("md127", second["md"]).members) == set(disks)
    assert set(read_md(vm, "md127").members) == set(disks)
