"""Wear (issue 5): bytes written per member during each sync, from SMART, vs ``smartctl -j``.

A ``WearMonitor`` runs in the guest over each sync (``tests/vm/guest_sync.py:monitor_sync``): the
sync is held slow until the monitor has taken its sync-start snapshots, with ``smartctl -j -a``
read just before and after them; then it runs fast and ``smartctl`` is read again once the monitor
has recorded the end. QEMU's NVMe counts Data Units Written in units of 1000 × 512 bytes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.vm.kernel import read_md
from tests.vm.machine import VM
from tests.vm.scenarios import FAST_KIB, HOLD_KIB, create_array

pytestmark = pytest.mark.vm
MD = "md0"
UNIT = 512_000  # bytes per NVMe data unit
STATE = "/tmp/raidman-wear-test"


def monitor(
    vm: VM, members: list[str], trigger: list[str] | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """WearMonitor over the sync that is running now, or that ``trigger`` starts;
    (helper's result, the sync's wear)."""
    r: dict[str, Any] = vm.call(
        "tests.vm.guest_sync:monitor_sync",
        MD,
        members,
        STATE,
        fast_max_kib=FAST_KIB,
        trigger=trigger,
    )
    assert r["wear"], r["log"]
    last = r["wear"][-1]
    assert not last["running"] and last["outcome"] == "finished", (last, r["log"])
    vm.note(f"wear: {last['action']} monitored, {r['sync_s']:.1f} s after release: {last['lines']}")
    return r, last


def assert_agrees_with_smartctl(r: dict[str, Any], wear: dict[str, Any], disks: list[str]) -> None:
    """Each member's start/end snapshot lies inside the smartctl reads around it."""
    for d in disks:
        m = wear["members"][d]
        assert m["start"] is not None and m["end"] is not None, (d, m)
        # the sync's start read comes after the trigger, or in the monitor's first tick when
        # the sync ran before it (two CI runs: 1,231 units read in that tick, 1,234 by
        # smartctl after it, a held recovery writing meanwhile): smartctl before that tick is
        # its lower bound
        lo, hi = r["before_tick"][d], r["start_after"][d]
        assert lo is not None and hi is not None, (d, r["before_tick"], r["start_after"])
        assert lo * UNIT <= m["start"] <= hi * UNIT, (d, m["start"], m["start_reason"], lo, hi)
        end = r["end_after"][d]
        # after the sync nothing writes but md's superblock/bitmap updates: at most a unit later
        assert (end - 1) * UNIT <= m["end"] <= end * UNIT, (d, m["end"], end)
        assert m["bytes_written"] == m["end"] - m["start"], (d, m)


def _out(vm: VM, victim: str) -> None:
    """Fail and remove ``victim``, then write 8 MiB to the degraded array."""
    vm.run(["mdadm", f"/dev/{MD}", "--fail", f"/dev/{victim}"], check=True)
    vm.run(["mdadm", f"/dev/{MD}", "--remove", f"/dev/{victim}"], check=True)
    vm.run(
        ["dd", "if=/dev/urandom", f"of=/dev/{MD}", "bs=1M", "count=8", "seek=16", "oflag=direct"],
        check=True,
    )


def _release_when_recovering(vm: VM) -> None:
    """Wait until the kernel runs the recovery (``sync_completed`` only moves every 1/16 of the
    component or 5 minutes, so "progress" cannot be waited for while the sync is held slow)."""
    vm.wait_action(MD, ["recover"], 60)


