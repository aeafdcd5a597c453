"""Issue 40: the findings that advise replacing a disk say how, from the member's state. mdadm's
--replace copies from a working member (mdadm(8) --replace: the member is "marked as requiring
replacement" and rebuilt onto a spare while it keeps serving; md.c state_store sets
want_replacement only on a working rdev), so a faulty member is never told to use it."""

from __future__ import annotations

from dataclasses import replace

from app.report import report_findings
from app.rules.smart import replace_advice
from backends.simulated import SimClock, SimulatedBackend


def _findings(name: str) -> list[object]:
    be = SimulatedBackend.from_scenario(name, clock=SimClock.manual())
    m = be.probe()
    smart = {d.name: be.smart(d.name) for d in m.disks}
    return list(report_findings(be, m, smart, None))


def test_no_finding_advises_replace_for_raid6_wd_s_faulty_sdb1() -> None:
    found = _findings("raid6-wd")
    about_sdb = [f for f in found if getattr(f, "device", "") == "sdb"]
    assert about_sdb
    for f in about_sdb:
        assert "--replace keeps" not in f.detail  # type: ignore[attr-defined]
    failed = next(f for f in about_sdb if f.code == "smart-failed")  # type: ignore[attr-defined]
    assert "already faulty and md0 rebuilds onto sdf1" in failed.detail  # type: ignore[attr-defined]
    assert "raidman plan retire --device sdb" in failed.detail  # type: ignore[attr-defined]


def test_the_advice_follows_the_member_s_state() -> None:
    be = SimulatedBackend.from_scenario("spare", clock=SimClock.manual())
    m = be.probe()
    assert "mdadm --replace keeps redundancy" in replace_advice(m, "sdb")
    assert "--device sdb1 --with NEW" in replace_advice(m, "sdb")
    a = m.array("md0")
    assert a is not None
    members = tuple(replace(x, state=("faulty",)) if x.device == "sdb1" else x for x in a.members)
    faulty = replace(m, arrays=(replace(a, members=members),))
    said = replace_advice(faulty, "sdb")
    assert "already faulty" in said and "adding a new disk" in said and "--replace needs" in said
    assert replace_advice(m, "sdc") == "Back up, and replace it."
