"""SMART counters grow with the simulated writes; scenario (b) reproduces seed 000 exactly."""

from __future__ import annotations


def lbas(b, disk: str) -> int:
    a = b.smart(disk).attribute(241)
    assert a is not None and a.raw is not None
    return a.raw


def wlc(b, disk: str) -> int:
    a = b.smart(disk).attribute(177)
    assert a is not None and a.value is not None
    return a.value


def test_raid5_cable_recovery_reproduces_the_article(make) -> None:
    b = make("raid5-cable")
    m = b.probe()
    a = m.array("md127")
    assert a is not None and a.bitmap is None and a.level == "raid5"
    assert a.sync is not None and a.sync.action == "recover" and a.sync.targets == ("sdd1",)
    before = {d: lbas(b, d) for d in ("sda", "sdb", "sdc", "sdd")}
    wear_before = {d: wlc(b, d) for d in ("sda", "sdb", "sdc", "sdd")}
    assert before["sdd"] == 603302987
    b.clock.advance(1800)
    mid = lbas(b, "sdd")
    assert before["sdd"] < mid < 3763859973
    b.clock.advance(3 * 3600)
    end = b.probe().array("md127")
    assert end is not None and end.sync is None and end.degraded == 0
    assert lbas(b, "sdd") == 3763859973
    for d in ("sda", "sdb", "sdc"):
        assert lbas(b, d) - before[d] < (3763859973 - 603302987) // 1000
        assert wlc(b, d) == wear_before[d]
    assert wlc(b, "sdd") == wear_before["sdd"] - 1
    # the host writes of the recovery: exactly the component onto the target
    io = {x.name: x for x in b.sample().disk_io}
    assert io["sdd1"].write_bytes == 449218560 * 1024
    assert io["sda1"].write_bytes == 0 and io["sda1"].read_bytes == 449218560 * 1024


def test_nvme_data_units_grow_with_resync_writes(make) -> None:
    b = make("blank")
    before = {d: b.smart(d).nvme["data_units_written"] for d in ("nvme0n1", "nvme1n1")}
    r = b.run(["mdadm", "--create", "/dev/md/127", "--level=1", "--raid-devices=2",
               "--bitmap=none", "--run", "/dev/nvme0n1", "/dev/nvme1n1"])  # fmt: skip
    assert r.ok, r.stderr
    b.clock.advance(4 * 3600)  # 1 TB at the default limit (~192 MB/s) takes ~1.4 h
    assert b.probe().array("md127").sync is None  # type: ignore[union-attr]
    d0 = b.smart("nvme0n1").nvme["data_units_written"] - before["nvme0n1"]
    d1 = b.smart("nvme1n1").nvme["data_units_written"] - before["nvme1n1"]
    size = b.probe().array("md127").size_bytes  # type: ignore[union-attr]
    assert d0 == 0  # raid1 resync reads the first member and writes the second
    assert abs(d1 * 512000 - size) < 512000 * 2


def test_power_on_hours_follow_the_clock(make) -> None:
    b = make("raid6-wd")
    h0 = b.smart("sda").power_on_hours
    b.clock.advance(7200)
    assert b.smart("sda").power_on_hours == h0 + 2  # type: ignore[operator]
    assert b.smart("nope").available is False
