"""Wear of partitioned members (issue 22, item 4, its Done-when): two arrays on partitions of the
same four NVMe disks — a RAID-1 on the first partitions (a /boot), a RAID-5 on the second — and
32 MiB written to the RAID-1 while the RAID-5's initial recovery runs (held slow by md's limit
until the write is done: never raced). The RAID-5's record holds only its own partitions'
writes: within 5 % or 2 MiB of the kernel's own per-partition counters
(``/sys/class/block/<partition>/stat``, sectors written) over the same window; the whole disk's
figure beside it has the RAID-1's 32 MiB as well. Before: the record credited the whole disk
(33.6 MB to nvme0n1p2 where the kernel counted 13 kB for that partition)."""

from __future__ import annotations

import os
import subprocess
import time
from typing import Any

import pytest

MIB = 1 << 20
BOOT, DATA = "md1", "md2"
STATE = "/tmp/raidman-wear-partitions"
LIMITS = ("/proc/sys/dev/raid/speed_limit_min", "/proc/sys/dev/raid/speed_limit_max")


# ---- in the guest (vm.call) --------------------------------------------------------------------
def _written(names: list[str]) -> dict[str, int]:
    """Bytes written per block device, the kernel's count (stat field 7: 512-byte sectors)."""
    out: dict[str, int] = {}
    for n in names:
        with open(f"/sys/class/block/{n}/stat") as f:
            out[n] = int(f.read().split()[6]) * 512
    return out


def record_beside_write(
    create: list[str], parts: list[str], disks: list[str], fast_max_kib: int, write_mib: int
) -> dict[str, Any]:
    """A ``WearMonitor`` over the RAID-5's creation (``create``, run after its first tick): tick
    until its sync is recorded as running, write ``write_mib`` to the RAID-1, tick, let the sync
    run fast, tick until its end is recorded. The kernel's counters of every partition and disk
    are read just before ``create`` and just after the last tick."""
    from app.monitor import WearMonitor
    from app.wear.report import syncs_json
    from app.wear.snapshots import SnapshotStore
    from backends.linux import LinuxBackend

    os.makedirs(STATE, exist_ok=True)
    os.environ["RAIDMAN_STATE_DIR"] = STATE
    store = SnapshotStore.open()
    log: list[str] = []
    mon = WearMonitor(LinuxBackend(), store, interval_s=1e9, log=log.append)
    mon.tick()
    before = _written(parts + disks)
    subprocess.run(create, input="y\n", text=True, check=True, capture_output=True, timeout=120)
    t_end = time.monotonic() + 300
    while time.monotonic() < t_end and not any(s.running for s in store.syncs_for(DATA)):
        mon.tick()
        time.sleep(0.5)
    subprocess.run(
        ["dd", "if=/dev/urandom", f"of=/dev/{BOOT}", "bs=1M", f"count={write_mib}",
         "oflag=direct"],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    mon.tick()
    with open(LIMITS[1], "w") as f:
        f.write(f"{fast_max_kib}\n")
    while time.monotonic() < t_end and any(s.running for s in store.syncs_for(DATA)):
        mon.tick()
        time.sleep(0.5)
    mon.tick()
    after = _written(parts + disks)
    out = {
        "before": before,
        "after": after,
        "data": syncs_json(store, DATA),
        "boot": syncs_json(store, BOOT),
        "log": log,
    }
    store.close()
    return out


# ---- on the host --------------------------------------------------------------------------------
@pytest.mark.vm
def test_a_sync_on_partitions_holds_only_its_own_partitions_writes(blank_vm: Any) -> None:
    from tests.vm.scenarios import FAST_KIB, HOLD_KIB, create_array

    vm = blank_vm
    disks = vm.disks(4)
    vm.run(["rm", "-rf", STATE], check=True)
    p1: list[str] = []
    p2: list[str] = []
    for d in disks:
        vm.sh(
            f"parted -s /dev/{d} mklabel gpt mkpart boot 1MiB 49MiB mkpart data 49MiB 129MiB\n"
            f"partx -u /dev/{d} || true\nudevadm settle || true"
        )
        sep = "p" if d[-1].isdigit() else ""
        p1.append(f"{d}{sep}1")
        p2.append(f"{d}{sep}2")
    # the /boot RAID-1 first, its resync over before the data array exists (md would hold the
    # second one back anyway: resync=DELAYED on arrays sharing a disk)
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    create_array(vm, BOOT, "raid1", p1)
    vm.wait_idle(BOOT, 300)
    # the RAID-5 is created inside the guest helper, its recovery held until the write is done
    vm.set_speed_limits(1, HOLD_KIB)
    create = ["mdadm", "--create", f"/dev/{DATA}", "--run", "--metadata=1.2", "--level=5",
              "--raid-devices=4", "--chunk=64", "--bitmap=none", *(f"/dev/{p}" for p in p2)]  # fmt: skip
    r = vm.call(
        "tests.vm.test_wear_partitions:record_beside_write",
        create, p1 + p2, disks, FAST_KIB, 32, timeout=900,
    )  # fmt: skip
    vm.set_speed_limits(None, None)
    (rec,) = r["data"]
    assert rec["outcome"] == "finished" and rec["action"] == "recover", (rec, r["log"])
    kernel = {n: r["after"][n] - r["before"][n] for n in r["before"]}
    got = {m["device"]: m for m in rec["members"]}
    assert set(got) == set(p2), got
    for p, disk in zip(p2, disks, strict=True):
        m = got[p]
        assert m["kernel_scope"] == "member", m
        k = kernel[p]
        assert abs(m["kernel_bytes_written"] - k) <= max(0.05 * k, 2 * MIB), (p, m, k)
        # the disk's figure beside it has the RAID-1's 32 MiB (each mirror) as well
        assert m["disk_kernel_bytes_written"] >= m["kernel_bytes_written"] + 30 * MIB, (p, m)
        assert kernel[disk] >= k + 32 * MIB
    last = p2[-1]
    member = got[last]["member_bytes"]
    assert 0.9 <= got[last]["kernel_bytes_written"] / member <= 1.02, got[last]
    for p in p2[:-1]:  # only read by the recovery: the superblock's few kB
        assert got[p]["kernel_bytes_written"] <= 2 * MIB, got[p]
    vm.note(
        "wear partitions: RAID-5 record "
        + ", ".join(f"{p} {got[p]['kernel_bytes_written']} B (kernel {kernel[p]})" for p in p2)
        + f"; disks {', '.join(f'{d} {kernel[d]}' for d in disks)}; forecast "
        + str(rec.get("forecast_vs_actual"))
    )
