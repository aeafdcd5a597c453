"""Issue 28's Done-when for `raidman plan benchmark` on a real kernel: on the four NVMe disks with
--chunks 32K,512K, applied end to end with Debian's fio in the guest, it prints the result table
(MB/s and IOPS per request size x chunk, plus the one-disk baseline), keeps it (report --json
`benchmarks`) and leaves the disks without arrays, superblocks or signatures. TCG's figures are
not asserted, only their presence and shape. Runs and sizes are cut down (--runs 1 --numjobs 1
--size 4M) so the test stays short."""

from __future__ import annotations

import json

import pytest

from tests.tools import require_tool
from tests.vm.machine import VM

pytestmark = pytest.mark.vm


@pytest.mark.vm
def test_benchmark_applied_end_to_end(blank_vm: VM) -> None:
    require_tool("fio", "make vm-deps: Debian package fio (the guest runs the host's programs)")
    vm = blank_vm
    disks = vm.disks(4)
    d = "/tmp/raidman-bench"
    vm.sh(f"rm -rf {d} && mkdir -p {d} && chmod 700 {d}")
    env = {"RAIDMAN_STATE_DIR": d}
    args = ["plan", "benchmark", "--devices", ",".join(disks), "--chunks", "32K,512K",
            "--runs", "1", "--numjobs", "1", "--size", "4M", "--json"]  # fmt: skip
    res, code = vm.call_result("app.cli:main", args, env=env)
    assert res.ok and code in (0, None), res
    plan = json.loads(res.stdout)
    # issue 43: the duration bound and the bytes per disk, before the typed confirmation
    work = plan["consequences"]["workload"]
    assert work[0].startswith("benchmark takes at most 18m 00s: 18 fio runs"), work
    assert [w.split(" to ")[1].split(" ")[0] for w in work[1:]] == disks, work
    vm.write(f"{d}/plan.json", res.stdout)
    vm.sh(f"chmod 600 {d}/plan.json")
    with vm.timed("benchmark apply (18 fio runs, 2 arrays)"):
        res, code = vm.call_result(
            "app.cli:main",
            ["apply", f"{d}/plan.json", "--yes", "--confirm", disks[0]],
            env=env,
            timeout=1200,
        )
    assert code == 0, res
    out = res.stdout
    assert "× one disk" in out and "32 KiB" in out and "512 KiB" in out, out[-3000:]
    rows = [
        ln for ln in out.splitlines() if ln.startswith(("randread", "randwrite", "read ", "write "))
    ]
    assert len(rows) == 6 and all(ln.count("|") == 6 for ln in rows), rows
    vm.note("benchmark table (TCG):\n" + "\n".join(ln for ln in out.splitlines() if "|" in ln))
    res, code = vm.call_result("app.cli:main", ["report", "--json", "--no-smart"], env=env)
    assert code in (0, None), res
    (b,) = json.loads(res.stdout)["benchmarks"]
    assert b["devices"] == disks and b["chunks"] == [32768, 524288]
    targets = {c["target"] for c in b["cells"]}
    assert targets == {"disk", "32768", "524288"} and len(b["cells"]) == 18
    assert all(c["mb_s"] > 0 and c["iops"] > 0 for c in b["cells"])
    # left empty: no array, no md superblock, no signature on any member
    assert "md12" not in vm.read("/proc/mdstat")
    for disk in disks:
        assert vm.run(["mdadm", "--examine", f"/dev/{disk}"]).returncode != 0
        assert vm.run(["wipefs", "--no-act", f"/dev/{disk}"]).stdout.strip() == ""
    assert plan["kind"] == "benchmark"
