"""The audit over the simulated backend: gather() through its run/read_text, then audit().

Scenario (d) usb-bridge must show the alignment errors; scenario (a) raid10-evo — a well-made
stack — must show no warning or error. Skipped only until backends.simulated exports
SimulatedBackend (it is being built in parallel)."""

from __future__ import annotations

from typing import Any

import pytest

from app.rules import audit, gather

sim: Any = pytest.importorskip("backends.simulated")
if not hasattr(sim, "SimulatedBackend"):
    pytest.skip("backends.simulated.SimulatedBackend not there yet", allow_module_level=True)


def _backend(name: str) -> Any:
    from backends.simulated.clock import SimClock

    return sim.SimulatedBackend.from_scenario(name, clock=SimClock.manual())


def test_usb_bridge_scenario_shows_alignment_errors() -> None:
    b = _backend("usb-bridge")
    m = b.probe()
    fs = audit(m, gather(b, m))
    errs = [f for f in fs if f.code == "partition-misaligned"]
    assert {f.device for f in errs} >= {"sdh1", "sdh2", "sdh3", "sdh4"}
    assert all(f.severity == "error" for f in errs)
    assert not [f for f in errs if f.device.startswith("sda")]  # the SATA-attached twin
    topo = [f for f in fs if f.code == "suspicious-io-topology"]
    assert [f.device for f in topo] == ["sdh"] and "65535" in topo[0].detail


def test_raid10_evo_scenario_has_no_false_alarm() -> None:
    b = _backend("raid10-evo")
    m = b.probe()
    inputs = gather(b, m)
    fs = audit(m, inputs)
    loud = [(f.code, f.device) for f in fs if f.severity in ("error", "warning")]
    # the one warning: four 850 EVO of one production run in a RAID-10 surviving one failure
    assert loud == [("md-cohort", "md127")]
    assert not [f for f in fs if f.code == "audit-rule-failed"]
    assert "dm-0" in inputs.ext4 or any(k.startswith("tune2fs") for k in inputs.unknown)
