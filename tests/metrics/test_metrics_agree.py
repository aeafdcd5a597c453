"""The metrics say what mdstat says on the same machine (issue 24 item 8): raid6-wd's md0 is
[5/4] in /proc/mdstat, so 4 members are active (one is being rebuilt, one is faulty)."""

from __future__ import annotations

import re

from app.metrics import collect, gather_input, render
from backends.simulated import SimClock, SimulatedBackend
from tests.metrics.expo import one, parse


def test_active_members_agree_with_mdstat() -> None:
    be = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    m = be.probe()
    (a,) = m.arrays
    assert m.mdstat is not None
    total, working = map(int, re.search(r"\[(\d+)/(\d+)\]", m.mdstat).groups())  # type: ignore[union-attr]
    assert (total, working) == (5, 4)
    samples, _ = parse(render(collect(gather_input(be, m, None))))
    lab = {"array": a.name, "uuid": a.uuid or "", "level": a.level}
    assert one(samples, "raidman_md_disks", **lab, state="active") == working
    assert one(samples, "raidman_md_disks_required", **lab) == total
    assert one(samples, "raidman_md_degraded", **lab) == total - working
    assert one(samples, "raidman_md_disks", **lab, state="rebuilding") == 1
    assert one(samples, "raidman_md_disks", **lab, state="failed") == 1
