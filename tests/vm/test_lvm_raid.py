"""LVM RAID under the real kernel (dm-raid, LVM 2.03): a raid1 LV's initial sync, held by md's
limits, in `report --json` with its progress inside lvs' own bracket and a speed from two looks;
`raidman monitor`'s recorder, started while it is held, records it when it ends (its images' PVs,
the kernel's bytes, the model's forecast); `plan lv-sync check` is `lvchange --syncaction check`
with its consequences once it has ended.

The hold: md throttles only above its min (md.c md_do_sync), so the LV's --maxrecoveryrate
holds it only with dev.raid.speed_limit_min below it (the capture of tests/parsers/samples/
lvm_raid synced at 1,664 KiB/s under --maxrecoveryrate 256K and the default min 1000)."""

from __future__ import annotations

import json

import pytest

from tests.vm.machine import VM

pytestmark = pytest.mark.vm
MAX_KIB = 512  # the LV's --maxrecoveryrate; 64 MiB take ~2 min at this rate
MIB = 1 << 20
STATE = "/tmp/raidman-lvmraid-state"


def _percent(vm: VM) -> float:
    r = vm.run(["lvs", "--reportformat", "json", "-o", "sync_percent", "vgr/r1"], check=True)
    return float(json.loads(r.stdout)["report"][0]["lv"][0]["sync_percent"])


