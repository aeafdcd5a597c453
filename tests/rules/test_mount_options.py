"""Issue 26 item 4: the mount options a mount plan takes are the audit's: noatime on SSDs,
discard only where discards pass and no weekly fstrim runs (fstab.py's fstrim preference)."""

from __future__ import annotations

from app.rules.fstab import recommended_mount_options
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock


def _machine(scenario: str):  # type: ignore[no-untyped-def]
    return SimulatedBackend.from_scenario(scenario, clock=SimClock.manual()).probe()


def test_ssds_get_noatime_and_discard_only_without_fstrim() -> None:
    m = _machine("raid10-evo")
    (a,) = [x for x in m.arrays if not x.is_container]
    assert recommended_mount_options(m, a.name, "active", True)[0] == "defaults,noatime"
    opts, why = recommended_mount_options(m, a.name, "inactive", True)
    assert opts == "defaults,noatime,discard" and "fstrim.timer is inactive" in why
    assert recommended_mount_options(m, a.name, None, False)[0] == "defaults,noatime"


def test_spinning_disks_keep_the_defaults() -> None:
    m = _machine("raid6-wd")
    (a,) = [x for x in m.arrays if not x.is_container]
    assert recommended_mount_options(m, a.name, "inactive", True) == ("defaults", "")
