"""A faulty member's superblock stays at the events of its failure (md.c md_update_sb skips
Faulty devices, and md_error's update bumps the working members' count): issue 39 found
raid6-wd's failed sdb1 shown "events 244 (current)" like the working members."""

from __future__ import annotations

from backends.simulated import SimClock, SimulatedBackend


def _events(be: SimulatedBackend, dev: str) -> int:
    r = be.run(("mdadm", "--examine", "--export", f"/dev/{dev}"))
    assert r.returncode == 0, r.stderr
    return int(
        next(ln for ln in r.stdout.splitlines() if ln.startswith("MD_EVENTS=")).split("=")[1]
    )


def test_raid6_wds_failed_member_is_behind_the_array() -> None:
    be = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    working = {_events(be, d) for d in ("sda1", "sdc1", "sdd1", "sde1", "sdf1")}
    assert len(working) == 1
    assert _events(be, "sdb1") < working.pop()


def test_failing_a_member_leaves_its_superblock_behind_at_once() -> None:
    clock = SimClock.manual()
    be = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    before = _events(be, "sdb2")
    assert be.run(("mdadm", "/dev/md127", "--fail", "/dev/sdb2")).returncode == 0
    clock.advance(3600)  # the array runs on; sdb2's superblock is not written any more
    assert _events(be, "sdb2") == before
    assert _events(be, "sda2") > before
