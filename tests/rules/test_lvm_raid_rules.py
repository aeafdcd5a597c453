"""The LVM RAID audit (app/rules/lvm_raid.py) on the VM's captures (tests/lvm_raid_machine.py)."""

from __future__ import annotations

from dataclasses import replace

from app.parsers.lvmconfig import parse_lvmconfig
from app.rules.engine import audit
from app.rules.inputs import AuditInputs
from tests.lvm_raid_machine import raid_machine


def _codes(m, inputs=None):  # type: ignore[no-untyped-def]
    return {(f.code, f.device): f for f in audit(m, inputs or AuditInputs()) if "raid" in f.code}


def test_a_repaired_lv_has_no_finding_and_the_other_stays_degraded() -> None:
    found = _codes(raid_machine("g_after_repair", lost="nvme1n1"))
    assert not [k for k in found if k[1] == "dm-0"]  # r1, repaired
    assert set(found) == {("lv-raid-degraded", "dm-5")}  # r5 still lacks image 0 (the VM's)


def test_mismatches_from_the_last_check_offer_a_check_again() -> None:
    found = _codes(raid_machine("e_r1_checked"))
    f = found[("lv-raid-mismatches", "dm-0")]
    assert f.severity == "warning" and "512 mismatched sectors" in f.title
    assert f.fix is not None
    assert [s.argv for s in f.fix.steps] == [("lvchange", "--syncaction", "check", "vgr/r1")]
    assert ("lv-raid-mismatches", "dm-5") not in found  # r5 counted none


def test_a_lost_pv_is_a_degraded_lv_with_its_repair() -> None:
    found = _codes(raid_machine("f_pv_lost", lost="nvme1n1"))
    r1 = found[("lv-raid-degraded", "dm-0")]
    assert r1.severity == "error"
    assert r1.title == "vgr/r1 is degraded: image 1 ([unknown])"
    assert "lvm says 'partial'" in r1.detail
    assert r1.fix is not None and r1.fix.steps[0].argv[:3] == ("lvconvert", "--yes", "--repair")
    # no room: the finding stays, its detail says why no repair can be planned
    full = raid_machine("f_pv_lost", lost="nvme1n1", free=0)
    r1 = _codes(full)[("lv-raid-degraded", "dm-0")]
    assert r1.fix is None and "No repair can be planned yet: vgr/r1: repairing 1" in r1.detail


def test_images_on_one_pv_are_no_redundancy() -> None:
    m = raid_machine("g_after_repair")
    r1 = next(lv for lv in m.lvs if lv.name == "r1")
    assert r1.raid is not None
    same = tuple(replace(i, pvs=("nvme0n1",)) for i in r1.raid.images)
    m = replace(m, lvs=tuple(replace(lv, raid=replace(lv.raid, images=same)) if lv is r1 else lv
                             for lv in m.lvs))  # type: ignore[arg-type]  # fmt: skip
    f = _codes(m)[("lv-raid-images-share-pv", "dm-0")]
    assert f.severity == "error" and f.title == "vgr/r1: images 0 and 1 are both on nvme0n1"


def test_fault_policy_and_monitoring() -> None:
    m = raid_machine("g_after_repair")
    m = replace(m, lvs=tuple(lv for lv in m.lvs if not lv.name.startswith("r5")))
    warn = AuditInputs(lvm=parse_lvmconfig('raid_fault_policy="warn"\nmonitoring=1\n'))
    assert set(_codes(m, warn)) == {("lvm-raid-fault-policy-warn", "")}
    off = AuditInputs(lvm=parse_lvmconfig('raid_fault_policy="allocate"\nmonitoring=0\n'))
    assert set(_codes(m, off)) == {("lvm-raid-unmonitored", "")}
    allocate = AuditInputs(lvm=parse_lvmconfig('raid_fault_policy="allocate"\nmonitoring=1\n'))
    assert _codes(m, allocate) == {}
    no_raid = replace(m, lvs=tuple(lv for lv in m.lvs if lv.raid is None))
    assert _codes(no_raid, off) == {}


def _with_integrity(mode: str | None, rotational: bool = False):  # type: ignore[no-untyped-def]
    m = raid_machine("e_r1_checked")
    lvs = tuple(
        replace(lv, raid=replace(lv.raid, integrity_mode=mode))
        if lv.name == "r1" and lv.raid is not None
        else lv
        for lv in m.lvs
    )
    disks = tuple(replace(d, rotational=rotational) for d in m.disks)
    return replace(m, lvs=lvs, disks=disks)


def test_integrity_in_journal_mode_on_ssds_writes_twice() -> None:
    # kernel commit 468dfca (dm-integrity: bitmap mode): journal mode measured 245 -> 120 MB/s
    f = _codes(_with_integrity("journal"))[("lv-raid-integrity-journal-ssd", "dm-0")]
    assert f.severity == "advice"
    assert (
        f.title == "vgr/r1: integrity in journal mode writes everything twice to nvme0n1, nvme1n1"
    )
    assert "--raidintegritymode bitmap vgr/r1" in f.detail
    assert ("lv-raid-integrity-journal-ssd", "dm-0") not in _codes(_with_integrity("bitmap"))
    assert ("lv-raid-integrity-journal-ssd", "dm-0") not in _codes(_with_integrity(None))
    hdds = _with_integrity("journal", rotational=True)
    assert ("lv-raid-integrity-journal-ssd", "dm-0") not in _codes(hdds)
