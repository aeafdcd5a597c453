"""Watching syncs (issue 4): what raidman reports about a running sync vs sysfs at the same moment.

Every comparison brackets the raidman read (``raidman report --json``, ``LinuxBackend().sample()``
fed to a ``SyncTracker``) between two reads of the kernel's files in the same guest process
(``tests/vm/guest_sync.py``); a value that moved in between may be anything inside the bracket.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from tests.vm.kernel import KernelMd, md_paths, read_md
from tests.vm.machine import VM
from tests.vm.scenarios import FAST_KIB, create_array, hold_sync, wait_sync_progress

pytestmark = pytest.mark.vm
MD = "md0"
REPORT = ["report", "--json", "--no-smart", "--no-audit"]
SMALL_KIB = 32 * 1024  # component size of the small arrays: syncs of a few seconds when fast


# ---- helpers -----------------------------------------------------------------------------------
def _specs(md: str = MD) -> dict[str, Any]:
    paths, globs = md_paths(md)
    return {md: [paths, globs]}


def report_bracket(vm: VM, md: str = MD) -> tuple[KernelMd, dict[str, Any], KernelMd]:
    """(sysfs before, ``raidman report --json``'s array ``md``, sysfs after), one guest process."""
    r = vm.call("tests.vm.guest_sync:report_bracket", _specs(md), REPORT)
    assert r["rc"] == 0, r
    report = json.loads(r["stdout"])
    arrays = {a["name"]: a for a in report["arrays"]}
    assert md in arrays, sorted(arrays)
    return KernelMd.parse(md, r["before"][md]), arrays[md], KernelMd.parse(md, r["after"][md])


def _between(got: float, a: float, b: float, rel: float = 0.0, abs_: float = 0.0) -> bool:
    lo, hi = min(a, b), max(a, b)
    return lo * (1 - rel) - abs_ <= got <= hi * (1 + rel) + abs_


def _kernel_eta(k: KernelMd) -> float | None:
    c, speed = k.completed, k.num("sync_speed")
    if c is None or not speed:
        return None
    return (c[1] - c[0]) / 2 / speed


def rebuilding(k: KernelMd) -> set[str]:
    """Members the kernel is rebuilding: in a slot, not in_sync, not faulty."""
    return {
        d
        for d, m in k.members.items()
        if m.slot is not None and not m.state & {"in_sync", "faulty"}
    }


def assert_sync_matches(sync: dict[str, Any] | None, kb: KernelMd, ka: KernelMd) -> None:
    """raidman's sync (report JSON or a SyncView as dict) vs sysfs read just before/after."""
    assert sync is not None, (kb.sync_action, ka.sync_action)
    assert sync["action"] in {kb.sync_action, ka.sync_action}, (sync["action"], kb.sync_action)
    cb, ca = kb.completed, ka.completed
    assert cb is not None and ca is not None, (kb.get("sync_completed"), ka.get("sync_completed"))
    # done/total: within the two samples that bracket raidman's read
    assert _between(sync["done_sectors"], cb[0], ca[0]), (sync["done_sectors"], cb, ca)
    assert sync["total_sectors"] in (cb[1], ca[1]), (sync["total_sectors"], cb, ca)
    # speed: the kernel's sync_speed, within 10 % of the bracket
    sb, sa = kb.num("sync_speed"), ka.num("sync_speed")
    assert sb is not None and sa is not None, (kb.get("sync_speed"), ka.get("sync_speed"))
    assert sync["speed_kib_s"] is not None and sync["speed_kib_s"] > 0
    # md's figure is the sectors done since its oldest mark over the WHOLE seconds since it
    # (md.c sync_speed_show: dt = (jiffies - resync_mark) / HZ): while the marks are young (a
    # sync's first ~30 s, SYNC_MARKS x SYNC_MARK_STEP, or a limit just changed) it steps by up
    # to (dt+1)/dt, at most 2x, from one read to the next (seen: 2176, then 1088 as raidman
    # read it, then 2112). raidman shows the kernel's figure as read: within the bracket, or
    # one such step from it
    got = sync["speed_kib_s"]
    assert _between(got, sb, sa, rel=0.10) or _between(got, sb / 2, sa * 2, rel=0.10), (
        got,
        sb,
        sa,
    )
    # ETA: what is left at the current speed, as md computes its finish= (md.c status_resync:
    # the sectors left over the same mark-based speed). The figure raidman read is checked
    # against the bracket above; its ETA is that figure's, so within the bracket's ETAs when
    # the speed is, and md's formula applied to what raidman read in every case (a speed read
    # one mark-step from the bracket gives an ETA the bracket cannot hold: seen 597 KiB/s read
    # between 896 and 1792, ETA 51.9 s against 34.6 and 15.3)
    eb, ea = _kernel_eta(kb), _kernel_eta(ka)
    assert eb is not None and ea is not None
    eta = sync["eta_s"]
    assert eta is not None
    own = max(0, sync["total_sectors"] - sync["done_sectors"]) / 2 / got
    assert eta == pytest.approx(own, rel=0.01, abs=0.5), (eta, own)
    if _between(got, sb, sa, rel=0.10):
        assert _between(eta, eb, ea, rel=0.10, abs_=1.0), (eta, eb, ea)


def track(
    vm: VM, *, slow_samples: int = 5, fast: bool = True, timeout: float = 90.0
) -> dict[str, Any]:
    """A SyncTracker fed once a second in the guest until the sync has ended (sped up after
    ``slow_samples`` samples when ``fast``)."""
    r: dict[str, Any] = vm.call(
        "tests.vm.guest_sync:track",
        _specs(),
        MD,
        slow_samples=slow_samples,
        fast_max_kib=FAST_KIB if fast else None,
        until_s=timeout,
    )
    return r


def assert_views_match(rows: list[dict[str, Any]], action: str) -> int:
    """Every SyncView the tracker gave while the sync ran agrees with its sysfs bracket;
    returns how many were compared."""
    n = 0
    for row in rows:
        kb = KernelMd.parse(MD, row["before"][MD])
        ka = KernelMd.parse(MD, row["after"][MD])
        if kb.sync_action != action or ka.sync_action != action:
            continue  # the sync started or ended between the two reads
        if "none" in (kb.get("sync_speed"), ka.get("sync_speed"), ka.get("sync_completed")):
            continue  # ended, sync_action not yet "idle": md clears the speed first
        views = row["views"]
        assert len(views) == 1, views
        if views[0]["done_sectors"] is None:
            # raidman's own read of sync_completed, between the brackets, had no count: the
            # kernel printed none then (seen once in a loaded CI run), else raidman lost it
            mid = row["read"].get(f"/sys/block/{MD}/md/sync_completed")
            assert mid is not None and "/" not in mid, (mid, views[0])
            continue
        assert_sync_matches(views[0], kb, ka)
        assert set(views[0]["targets"]) in (rebuilding(kb), rebuilding(ka)), views[0]
        n += 1
    return n


def _small_synced(vm: VM, level: str, n: int, **kw: Any) -> list[str]:
    disks = vm.disks(n)
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    create_array(vm, MD, level, disks, chunk_kib=64, size_kib=SMALL_KIB, **kw)
    vm.wait_idle(MD, 300)
    k = read_md(vm, MD)
    assert k.in_sync() == set(disks) and k.degraded == 0
    return disks


# ---- 1. RAID-5 initial sync --------------------------------------------------------------------
def test_raid5_initial_sync_is_watched(blank_vm: VM) -> None:
    vm = blank_vm
    disks = vm.disks(4)
    vm.set_speed_limits(1000, 2000)  # 64 MiB at 2 MB/s: ~30 s unless sped up
    create_array(vm, MD, "raid5", disks, chunk_kib=64, size_kib=64 * 1024)
    k = wait_sync_progress(vm, MD, min_done=2048)
    hold_sync(vm)  # held running while report_bracket looks, however slow it is
    assert k.sync_action == "recover"  # mdadm builds RAID-5 degraded + a spare
    assert rebuilding(k) == {disks[3]}

    kb, arr, ka = report_bracket(vm)
    assert_sync_matches(arr["sync"], kb, ka)
    assert arr["sync"]["action"] == "recover"
    assert set(arr["sync"]["targets"]) == rebuilding(kb) == rebuilding(ka) == {disks[3]}
    if os.environ.get("RAIDMAN_VM_UPDATE_FIXTURES") == "1":
        vm.capture("sync-raid5-recover", smart=False)
    vm.set_speed_limits(1000, 2000)  # released to its watched pace

    r = track(vm, slow_samples=5)
    rows = r["rows"]
    compared = assert_views_match(rows, "recover")
    assert compared >= 4, f"only {compared} samples during the sync ({len(rows)} rows)"
    started = [e for row in rows for e in row["events"] if e["kind"] == "sync-started"]
    assert [e["array"] for e in started] == [MD]
    # the end: the kernel is idle and not degraded; the tracker saw a completed recovery
    final = KernelMd.parse(MD, r["final"][MD])
    assert final.sync_action == "idle" and final.degraded == 0
    assert final.get("last_sync_action") == "recovery"
    assert len(r["finished"]) == 1, r["finished"]
    fin = r["finished"][0]
    assert fin["action"] == "recover" and fin["completed"] is True, fin
    assert k.completed is not None and fin["total_sectors"] == k.completed[1], (fin, k.completed)
    ended = [e for row in rows for e in row["events"] if e["kind"] == "sync-ended"]
    assert len(ended) == 1 and "finished" in ended[0]["message"], ended
    vm.note(f"tracker: {compared} samples compared with sysfs, sync finished in {len(rows)} s")


# ---- 2. RAID-10 recovery -----------------------------------------------------------------------
def test_raid10_recovery_is_watched(blank_vm: VM) -> None:
    vm = blank_vm
    disks = _small_synced(vm, "raid10", 4)
    victim = disks[2]
    vm.run(["mdadm", f"/dev/{MD}", "--fail", f"/dev/{victim}"], check=True)
    vm.run(["mdadm", f"/dev/{MD}", "--remove", f"/dev/{victim}"], check=True)
    vm.set_speed_limits(1000, 1500)
    vm.run(["mdadm", f"/dev/{MD}", "--add", f"/dev/{victim}"], check=True)
    k = wait_sync_progress(vm, MD, min_done=1024)
    hold_sync(vm)  # held running while report_bracket looks, however slow it is
    assert k.sync_action == "recover" and rebuilding(k) == {victim}

    kb, arr, ka = report_bracket(vm)
    assert_sync_matches(arr["sync"], kb, ka)
    assert arr["sync"]["action"] == "recover"
    assert victim in arr["sync"]["targets"]
    assert set(arr["sync"]["targets"]) in (rebuilding(kb), rebuilding(ka))
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    vm.wait_idle(MD, 300)


# ---- 3. check ----------------------------------------------------------------------------------
def test_check_and_its_mismatch_count(blank_vm: VM) -> None:
    vm = blank_vm
    disks = _small_synced(vm, "raid5", 4)
    k = read_md(vm, MD)
    # corrupt 256 KiB of one member underneath md, so the check has something to count
    offset = k.members[disks[1]].offset
    assert offset is not None
    vm.run(
        [
            "dd",
            "if=/dev/urandom",
            f"of=/dev/{disks[1]}",
            "bs=4096",
            "count=64",
            f"seek={(offset * 512 + (4 << 20)) // 4096}",
            "oflag=direct",
            "conv=notrunc",
        ],
        check=True,
    )
    # left at its own pace to the end, ~25 s (a 1 Hz watcher judges "completed" from the last
    # samples; a limit raised within the last second would make the end look like a stop)
    vm.set_speed_limits(1000, 1200)
    vm.write(f"/sys/block/{MD}/md/sync_action", "check\n")
    k = wait_sync_progress(vm, MD, min_done=1024)
    hold_sync(vm)  # held running while report_bracket looks, however slow it is
    assert k.sync_action == "check"

    kb, arr, ka = report_bracket(vm)
    assert_sync_matches(arr["sync"], kb, ka)
    assert arr["sync"]["action"] == "check"
    assert arr["sync"]["targets"] == []
    mm = arr["sync"]["mismatch_cnt"]
    assert mm is not None and _between(mm, kb.num("mismatch_cnt") or 0, ka.num("mismatch_cnt") or 0)

    vm.set_speed_limits(1000, 1200)  # released to its own pace, to the end
    r = track(vm, fast=False, timeout=60)
    assert assert_views_match(r["rows"], "check") >= 3
    final = KernelMd.parse(MD, r["final"][MD])
    assert final.sync_action == "idle" and final.get("last_sync_action") == "check"
    kernel_mm = final.num("mismatch_cnt")
    assert kernel_mm is not None and kernel_mm > 0, final.get("mismatch_cnt")
    assert len(r["finished"]) == 1, r["finished"]
    fin = r["finished"][0]
    assert fin["action"] == "check" and fin["completed"] is True, fin
    assert fin["mismatch_cnt"] == kernel_mm, (fin["mismatch_cnt"], kernel_mm)
    ended = [e for row in r["rows"] for e in row["events"] if e["kind"] == "sync-ended"]
    assert len(ended) == 1 and f"mismatch_cnt {kernel_mm}" in ended[0]["message"], ended
    vm.note(f"check: mismatch_cnt {kernel_mm} after corrupting 256 KiB of one RAID-5 member")


# ---- 4. reshape --------------------------------------------------------------------------------
def test_raid5_grow_reshape_is_watched(blank_vm: VM) -> None:
    vm = blank_vm
    disks = vm.disks(4)
    _small_synced(vm, "raid5", 3)
    vm.run(["mdadm", f"/dev/{MD}", "--add", f"/dev/{disks[3]}"], check=True)
    vm.set_speed_limits(1000, 1500)
    vm.run(
        [
            "mdadm",
            "--grow",
            f"/dev/{MD}",
            "--raid-devices=4",
            f"--backup-file=/tmp/{MD}-sync-watch.backup",
        ],
        check=True,
        timeout=120,
    )
    k = wait_sync_progress(vm, MD, min_done=1024, timeout=120)
    hold_sync(vm)  # held running while report_bracket looks, however slow it is
    assert k.sync_action == "reshape"
    assert k.get("raid_disks") == "4 (3)"

    kb, arr, ka = report_bracket(vm)
    assert_sync_matches(arr["sync"], kb, ka)
    assert arr["sync"]["action"] == "reshape"
    pos = arr["sync"]["reshape_position"]
    assert pos is not None
    assert _between(pos, kb.num("reshape_position") or 0, ka.num("reshape_position") or 0)
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    vm.wait_idle(MD, 300)
    vm.wait_for(lambda: read_md(vm, MD).get("raid_disks") == "4", 60, "reshape settled")


# ---- 5. boost ----------------------------------------------------------------------------------
def _limits(vm: VM) -> tuple[int, int]:
    d = vm.read_many(["/proc/sys/dev/raid/speed_limit_min", "/proc/sys/dev/raid/speed_limit_max"])
    return (
        int(d["/proc/sys/dev/raid/speed_limit_min"] or "-1"),
        int(d["/proc/sys/dev/raid/speed_limit_max"] or "-1"),
    )


def test_boost_raises_and_later_restores_limits(blank_vm: VM) -> None:
    vm = blank_vm
    disks = vm.disks(4)
    state = "/tmp/raidman-boost-test"
    vm.run(["rm", "-rf", state], check=True)
    vm.set_speed_limits(1111, 2222)  # distinctive "previous" values
    create_array(vm, MD, "raid5", disks, chunk_kib=64, size_kib=SMALL_KIB)
    wait_sync_progress(vm, MD, min_done=1024)
    assert _limits(vm) == (1111, 2222)
    stripe_before = int(vm.read(f"/sys/block/{MD}/md/stripe_cache_size"))

    b = vm.call("tests.vm.guest_sync:boost", MD, state, 150_000, 900_000)
    assert not b["failed"], b["summary"]
    assert b["action"] == "recover"
    # raised, read back from the kernel's files (by the helper, and again now)
    assert b["after"] == {
        "/proc/sys/dev/raid/speed_limit_min": "150000",
        "/proc/sys/dev/raid/speed_limit_max": "900000",
    }, b
    assert _limits(vm) == (150_000, 900_000)
    assert int(b["stripe_after"][f"/sys/block/{MD}/md/stripe_cache_size"] or 0) > stripe_before
    # persisted: a new BoostStore reads back what is to be restored
    assert b["on_disk"] and b["reread"] == [b["record"]], b
    prev = b["reread"][0]["previous"]
    assert prev["sysctl:dev.raid.speed_limit_min"] == "1111"
    assert prev["sysctl:dev.raid.speed_limit_max"] == "2222"
    assert prev[f"sysfs:/sys/block/{MD}/md/stripe_cache_size"] == str(stripe_before)

    vm.wait_idle(MD, 300)  # the boosted sync ends
    assert _limits(vm) == (150_000, 900_000)  # nothing restores behind our back

    r = vm.call("tests.vm.guest_sync:restore", state)
    assert r["due"] == [MD], r
    assert all(x["ok"] for x in r["results"]), r["results"]
    assert _limits(vm) == (1111, 2222)
    assert int(vm.read(f"/sys/block/{MD}/md/stripe_cache_size")) == stripe_before
    assert r["left"] == []