def test_raid1_lv_sync_in_report_and_its_check_plan(blank_vm: VM) -> None:
    vm = blank_vm
    d = vm.disks(2)
    vm.run(["modprobe", "dm-raid"], check=True)
    vm.set_speed_limits(50, None)  # below the LV's max: the max holds it
    vm.sh(f"pvcreate -ff -y /dev/{d[0]} /dev/{d[1]} && vgcreate vgr /dev/{d[0]} /dev/{d[1]}")
    vm.run(
        ["lvcreate", "-y", "--type", "raid1", "-m", "1", "-L", "64M",
         "--maxrecoveryrate", f"{MAX_KIB}K", "-n", "r1", "vgr"],
        check=True, timeout=120,
    )  # fmt: skip
    vm.wait_for(lambda: _percent(vm) > 0.0, 60, "the initial sync to move")

    # md's throttle holds the sync in bursts seconds apart (md_do_sync sleeps while its rate
    # over the last marks is above the max): a report's one-second look may fall between two
    # and then shows no speed (never 0); an admin looking again sees one
    for look in range(4):
        before = _percent(vm)
        report = json.loads(vm.raidman("report", "--json", "--no-smart", "--no-audit").stdout)
        after = _percent(vm)
        (r1,) = [lv for lv in report["lvm"]["lvs"] if lv["name"] == "r1"]
        sync = r1["sync"]
        assert sync is not None and sync["action"] == "resync"
        shown = 100.0 * sync["done_sectors"] / sync["total_sectors"]
        assert before - 0.01 <= shown <= after + 0.01, (before, shown, after)
        assert sync["total_sectors"] == 131072  # one 64 MiB image, in 512-byte sectors
        assert sync["speed_kib_s"] != 0, sync
        if sync["speed_kib_s"] is not None:
            break
        assert sync["eta_s"] is None, sync
        vm.note(f"report {look + 1}: no I/O on the images in its second: no speed")
    assert sync["speed_kib_s"] is not None and sync["eta_s"] is not None
    # held by md's limits, far below what NVMe does even under TCG: a second's burst may be
    # above the max (md throttles the rate over its last marks, ~30 s: seen 1,604 KiB/s under
    # 512) or at the min (after an lvs: md_do_sync's is_mddev_idle)
    assert 0 < sync["speed_kib_s"] < 16 * MAX_KIB, sync
    assert sync["max_speed_kib_s"] == MAX_KIB
    assert sync["at_ceiling"] is (sync["speed_kib_s"] >= 0.95 * MAX_KIB), sync
    raid = r1["raid"]
    assert [i["pvs"] for i in raid["images"]] == [[d[0]], [d[1]]]
    assert raid["dm"]["health"] == "aa" and raid["max_rate_kib_s"] == MAX_KIB
    vm.note(f"LV sync: {before:.2f}% <= {shown:.2f}% <= {after:.2f}%, {sync['speed_kib_s']} KiB/s")

    busy = vm.raidman("plan", "lv-sync", "check", "--lv", "vgr/r1")
    assert busy.returncode == 3 and "is running a resync" in busy.stderr

    # the wear monitor, started while the sync is held, records it; then md's min is raised
    # above the LV's max (in the guest, once the record has begun) and it records the end
    # between, an lvchange of its rate reloads the table: the resync goes on (as "resync", or
    # as a "repair" from recovery_cp: dm-raid.c raid_preresume; both seen) and is the one
    # resync
    got = vm.call(
        "tests.vm.guest_lvm_raid:record_lv_sync", "vgr/r1", d[:2], STATE, reload_kib=2 * MAX_KIB
    )
    vm.note("monitor log:\n" + "\n".join(got["log"]))
    vm.note("trace (s, action, done, KiB/s, images, written to the second PV):\n"
            + "\n".join(str(x) for x in got["trace"]))  # fmt: skip
    vm.set_speed_limits(None, None)
    assert got["reload"]["rc"] == 0, got["reload"]
    assert got["reload"]["records"] == [["resync", True]], got["reload"]
    vm.note(f"dm-raid's words after the reload: {sorted({x[1] for x in got['trace']})}")
    (rec,) = got["records"]  # one sync, recorded once
    assert (rec["array"], rec["action"], rec["outcome"]) == ("vgr/r1", "resync", "finished")
    assert rec["fraction"] == 1.0 and rec["end"] > rec["start"]
    assert [m["device"] for m in rec["members"]] == d[:2]  # the images' PVs
    by = {m["device"]: m["kernel_bytes_written"] for m in rec["members"]}
    # a RAID-1 resync reads the first image and writes the second (raid1.c sync_request): the
    # record's start is the counters of the first look's sample, taken inside a look that
    # also probes (seconds under TCG: the held sync writes meanwhile), its end those of the
    # look that saw it end; ± what dm-raid's superblocks and bitmap wrote
    lo = got["ended"][d[1]] - got["began_after"][d[1]]
    hi = got["ended"][d[1]] - got["began"][d[1]]
    assert lo - MIB <= by[d[1]] <= hi + MIB, (by, lo, hi)
    assert by[d[1]] > 16 * MIB and by[d[0]] < 2 * MIB, by
    fc = rec["forecast"]
    assert fc is not None and fc["source"] == "model" and fc["action"] == "resync"
    assert any(ln.startswith("vgr/r1: resync finished after") for ln in got["log"]), got["log"]
    assert _percent(vm) == 100.0
    vm.note(f"recorded: {rec['forecast_vs_actual']}; kernel bytes {by}")
    plan = json.loads(vm.raidman("plan", "lv-sync", "check", "--lv", "vgr/r1", "--json").stdout)
    assert [s["argv"] for s in plan["steps"]] == [["lvchange", "--syncaction", "check", "vgr/r1"]]
    (fc,) = plan["consequences"]["syncs"]
    assert (fc["array"], fc["action"]) == ("vgr/r1", "check")
    assert {m["device"] for m in fc["members"]} == {d[0], d[1]}
    assert all(m["bytes_written_high"] == 0 for m in fc["members"])


