"""LVM RAID: raid fields of lvs rows, images from sub-LVs, ``dmsetup status`` of dm-raid targets,
on outputs captured in the real-kernel VM (samples/lvm_raid, see samples/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.model.devices import LogicalVolume
from app.parsers.errors import ParseError
from app.parsers.lvm import parse_fullreport, parse_lvs
from app.parsers.lvm_raid import attach_status, link_images, parse_raid_status

SAMPLES = Path(__file__).parent / "samples" / "lvm_raid"


def _lvs(name: str) -> dict[str, LogicalVolume]:
    report = parse_lvs((SAMPLES / f"{name}.lvs.json").read_text())
    status = parse_raid_status((SAMPLES / f"{name}.dmstatus").read_text())
    return {lv.name: lv for lv in attach_status(report.lvs, status)}


def test_initial_sync_of_a_raid1_lv() -> None:
    lv = _lvs("a_r1_syncing")["r1"]
    raid = lv.raid
    assert raid is not None and lv.segtype == "raid1"
    assert raid.sync_percent == 9.38 and raid.sync_action == "resync"
    assert raid.max_rate_kib_s == 256 and raid.min_rate_kib_s is None  # "" = unset
    assert raid.mismatches == 0 and raid.health_bit is None and raid.health_status is None
    assert [(i.index, i.image, i.meta, i.pvs) for i in raid.images] == [
        (0, "r1_rimage_0", "r1_rmeta_0", ("nvme0n1",)),
        (1, "r1_rimage_1", "r1_rmeta_1", ("nvme1n1",)),
    ]
    dm = raid.dm
    assert dm is not None
    assert (dm.raid_type, dm.devices, dm.health) == ("raid1", 2, "aa")
    assert (dm.done_sectors, dm.total_sectors, dm.sync_action) == (12288, 131072, "resync")
    assert (dm.mismatch_cnt, dm.data_offset, dm.journal) == (0, 0, "-")
    # lvs' percent is the target's ratio (12288 / 131072 = 9.375 %)
    assert dm.fraction is not None and round(dm.fraction * 100, 2) == pytest.approx(9.38, abs=0.01)
    assert [i.health for i in raid.images] == ["a", "a"] and raid.syncing
    assert _lvs("a_r1_syncing")["r1_rimage_0"].raid is None  # sub-LVs are no raid LVs


def test_fullreport_carries_the_same_raid_fields_but_no_sub_lvs() -> None:
    report = parse_fullreport((SAMPLES / "b_r1_syncing.fullreport.json").read_text())
    (lv,) = report.lvs  # fullreport lists visible LVs only: the images come from `lvs -a`
    assert lv.name == "r1" and lv.segtype == "raid1" and lv.raid is not None
    assert lv.raid.sync_action == "resync" and lv.raid.max_rate_kib_s == 256
    assert lv.raid.sync_percent == 19.53 and lv.raid.images == ()
    subs = [s for s in parse_lvs((SAMPLES / "b_r1_syncing.lvs.json").read_text()).lvs if s.hidden]
    (linked,) = link_images(report.lvs, subs)
    assert linked.raid is not None
    assert [i.pvs for i in linked.raid.images] == [("nvme0n1",), ("nvme1n1",)]


def test_mismatches_after_a_check() -> None:
    lvs = _lvs("e_r1_checked")
    raid = lvs["r1"].raid
    assert raid is not None
    assert raid.mismatches == 512 and raid.health_bit == "m"
    assert raid.health_words == "mismatches exist" and not raid.syncing
    assert raid.dm is not None and raid.dm.mismatch_cnt == 512
    r5 = lvs["r5"].raid
    assert r5 is not None and r5.dm is not None and r5.dm.raid_type == "raid5_ls"
    assert [i.pvs for i in r5.images] == [("nvme1n1",), ("nvme2n1",), ("nvme3n1",)]


def test_a_lost_pv_makes_the_lv_partial_and_its_image_dead() -> None:
    lvs = _lvs("f_pv_lost")
    r1, r5 = lvs["r1"].raid, lvs["r5"].raid
    assert r1 is not None and r5 is not None
    assert r1.partial and r1.health_bit == "p" and r1.health_status == "partial"
    assert r1.dm is not None and r1.dm.health == "AD" and r1.dm.failed == (1,)
    assert [i.index for i in r1.failed_images] == [1]
    assert r1.images[1].pvs == ("[unknown]",)
    assert [i.index for i in r5.failed_images] == [0]


def test_after_repair_the_image_lives_on_another_pv() -> None:
    r1 = _lvs("g_after_repair")["r1"].raid
    assert r1 is not None and not r1.partial and r1.failed_images == ()
    assert [i.pvs for i in r1.images] == [("nvme0n1",), ("nvme2n1",)]
    assert r1.mismatches == 0  # the repair's new image reset the count


def test_plain_dmsetup_status_skips_other_targets() -> None:
    got = parse_raid_status((SAMPLES / "f_pv_lost.dmstatus_all").read_text())
    assert [(s.name, s.health) for s in got] == [("vgr-r1", "AD"), ("vgr-r5", "DAA")]


def test_older_dm_raid_lines_without_the_later_fields() -> None:
    # dm-raid.rst: sync_action/mismatch_cnt from 1.5.0, data_offset 1.9.0, journal 1.10.0
    (s,) = parse_raid_status("vg-lv: 0 2048 raid raid1 2 AA 2048/2048\n")
    assert (s.sync_action, s.mismatch_cnt, s.data_offset, s.journal) == (None, None, None, None)


@pytest.mark.parametrize(
    "line",
    [
        "vg-lv: 0 2048 raid raid1 2 AX 2048/2048 idle 0 0 -",  # health alphabet
        "vg-lv: 0 2048 raid raid1 3 AA 2048/2048 idle 0 0 -",  # count vs characters
        "vg-lv: 0 2048 raid raid1 2 AA 2048 idle 0 0 -",  # ratio
        "vg-lv: 0 2048 raid raid1 2 AA 2048/2048 dance 0 0 -",  # action
        "vg-lv: 0 2048 raid raid1 2 AA 2048/2048 idle -1 0 -",  # mismatches
        "vg-lv: 0 2048 raid raid1 2 AA 2048/2048 idle 0 0 Q",  # journal
        "vg-lv: 0 2048 raid raid1 999 " + "A" * 999 + " 1/1 idle 0 0 -",  # > 253 devices
        "vg-lv: 0 2048 raid raid1 2 AA 2048/2048 idle 0 0 - extra more",
        "0 2048 raid raid1 2 AA 2048/2048 idle 0 0 -",  # no name
    ],
)
def test_bad_status_lines_are_refused(line: str) -> None:
    with pytest.raises(ParseError):
        parse_raid_status(line)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("sync_percent", "101.00"),
        ("sync_percent", "NaN"),
        ("raid_sync_action", "\u001b[31m"),
        ("raid_mismatch_count", "-4"),
        ("raid_max_recovery_rate", "1e9"),
        ("lv_attr", "rwi-a-r-Z-"),
        ("lv_health_status", "x" * 65),
    ],
)
def test_bad_raid_fields_are_refused(field: str, value: str) -> None:
    text = (SAMPLES / "a_r1_syncing.lvs.json").read_text()
    row = '"lv_name":"r1"'
    good = {
        "sync_percent": '"sync_percent":"9.38"',
        "raid_sync_action": '"raid_sync_action":"resync"',
        "raid_mismatch_count": '"raid_mismatch_count":"0"',
        "raid_max_recovery_rate": '"raid_max_recovery_rate":"256"',
        "lv_attr": '"lv_attr":"rwi-a-r---"',
        "lv_health_status": '"lv_health_status":""',
    }[field]
    head, tail = text.split(row, 1)
    bad = head + row + tail.replace(good, f'"{field}":"{value}"', 1)
    assert bad != text
    with pytest.raises(ParseError):
        parse_lvs(bad)


def test_raid_integrity_mode() -> None:
    from app.parsers.lvm_raid import raid_of_row

    def mode(v: str) -> str | None:
        raid = raid_of_row({"raidintegritymode": v}, "raid1", "rwi-a-r---")
        assert raid is not None
        return raid.integrity_mode

    assert (mode("journal"), mode("bitmap"), mode("")) == ("journal", "bitmap", None)
    with pytest.raises(ParseError):
        mode("\u001b[31mjournal")
