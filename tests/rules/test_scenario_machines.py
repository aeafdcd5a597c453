"""The audit over the simulated scenarios' Machines (the snapshot builder the simulated backend
uses for probe()), before gather(): scenario (d) shows the alignment errors, scenario (a) no
warning or error. test_scenarios.py repeats this through SimulatedBackend + gather()."""

from __future__ import annotations

from app.model import Machine
from app.rules import audit
from backends.simulated.scenarios import SCENARIOS
from backends.simulated.snapshot import StaticCache, build_machine


def _machine(name: str) -> Machine:
    return build_machine(SCENARIOS[name](1000.0), StaticCache())


def test_usb_bridge_machine() -> None:
    m = _machine("usb-bridge")
    fs = audit(m)
    errs = {f.device for f in fs if f.code == "partition-misaligned"}
    sdh_parts = {p.name for p in m.partitions if p.parent == "sdh"}
    assert errs == sdh_parts and len(errs) == 4  # every bridge partition, none on sda
    by_dev = {p.name: p for p in m.partitions}
    assert by_dev["sdh1"].alignment_offset == 512 and by_dev["sdh2"].alignment_offset == 1024
    assert [f.device for f in fs if f.code == "suspicious-io-topology"] == ["sdh"]


def test_raid10_evo_machine_is_quiet() -> None:
    fs = audit(_machine("raid10-evo"))
    # its four 850 EVO are one production run (serials S2RBNX0H512…): a cohort in a RAID-10
    # that survives one failure (issue 41) is its only warning
    assert [(f.severity, f.code) for f in fs if f.severity != "advice"] == [
        ("warning", "md-cohort")
    ]
    fs = tuple(f for f in fs if f.code != "md-cohort")
    # md-no-bitmap: the scenario follows article 000 (--bitmap=none on SSD RAID-10); the advice
    # shows that trade-off
    assert {f.code for f in fs} <= {"audit-incomplete", "lvm-issue-discards-off", "md-no-bitmap"}
