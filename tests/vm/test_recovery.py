"""Members: fail/remove/add (recovery), re-add with and without a bitmap, spare takeover, check."""

from __future__ import annotations

import pytest

from tests.vm.kernel import read_md, sectors_written
from tests.vm.machine import VM
from tests.vm.scenarios import (
    FAST_KIB,
    SLOW_KIB,
    create_array,
    finish_or_skip_model,
    hold_sync,
    model_check,
    timed_idle,
    wait_sync_progress,
)

pytestmark = pytest.mark.vm
MD = "md0"


def _synced(vm: VM, level: str, n: int, *, bitmap: str = "none", spares: int = 0) -> list[str]:
    """A fully synced array; returns its member disks (spares last)."""
    disks = vm.disks(n + spares)
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    create_array(vm, MD, level, disks[:n], spares=disks[n:], chunk_kib=64, bitmap=bitmap)
    vm.wait_idle(MD, 600)
    k = read_md(vm, MD)
    assert k.in_sync() == set(disks[:n]) and k.degraded == 0
    return disks


def test_fail_remove_add_recovers(blank_vm: VM) -> None:
    vm = blank_vm
    disks = _synced(vm, "raid10", 4)
    victim = disks[1]

    vm.run(["mdadm", f"/dev/{MD}", "--fail", f"/dev/{victim}"], check=True)
    k = read_md(vm, MD)
    assert "faulty" in k.members[victim].state
    assert k.degraded == 1
    assert "[U_UU]" in k.mdstat_block
    b = model_check(vm, MD)

    vm.run(["mdadm", f"/dev/{MD}", "--remove", f"/dev/{victim}"], check=True)
    k = read_md(vm, MD)
    assert victim not in k.members and k.degraded == 1
    model_check(vm, MD)

    vm.set_speed_limits(1000, SLOW_KIB)
    vm.run(["mdadm", f"/dev/{MD}", "--add", f"/dev/{victim}"], check=True)
    k = wait_sync_progress(vm, MD, min_done=1024)
    hold_sync(vm)  # held running while it is looked at; released below
    assert k.sync_action == "recover"
    m = k.members[victim]
    assert m.slot == 1 and "in_sync" not in m.state  # rebuilding into its old slot
    mid = model_check(vm, MD)
    if mid is not None:
        arr = mid.array(MD)
        assert arr["sync"]["action"] == "recover"
        assert victim in arr["sync"]["targets"]
        member = next(x for x in arr["members"] if x["device"] == victim)
        assert member["slot"] == 1
    vm.capture("raid10-recovering", smart=False)

    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    vm.note(f"timing: raid10 recovery after --add: {timed_idle(vm, MD):.1f} s after the boost")
    k = read_md(vm, MD)
    assert k.in_sync() == set(disks[:4]) and k.degraded == 0
    assert k.get("last_sync_action") == "recovery"
    model_check(vm, MD)
    vm.capture("raid10-recovered", smart=False)
    finish_or_skip_model(b)


def _out_and_back(vm: VM, victim: str, *, bitmap: bool) -> tuple[int, float]:
    """Fail+remove ``victim``, write 8 MiB to the array, put it back; (sectors the kernel wrote
    to it while rebuilding, seconds until idle)."""
    vm.run(["mdadm", f"/dev/{MD}", "--fail", f"/dev/{victim}"], check=True)
    vm.run(["mdadm", f"/dev/{MD}", "--remove", f"/dev/{victim}"], check=True)
    vm.run(
        ["dd", "if=/dev/urandom", f"of=/dev/{MD}", "bs=1M", "count=8", "seek=16", "oflag=direct"],
        check=True,
    )
    before = sectors_written(vm, victim)[victim]
    readd = vm.run(["mdadm", f"/dev/{MD}", "--re-add", f"/dev/{victim}"])
    if bitmap:
        assert readd.ok, readd.stderr
    else:  # no bitmap and writes happened meanwhile: the kernel cannot take it back as it is
        assert not readd.ok
        assert "re-add" in readd.stderr
        vm.run(["mdadm", f"/dev/{MD}", "--add", f"/dev/{victim}"], check=True)
    secs = timed_idle(vm, MD)
    written = sectors_written(vm, victim)[victim] - before
    k = read_md(vm, MD)
    assert k.in_sync() == set(k.members) and k.degraded == 0
    return written, secs


