"""Prometheus and Ansible against the real kernel (issue 14, "Done when"): with an array
syncing (held slow), Debian's node_exporter in the guest serves raidman's sync metrics from the
textfile directory and ``promtool check metrics`` accepts them; ``ansible-playbook -c local`` of
the ``--format ansible`` plan for the RAID-10 (n2, 32K, 4 disks) builds it, and a second run
changes nothing. The guest shares this machine's filesystem, so the binaries are the host's."""

from __future__ import annotations

import os
import re
import sys

import pytest

from tests.tools import ansible_playbook, node_exporter, promtool
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
    /etc/mdadm): ``--conf-path`` takes only the two paths mdadm reads, as apply does."""
    vm = blank_vm
    ansible = ansible_playbook()
    disks = vm.disks(4)
    work = "/tmp/raidman-ansible"
    vm.sh(f"rm -rf {work} && mkdir -p {work}")
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
    vm.run(["tee", f"{work}/raid10.yml"], stdin=plan.stdout, check=True)
    env = {
        "ANSIBLE_HOME": f"{work}/home",
        "ANSIBLE_LOCAL_TEMP": f"{work}/tmp",
        "ANSIBLE_REMOTE_TMP": f"{work}/remote-tmp",  # the guest's /root is read-only
        "ANSIBLE_PIPELINING": "1",
        "ANSIBLE_NOCOLOR": "1",
        "HOME": work,
    }
    argv = [
        ansible,
        "-i",
        "localhost,",
        "-c",
        "local",
        "-e",
        # the modules need no package of raidman's venv: the system's interpreter starts
        # without the venv's .pth files (under TCG each start is seconds of 9p reads)
        f"ansible_python_interpreter={_module_python()}",
        f"{work}/raid10.yml",
    ]
    paths, globs = md_paths("md127")
    r = vm.call(
        "tests.vm.guest_ansible:playbook_twice",
        argv,
        {**env, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"},
        etc_mdadm,
        [paths, globs],
        timeout=1500,
    )
    first, second = r["first"], r["second"]
    vm.note(
        f"timing: ansible import {r['import_s']:.1f} s, first run {first['s']:.1f} s, "
        f"second run {second['s']:.1f} s"
    )
    assert first["rc"] == 0, first["stdout"] + first["stderr"]
    assert re.search(
        r"localhost\s*: ok=\d+\s+changed=2\s+unreachable=0\s+failed=0", first["stdout"]
    ), first["stdout"]
    k = KernelMd.parse("md127", first["md"])
    assert k.level == "raid10"
    assert k.num("raid_disks") == 4 and k.num("chunk_size") == 32 * 1024
    assert k.get("layout") == str(0x102)  # near=2, far=1: md's raid10 layout word
    assert set(k.members) == set(disks)
    conf = first["conf"]
    assert conf.count("ARRAY /dev/md/127 ") == 1

    assert second["rc"] == 0, second["stdout"] + second["stderr"]
    assert re.search(
        r"localhost\s*: ok=\d+\s+changed=0\s+unreachable=0\s+failed=0", second["stdout"]
    ), second["stdout"]
    assert second["conf"] == conf
    assert set(KernelMd.parse("md127", second["md"]).members) == set(disks)
    assert set(read_md(vm, "md127").members) == set(disks)