def test_initial_sync_writes_one_capacity_to_the_target(blank_vm: VM) -> None:
    vm = blank_vm
    disks = vm.disks(4)
    vm.run(["rm", "-rf", STATE], check=True)

    # the whole disks: the spare is written once over, the others (nearly) not at all
    vm.set_speed_limits(1, HOLD_KIB)
    create_array(vm, MD, "raid5", disks, chunk_kib=64)
    _release_when_recovering(vm)
    k = read_md(vm, MD)
    target = {d for d, m in k.members.items() if m.slot is not None and "in_sync" not in m.state}
    assert len(target) == 1, k.members
    (spare,) = target
    component = (k.num("component_size") or 0) * 1024
    assert component > 200 << 20

    r, w = monitor(vm, disks)
    assert w["action"] == "recover"
    assert_agrees_with_smartctl(r, w, disks)
    got = w["members"][spare]["bytes_written"]
    assert 0.9 * component <= got <= 1.1 * component, (got, component)
    cap = w["members"][spare]["capacity_bytes"]
    assert cap and 0.9 <= got / cap <= 1.1, (got, cap)
    assert any(f"to {spare} = {got / cap:.1f} × its capacity" in ln for ln in w["lines"]), w[
        "lines"
    ]
    for d in set(disks) - {spare}:
        assert w["members"][d]["bytes_written"] <= 0.02 * component, (d, w["members"][d])
    vm.note(
        f"wear: initial RAID-5 sync wrote {got} B to {spare} ({got / component:.2f} × component), "
        + ", ".join(f"{d} {w['members'][d]['bytes_written']} B" for d in disks if d != spare)
    )
    k = read_md(vm, MD)
    assert k.in_sync() == set(disks) and k.degraded == 0

    # raidman report --json: SMART bytes per NVMe == smartctl's units × 512000, and the sync
    nvme = sorted(vm.nvme.values())
    rep = vm.call(
        "tests.vm.guest_sync:report_bracket",
        {},
        ["report", "--json", "--no-audit"],
        STATE,
        smart_disks=nvme,
    )
    assert rep["rc"] == 0, rep
    assert rep["smart_before"] == rep["smart_after"], "disks written during the report"
    report = json.loads(rep["stdout"])
    smart = {d["name"]: d.get("smart") for d in report["disks"]}
    for d in nvme:
        s = smart[d]
        assert s is not None and s["available"], (d, s)
        assert s["bytes_written"] == rep["smart_after"][d] * UNIT, (d, s, rep["smart_after"][d])
    syncs = {a["name"]: a["syncs"] for a in report["arrays"]}[MD]
    assert [s["action"] for s in syncs] == ["recover"], syncs
    per = {m["disk"]: m["bytes_written"] for m in syncs[0]["members"]}
    assert per == {d: w["members"][d]["bytes_written"] for d in disks}, per


def test_bitmap_saves_the_rebuild_of_a_readded_member(blank_vm: VM) -> None:
    vm = blank_vm
    disks = vm.disks(4)
    vm.run(["rm", "-rf", STATE], check=True)
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    # small members, a 4 MiB bitmap chunk: an 8 MiB write dirties a few chunks of 64 MiB
    create_array(
        vm,
        MD,
        "raid5",
        disks,
        chunk_kib=64,
        bitmap="internal",
        size_kib=64 * 1024,
        extra=["--bitmap-chunk=4096"],
    )
    vm.wait_idle(MD, 300)
    k = read_md(vm, MD)
    assert k.in_sync() == set(disks) and k.degraded == 0
    component = (k.num("component_size") or 0) * 1024
    chunk = int(vm.read(f"/sys/block/{MD}/md/bitmap/chunksize"))
    assert chunk == 4 << 20

    # re-add WITH the internal bitmap: only the dirty bitmap chunks are rebuilt
    victim = disks[1]
    _out(vm, victim)
    vm.set_speed_limits(1, HOLD_KIB)
    r, w = monitor(vm, disks, ["mdadm", f"/dev/{MD}", "--re-add", f"/dev/{victim}"])
    assert_agrees_with_smartctl(r, w, disks)
    with_bitmap = w["members"][victim]["bytes_written"]
    # the monitor (running when the re-add happened) saw most of what the rebuild wrote
    truth = (r["end_after"][victim] - r["before_trigger"][victim]) * UNIT
    assert with_bitmap >= 0.5 * truth, (with_bitmap, truth, r["trace"])
    # 8 MiB over 3 data members: ~2.7 MiB per member, i.e. one or two 4 MiB chunks (+ slack)
    assert 0 < with_bitmap <= 3 * chunk, (with_bitmap, chunk)

    # the same without a bitmap: --re-add is refused, --add rebuilds everything
    vm.run(["mdadm", "--grow", f"/dev/{MD}", "--bitmap=none"], check=True)
    assert (read_md(vm, MD).get("bitmap/location") or "none") == "none"
    _out(vm, victim)
    vm.set_speed_limits(1, HOLD_KIB)
    readd = vm.run(["mdadm", f"/dev/{MD}", "--re-add", f"/dev/{victim}"])
    assert not readd.ok
    vm.run(["mdadm", f"/dev/{MD}", "--add", f"/dev/{victim}"], check=True)
    _release_when_recovering(vm)
    r, w = monitor(vm, disks)
    assert_agrees_with_smartctl(r, w, disks)
    without_bitmap = w["members"][victim]["bytes_written"]
    assert 0.9 * component <= without_bitmap <= 1.1 * component, (without_bitmap, component)
    assert with_bitmap * 4 < without_bitmap, (with_bitmap, without_bitmap)
    vm.note(
        f"wear: re-add of {victim} wrote {with_bitmap} B with a {chunk >> 20} MiB-chunk bitmap, "
        f"{without_bitmap} B without ({without_bitmap / with_bitmap:.1f}×; component {component} B)"
    )