def test_readd_with_bitmap_rebuilds_only_what_changed(blank_vm: VM) -> None:
    vm = blank_vm
    disks = _synced(vm, "raid5", 4, bitmap="internal")
    k = read_md(vm, MD)
    assert k.get("bitmap/location") not in (None, "none")
    b = model_check(vm, MD)
    if b is not None:
        assert b.array(MD)["bitmap"] is not None
    written, secs = _out_and_back(vm, disks[2], bitmap=True)
    component = (k.num("component_size") or 0) * 2  # sectors
    vm.note(f"re-add with bitmap: {written} sectors rebuilt of {component} ({secs:.1f} s)")
    # the bitmap marks dirty regions in bitmap chunks: only those chunks are rebuilt
    chunk = int(vm.read(f"/sys/block/{MD}/md/bitmap/chunksize"))
    vm.note(f"bitmap chunk: {chunk // 1024} KiB")
    assert 0 < written * 512 <= 2 * chunk + (1 << 20), (written, chunk)
    assert written < component // 2, (written, component)
    finish_or_skip_model(b)


def test_readd_without_bitmap_is_a_full_recovery(blank_vm: VM) -> None:
    vm = blank_vm
    disks = _synced(vm, "raid5", 4, bitmap="none")
    k = read_md(vm, MD)
    assert k.get("bitmap/location") in (None, "none")
    b = model_check(vm, MD)
    if b is not None:
        assert b.array(MD)["bitmap"] is None
    written, secs = _out_and_back(vm, disks[2], bitmap=False)
    component = (k.num("component_size") or 0) * 2
    vm.note(f"re-add without bitmap: {written} sectors rebuilt of {component} ({secs:.1f} s)")
    assert written >= component * 0.95, (written, component)
    finish_or_skip_model(b)


def test_spare_takes_over(blank_vm: VM) -> None:
    vm = blank_vm
    disks = _synced(vm, "raid5", 3, spares=1)
    spare = disks[3]
    k = read_md(vm, MD)
    assert k.members[spare].slot is None and k.members[spare].state == {"spare"}
    b = model_check(vm, MD)

    vm.set_speed_limits(1000, SLOW_KIB)
    vm.run(["mdadm", f"/dev/{MD}", "--fail", f"/dev/{disks[0]}"], check=True)
    k = wait_sync_progress(vm, MD, min_done=1024)
    hold_sync(vm)  # held running while it is looked at; released below
    assert k.sync_action == "recover"
    assert "faulty" in k.members[disks[0]].state
    assert k.members[spare].slot == 0  # took the failed member's slot
    assert "in_sync" not in k.members[spare].state
    mid = model_check(vm, MD)
    if mid is not None:
        arr = mid.array(MD)
        assert arr["sync"]["targets"] == [spare]
    vm.capture("raid5-spare-rebuilding", smart=False)

    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    timed_idle(vm, MD)
    k = read_md(vm, MD)
    assert k.in_sync() == set(disks[1:]) and k.degraded == 0
    model_check(vm, MD)
    vm.capture("raid5-spare-took-over", smart=True)
    finish_or_skip_model(b)


def test_check_counts_mismatches(blank_vm: VM) -> None:
    vm = blank_vm
    disks = _synced(vm, "raid1", 2)
    k = read_md(vm, MD)

    # a clean check: the kernel runs "check" and finds nothing
    vm.set_speed_limits(1000, SLOW_KIB)
    vm.write(f"/sys/block/{MD}/md/sync_action", "check\n")
    k = wait_sync_progress(vm, MD, min_done=1024)
    hold_sync(vm)  # held running while it is looked at; released below
    assert k.sync_action == "check"
    b = model_check(vm, MD)
    if b is not None:
        assert b.array(MD)["sync"]["action"] == "check"
    vm.capture("raid1-checking", smart=False)
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    timed_idle(vm, MD)
    k = read_md(vm, MD)
    assert k.get("last_sync_action") == "check" and k.num("mismatch_cnt") == 0

    # corrupt one mirror underneath md, then check again: the kernel counts the mismatch
    offset = k.members[disks[1]].offset
    assert offset is not None
    vm.run(
        [
            "dd",
            "if=/dev/urandom",
            f"of=/dev/{disks[1]}",
            "bs=4096",
            "count=64",
            f"seek={(offset * 512 + (8 << 20)) // 4096}",
            "oflag=direct",
            "conv=notrunc",
        ],
        check=True,
    )
    vm.write(f"/sys/block/{MD}/md/sync_action", "check\n")
    vm.wait_action(MD, ["check", "idle"], 30)
    timed_idle(vm, MD)
    k = read_md(vm, MD)
    mismatches = k.num("mismatch_cnt") or 0
    vm.note(f"check after corrupting 256 KiB of one mirror: mismatch_cnt={mismatches}")
    assert mismatches >= 512  # sectors, at least the 256 KiB written
    if b is not None:
        sample = vm.call("tests.vm.guest:sample_asdict")
        live = next(a for a in sample["arrays"] if a["name"] == MD)
        assert live["mismatch_cnt"] == mismatches
        assert live["last_sync_action"] == "check"
    vm.capture("raid1-check-mismatch", smart=False)
    finish_or_skip_model(b)
