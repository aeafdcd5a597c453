"""The sync model (app/model/sync_model.py) against the kernel (issue 22): md's speed limits bound
a sync's *progress* rate (md.c md_do_sync()), so a 4-disk RAID-10 n2 resync at speed_limit_max
4,000 runs at about 4,000 KiB/s of array progress — not 2 × — is "at its ceiling", and lasts
what the model forecasts; a RAID-5 creation recovers its last member only.

The limit itself holds every sync here (4,000 KiB/s is far below what TCG manages), so nothing
races the emulator; the arrays are shrunk with --size to keep each sync near a minute.
"""

from __future__ import annotations

import json
import time

import pytest

from app.model.sync_model import forecast_sync
from tests.vm.kernel import read_md, sectors_written
from tests.vm.machine import VM
from tests.vm.scenarios import SLOW_KIB, create_array, wait_sync_progress

pytestmark = pytest.mark.vm
MD = "md0"
MEMBER_KIB = 96 * 1024  # per member: a RAID-10 n2 of 4 resyncs 192 MiB of array ≈ 48 s at 4,000
REPORT = ["report", "--json", "--no-smart", "--no-audit"]


def _running(vm: VM, md: str) -> tuple[float, int]:
    """(host time, done sectors) of a running sync, read in one request."""
    k = read_md(vm, md)
    t = time.monotonic()
    assert k.completed is not None, k.get("sync_completed")
    return t, k.completed[0]


def test_raid10_resync_is_held_at_the_limit_and_lasts_the_forecast(blank_vm: VM) -> None:
    vm = blank_vm
    vm.set_speed_limits(1000, SLOW_KIB)
    disks = vm.disks(4)
    create_array(vm, MD, "raid10", disks, layout="n2", chunk_kib=64, size_kib=MEMBER_KIB)
    k = wait_sync_progress(vm, MD, min_done=2048)
    assert k.sync_action == "resync"
    t0, done0 = _running(vm, MD)
    members = [(d, MEMBER_KIB * 1024) for d in disks]
    f = forecast_sync(
        array=MD, level="raid10", raid_disks=4, layout="n2", action="resync", members=members,
        initial=True, limit_kib_s=(1000, SLOW_KIB), done_sectors=done0,
    )  # fmt: skip
    assert f.progress_sectors == k.completed[1]  # type: ignore[index]  # array sectors
    assert f.speed_why == "md's limit" and f.duration_s_low is not None

    # some seconds in, raidman says the limit holds it (sync_speed vs the max, same unit)
    time.sleep(8)
    r = vm.raidman(*REPORT, check=True)
    (a,) = [x for x in json.loads(r.stdout)["arrays"] if x["name"] == MD]
    assert a["sync"] is not None and a["sync"]["action"] == "resync", a["sync"]
    speed = a["sync"]["speed_kib_s"]
    vm.note(f"RAID-10 n2 x4 resync at speed_limit_max {SLOW_KIB}: sync_speed {speed} KiB/s")
    assert SLOW_KIB * 0.95 <= speed <= SLOW_KIB * 1.25, speed  # the limit, not 2 × the limit
    assert a["sync"]["at_ceiling"] is True

    vm.wait_idle(MD, timeout=600)
    took = time.monotonic() - t0
    vm.note(f"RAID-10 resync: forecast {f.duration_s_low:.1f} s, took {took:.1f} s")
    assert 0.7 * took <= f.duration_s_low <= 1.3 * took, (f.duration_s_low, took)


def test_raid5_creation_recovers_the_last_member_in_the_forecast_time(blank_vm: VM) -> None:
    vm = blank_vm
    vm.set_speed_limits(1000, SLOW_KIB)
    disks = vm.disks(4)
    before = sectors_written(vm, *disks)
    create_array(vm, MD, "raid5", disks, chunk_kib=64, size_kib=MEMBER_KIB // 2)
    k = wait_sync_progress(vm, MD, min_done=2048)
    assert k.sync_action == "recover"  # mdadm builds it degraded, the last device a spare
    t0, done0 = _running(vm, MD)
    member = MEMBER_KIB // 2 * 1024
    f = forecast_sync(
        array=MD, level="raid5", raid_disks=4, layout="left-symmetric", action="resync",
        members=[(d, member) for d in disks], initial=True, limit_kib_s=(1000, SLOW_KIB),
        done_sectors=done0,
    )  # fmt: skip
    assert f.action == "recover" and f.progress_sectors == k.completed[1]  # type: ignore[index]
    vm.wait_idle(MD, timeout=600)
    took = time.monotonic() - t0
    after = sectors_written(vm, *disks)
    wrote = {d: (after[d] - before[d]) * 512 for d in disks}
    vm.note(
        f"RAID-5 x4 creation wrote {wrote}; forecast {f.duration_s_low:.1f} s, took {took:.1f} s"
    )
    for m in f.members:
        if m.bytes_high:  # the last member: the whole member
            assert wrote[m.device] >= 0.9 * m.member_bytes
        else:  # the others: metadata only
            assert wrote[m.device] <= 0.05 * m.member_bytes
    assert f.members[-1].bytes_low == member
    assert f.duration_s_low is not None
    assert 0.7 * took <= f.duration_s_low <= 1.3 * took, (f.duration_s_low, took)
