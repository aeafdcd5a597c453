"""An array's exposure as findings (issue 41 items 2 and 4): degraded with how long and what its
rebuild does, no spare, a spare that does not fit, unwatched spare-groups, cohorts."""

from __future__ import annotations

import dataclasses

from app.model import Disk, Machine, MdArray, MdMember, Partition
from app.model.smart import SmartReading
from app.parsers.mdadm import parse_scan
from app.report import read_smart, report_findings
from app.rules import array_health, cohort
from app.rules.inputs import AuditInputs
from backends.simulated import SimClock, SimulatedBackend

TB = 10**12
UUID0 = "00000000:00000001:08d12e90:e202d2a2"
UUID1 = "00000000:00000002:08d12e90:e202d2a2"


def _findings(scenario: str) -> dict[tuple[str, str], object]:
    b = SimulatedBackend.from_scenario(scenario, clock=SimClock.manual())
    m = b.probe()
    return {(f.code, f.device): f for f in report_findings(b, m, read_smart(b, m), None)}


def test_raid6_wd_md0_is_degraded_for_two_hours_and_rebuilding_and_one_cohort() -> None:
    """issue 41's bar: raid6-wd has a degraded finding for md0 and a cohort finding."""
    found = _findings("raid6-wd")
    deg = found[("md-degraded", "md0")]
    assert deg.severity == "warning"  # type: ignore[attr-defined]
    assert deg.title == "md0 is degraded: 1 of 5 members missing"  # type: ignore[attr-defined]
    d = deg.detail  # type: ignore[attr-defined]
    assert "for 2h 00m (md: 'md/raid:md0: Disk failure on sdb1, disabling device.')" in d
    assert "rebuilding onto sdf1: 8.2% done at 24.4 MiB/s, about 9h 57m left" in d
    assert "md0 survives 1 further failure" in d
    assert ("md-degraded-no-spare", "md0") not in found  # sdf1 is rebuilding it
    co = found[("md-cohort", "md0")]
    assert co.severity == "warning"  # type: ignore[attr-defined]
    assert co.title == "md0: 5 members are one cohort (WDC WD10EFRX-68FYTN0)"  # type: ignore[attr-defined]
    assert "firmware 82.00A82, power-on hours 21000–21065, within 65 h" in co.detail  # type: ignore[attr-defined]
    assert "more than the 2 failures RAID-6 survives" in co.detail  # type: ignore[attr-defined]
    assert "Stagger replacements" in co.detail and "mix batches" in co.detail  # type: ignore[attr-defined]


def test_retire_md0_degraded_with_no_spare_is_an_error_saying_so() -> None:
    found = _findings("retire")
    deg = found[("md-degraded", "md0")]
    assert deg.severity == "error"  # type: ignore[attr-defined]
    assert "for 2h 00m" in deg.detail and "not rebuilding: no spare" in deg.detail  # type: ignore[attr-defined]
    assert "survives no further failure" in deg.detail  # type: ignore[attr-defined]
    assert found[("md-degraded-no-spare", "md0")].severity == "error"  # type: ignore[attr-defined]


def _machine(spare: Disk, spare_kib: int | None = None, second: bool = False) -> Machine:
    """md0: RAID-1 of two SSD partitions, slot 1 missing; the spare either in md0 or (second)
    in md1, a RAID-1 of its own."""
    ssd = dict(model="Samsung SSD 860 EVO 1TB", rotational=False, transport="sata")
    disks = [Disk("sda", TB, **ssd), Disk("sdb", TB, **ssd), spare]  # type: ignore[arg-type]
    parts = [Partition(f"{d.name}1", d.name, 1, 2048, d.size_bytes - 2**20) for d in disks]
    kib = (TB - 2**21) // 1024
    mem = MdMember("sdc1", None, ("spare",), size_kib=spare_kib or kib)
    md0 = MdArray(
        "md0",
        "raid1",
        size_bytes=kib * 1024,
        raid_disks=2,
        uuid=UUID0,
        members=(MdMember("sda1", 0, ("in_sync",), size_kib=kib),) + (() if second else (mem,)),
        degraded=1,
    )
    arrays = [md0]
    edges = [(d.name, f"{d.name}1") for d in disks] + [("sda1", "md0")]
    if second:
        md1 = MdArray(
            "md1",
            "raid1",
            size_bytes=kib * 1024,
            raid_disks=2,
            uuid=UUID1,
            members=(MdMember("sdb1", 0, ("in_sync",), size_kib=kib), mem),
            degraded=1,
        )
        arrays.append(md1)
        edges += [("sdb1", "md1"), ("sdc1", "md1")]
    else:
        edges.append(("sdc1", "md0"))
    return Machine("h", "6.1", tuple(disks), tuple(parts), tuple(arrays), edges=tuple(edges))


def test_a_spare_slower_and_of_another_class_is_said() -> None:
    hdd = Disk("sdc", 2 * TB, model="WDC WD20EFRX-68EUZN0", rotational=True, transport="sata")
    m = _machine(hdd)
    fs = list(array_health.check(m, AuditInputs()))
    mis = next(f for f in fs if f.code == "md-spare-mismatch")
    assert mis.severity == "warning"  # md0 is degraded: the spare is about to be its member
    assert "sdc1: it is a hard disk while the members are SSDs" in mis.detail
    assert (
        "it is slower (sata, about 244.1 MiB/s) than the members (about 524.4 MiB/s)" in mis.detail
    )