def test_a_lost_pv_the_lvs_health_its_repair_plan_and_the_recorded_recovery(
    blank_vm: VM,
) -> None:
    """vgf on three PVs: raid1 vgf/f1 on the first two (--nosync: no initial sync to wait
    for), vgf/filler taking all of the third. The second PV hot-unplugged (QMP device_del):
    lvm says partial, the tree names it and the image lost; `plan lv-repair` is refused with
    the numbers (the only other PV is full), and once filler is gone planned as `lvconvert
    --yes --repair vgf/f1`; that step run under the wear monitor, the recovery held by the
    LV's --maxrecoveryrate until its record has begun, recorded when it ends."""
    vm = blank_vm
    d = vm.disks(3)
    vm.run(["modprobe", "dm-raid"], check=True)
    vm.set_speed_limits(50, None)  # below the LV's max: the max holds its recovery
    vm.sh(
        f"pvcreate -ff -y /dev/{d[0]} /dev/{d[1]} /dev/{d[2]} && "
        f"vgcreate vgf /dev/{d[0]} /dev/{d[1]} /dev/{d[2]} && "
        f"lvcreate -y --type raid1 -m 1 -L 16M --nosync --maxrecoveryrate {MAX_KIB}K "
        f"-n f1 vgf /dev/{d[0]} /dev/{d[1]} && "
        f"lvcreate -y -l 100%FREE -n filler vgf /dev/{d[2]}"
    )
    vm.unplug_nvme(vm.serial_of(d[1]))  # put back by the next test's reset
    got = vm.call(
        "tests.vm.guest_lvm_raid:fail_and_repair", "vgf/f1", "vgf/filler", STATE, 2 * MAX_KIB
    )
    vm.set_speed_limits(None, None)
    vm.note(f"lvs after the loss: {got['lvs_failed']}; tree: {got['tree']}")
    vm.note("monitor log:\n" + "\n".join(got["log"]))
    vm.note("trace (s, action, done, images, degraded, written per disk before and after the "
            "look, records):\n"
            + "\n".join(str(x) for x in got["trace"]))  # fmt: skip
    raid = got["raid"]
    assert got["lvs_failed"]["lv_health_status"] == "partial", got["lvs_failed"]
    assert raid["health_status"] == "partial" and raid["health_bit"] == "p", raid
    assert [i["pvs"] for i in raid["images"]] == [[d[0]], ["[unknown]"]], raid
    assert got["tree"][0].startswith("f1  16M  raid1  partial"), got["tree"]
    assert got["tree"][1:] == [f"◦ image 0  {d[0]}  in sync", "◦ image 1  [unknown]  failed"]
    assert got["refused"] == (
        "vgf/f1: repairing 1 failed image needs 20.0 MiB free on PVs that hold no surviving "
        "image of it; there is none — add a PV to the VG (vgextend) first"
    ), got["refused"]
    assert got["lvremove"][0] == 0, got["lvremove"]
    assert got["plan"] == [["lvconvert", "--yes", "--repair", "vgf/f1"]]
    assert got["plan_syncs"] == ["recover"]
    assert got["repair"][0] == 0, got["repair"]
    assert got["lvs_after"]["lv_health_status"] == "", got["lvs_after"]
    # the repair's reloads and one more (lvchange): "frozen" looks, the recovery still running
    assert got["reload"]["rc"] == 0 and got["reload"]["records"] == [["recover", True]], got
    (rec,) = got["records"]  # one recovery, recorded once
    assert (rec["array"], rec["action"], rec["outcome"]) == ("vgf/f1", "recover", "finished")
    by = {m["device"]: m["kernel_bytes_written"] for m in rec["members"]}
    # the new image on the third PV is written, the survivor only read
    assert set(by) == {d[0], d[2]}, rec["members"]
    assert by[d[0]] < 2 * MIB, by
    # what the third PV was written: its counter at the look before the record began (read
    # inside that look) to the one at the look that saw it end, each bracketed by
    # /proc/diskstats read just before and after its look. How much that is varies with the
    # reloads (12.7 to 19.2 MiB for the 16 MiB image in four runs: after a reload md goes
    # on from the recovery offset dm-raid's superblock kept, from the bitmap's dirty regions)
    trace = got["trace"]
    i0 = max(i for i, x in enumerate(trace) if not x[7]) if not trace[0][7] else None
    assert i0 is not None, trace[0]  # the first look came before the recovery's record
    (ie,) = [i for i, x in enumerate(trace) if x[7] and not x[7][0][1]][:1]
    lo = trace[ie][5][d[2]] - trace[i0][6][d[2]]
    hi = trace[ie][6][d[2]] - trace[i0][5][d[2]]
    assert lo <= by[d[2]] <= hi and by[d[2]] > 4 * MIB, (by, lo, hi)
    vm.note(f"recorded: {rec.get('forecast_vs_actual')}; kernel bytes {by}")
