"""Scenario lvm-raid (backends/simulated/scenario_lvm_raid.py): the same RaidLv model the Linux
probe reads, a sync that moves with the clock, dmsetup's status line in dm-raid.rst's format
(parsed back by the real parser), lvchange --syncaction refused while a sync runs, a check that
counts what the scenario planted."""

from __future__ import annotations

from app.parsers.lvm_raid import DMSETUP_RAID_ARGV, parse_raid_status
from app.report import full_report_json
from app.rules.engine import audit
from backends.simulated import SimClock, SimulatedBackend
from tests.simulated.test_scenarios import consistent


def _backend() -> SimulatedBackend:
    return SimulatedBackend.from_scenario("lvm-raid", clock=SimClock.manual())


def test_the_raid_lvs_as_the_probe_reads_them() -> None:
    b = _backend()
    m = b.probe()
    consistent(m)
    r1 = m.lv("vgr", "r1")
    assert r1 is not None and r1.raid is not None and r1.raid.dm is not None
    assert r1.raid.dm.sync_action == "resync" and r1.raid.dm.health == "aa"
    assert r1.raid.sync_percent == 40.0 and r1.raid.max_rate_kib_s == 256
    assert [i.pvs for i in r1.raid.images] == [("nvme0n1",), ("nvme1n1",)]
    r5 = m.lv("vgr", "r5")
    assert r5 is not None and r5.raid is not None
    assert r5.raid.mismatches == 512 and r5.raid.health_bit == "m" and r5.attr[8] == "m"
    codes = {(f.code, f.device) for f in audit(m)}
    assert ("lv-raid-mismatches", r5.kernel_name) in codes


def test_the_sync_moves_and_dmsetup_prints_it_as_dm_raid_does() -> None:
    b = _backend()
    r = b.run(list(DMSETUP_RAID_ARGV))
    (s1, s5) = parse_raid_status(r.stdout)
    assert (s1.name, s1.raid_type, s1.sync_action) == ("vgr-r1", "raid1", "resync")
    assert (s5.raid_type, s5.health, s5.mismatch_cnt) == ("raid5_ls", "AAA", 512)
    b.clock.advance(10.0)
    (later, _) = parse_raid_status(b.run(list(DMSETUP_RAID_ARGV)).stdout)
    assert later.done_sectors - s1.done_sectors == 10 * 1035 * 2  # 1035 KiB/s for 10 s


def test_report_json_gives_speed_and_eta_from_two_looks() -> None:
    b = _backend()
    m = b.probe()
    b.clock.advance(2.0)
    out = full_report_json(b, m, smart=False, findings=False)
    (r1,) = [lv for lv in out["lvm"]["lvs"] if lv["name"] == "r1"]
    assert r1["sync"]["action"] == "resync" and r1["sync"]["speed_kib_s"] == 1035
    assert r1["sync"]["at_ceiling"] is True  # held at md's min, above the LV's max
    left = (r1["sync"]["total_sectors"] - r1["sync"]["done_sectors"]) / 2 / 1035
    assert abs(r1["sync"]["eta_s"] - left) <= 1


def test_lvchange_check_runs_and_counts_what_is_there() -> None:
    b = _backend()
    busy = b.run(["lvchange", "--syncaction", "check", "vgr/r1"])
    assert busy.returncode == 5 and 'state is currently "resync"' in busy.stderr
    ok = b.run(["lvchange", "--syncaction", "check", "vgr/r5"])
    assert ok.returncode == 0
    r5 = b.probe().lv("vgr", "r5")
    assert r5 is not None and r5.raid is not None and r5.raid.syncing
    assert r5.raid.mismatches == 0  # counting again from zero
    b.clock.advance(3600.0)
    r5 = b.probe().lv("vgr", "r5")
    assert r5 is not None and r5.raid is not None and not r5.raid.syncing
    assert r5.raid.mismatches == 512