def test_a_spare_of_the_spare_group_too_small_or_unmoved_is_said() -> None:
    small = Disk(
        "sdc", TB // 2, model="Samsung SSD 860 EVO 500GB", rotational=False, transport="sata"
    )
    m = _machine(small, spare_kib=(TB // 2 - 2**21) // 1024, second=True)
    conf = parse_scan(
        f"ARRAY /dev/md0 UUID={UUID0} spare-group=ssd\nARRAY /dev/md1 UUID={UUID1} spare-group=ssd\n"
    )
    inputs = AuditInputs(mdadm_conf=conf, mdmonitor="inactive")
    fs = {(f.code, f.device): f for f in array_health.check(m, inputs)}
    mis = fs[("md-spare-mismatch", "md0")].detail
    assert "sdc1 (a spare of md1, spare-group ssd): it is smaller (499,997,902,848 B)" in mis
    assert "than md0's members use (999,997,902,848 B): md refuses it" in mis
    no_spare = fs[("md-degraded-no-spare", "md0")].detail
    assert "Spare-group ssd's spares are smaller than md0's members" in no_spare
    unwatched = fs[("md-spare-group-unwatched", "")]
    assert unwatched.title == "Spare-group ssd (md0, md1) is not watched"
    assert "mdmonitor.service is inactive" in unwatched.detail
    # a spare that fits, moved by an active mdmonitor: md0 has a spare after all
    big = Disk("sdc", TB, model="Samsung SSD 860 EVO 1TB", rotational=False, transport="sata")
    m2 = _machine(big, second=True)
    active = dataclasses.replace(inputs, mdmonitor="active")
    codes = {f.code for f in array_health.check(m2, active)}
    assert "md-degraded-no-spare" not in codes and "md-spare-group-unwatched" not in codes
    inactive = {f.code: f for f in array_health.check(m2, inputs)}
    assert "sdc1, but mdmonitor.service is not active" in inactive["md-degraded-no-spare"].detail


def _cohort_machine(
    hours: list[int], serials: list[str], firmware: list[str | None]
) -> tuple[Machine, dict[str, SmartReading]]:
    model = "ST4000VN008-2DR166"
    n = len(hours)
    names = [f"sd{'abcdef'[i]}" for i in range(n)]
    disks = tuple(
        Disk(dn, 4 * TB, model=model, serial=s, rotational=True)
        for dn, s in zip(names, serials, strict=True)
    )
    parts = tuple(Partition(f"{dn}1", dn, 1, 2048, 4 * TB - 2**21) for dn in names)
    members = tuple(MdMember(f"{dn}1", i, ("in_sync",)) for i, dn in enumerate(names))
    a = MdArray("md0", "raid5", size_bytes=(n - 1) * 4 * TB, raid_disks=n, members=members)
    edges = tuple(e for dn in names for e in ((dn, f"{dn}1"), (f"{dn}1", "md0")))
    readings = {
        dn: SmartReading(dn, True, model=model, serial=s, firmware=fw, power_on_hours=h)
        for dn, s, fw, h in zip(names, serials, firmware, hours, strict=True)
    }
    return Machine("h", "6.1", disks, parts, (a,), edges=edges), readings


def test_cohorts_by_age_or_by_serial_run_and_not_otherwise() -> None:
    fw = ["SC60"] * 3
    # the same age: a cohort larger than RAID-5 survives
    m, r = _cohort_machine([9000, 9010, 9500], ["ZDH1AAAA", "ZGY2BBBB", "WCT3CCCC"], fw)
    (f,) = cohort.check(m, AuditInputs(smart=r))
    assert (
        f.severity == "warning" and f.title == "md0: 3 members are one cohort (ST4000VN008-2DR166)"
    )
    assert "power-on hours 9000–9500, within 500 h of each other (the bound is 720 h)" in f.detail
    # years apart and from other runs: none
    m, r = _cohort_machine([9000, 30000, 52000], ["ZDH1AAAA", "ZGY2BBBB", "WCT3CCCC"], fw)
    assert list(cohort.check(m, AuditInputs(smart=r))) == []
    # years apart, but serials of one run
    m, r = _cohort_machine([9000, 30000, 52000], ["ZDH1P0A1", "ZDH1P0B7", "ZGY2BBBB"], fw)
    (f,) = cohort.check(m, AuditInputs(smart=r))
    assert f.severity == "warning"  # two drives failing together lose a RAID-5
    assert "serials from one run (ZDH1…)" in f.detail and "sda, sdb in md0" in f.detail
    assert "2 drives, more than the 1 failure RAID-5 survives" in f.detail
    # the same age but another firmware: two groups of one and two
    m, r = _cohort_machine([9000, 9010, 9020], ["A1", "B2", "C3"], ["SC60", "SC60", "SC61"])
    (f,) = cohort.check(m, AuditInputs(smart=r))
    assert "sda, sdb in md0" in f.detail and "firmware SC60" in f.detail
