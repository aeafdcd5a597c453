"""The wear monitor on the simulated backend, scenario (b) of the foundation issue: a RAID-5 of
four SSDs whose member came back after a loose SATA cable is rebuilt in full (seed 000: the
re-added SSD's Total_LBAs_Written went 603,302,987 → 3,763,859,973)."""

from __future__ import annotations

from pathlib import Path

from app.monitor import WearMonitor
from app.wear.delta import array_wear
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimClock, SimulatedBackend


def test_raid5_cable_recovery_wear_is_recorded(tmp_path: Path) -> None:
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid5-cable", clock=clock)
    store = SnapshotStore.open(tmp_path / "state.db")
    lines: list[str] = []
    mon = WearMonitor(backend, store, interval_s=3600, log=lines.append)

    machine = backend.probe()
    (array,) = [a for a in machine.arrays if a.sync is not None and a.sync.action == "recover"]
    (target,) = array.sync.targets if array.sync else ()
    mon.tick()  # start snapshot + sync-start snapshot of every member
    steps = 0
    while backend.sample().arrays[0].sync is not None and steps < 10_000:
        clock.advance(60)
        mon.tick()
        steps += 1
    mon.tick()
    assert steps < 10_000, "the recovery never ended"

    (wear,) = array_wear(store, array.name)
    assert wear.sync.action == "recover" and wear.sync.ended_at is not None
    rebuilt = wear.member(target)
    assert rebuilt is not None
    assert rebuilt.bytes_written == (3_763_859_973 - 603_302_987) * 512
    assert rebuilt.wear_points == 1
    for m in wear.members:
        if m is not rebuilt:
            assert m.bytes_written is not None and m.bytes_written < rebuilt.bytes_written / 1000
    (disk,) = machine.disks_under(target)
    # SMART counts the whole disk (the article's figure); the kernel the member partition alone
    smart = f"this rebuild wrote 1.5 TiB to {disk} (whole disk, all its partitions) = 3.2 × its"
    assert any(smart in ln for ln in lines), lines
    assert (
        f"md127: kernel counter: this rebuild wrote 428.4 GiB to {target} = 1.00 × its size"
        in lines
    )

    # the history survives a restart of raidman
    store.close()
    again = SnapshotStore.open(tmp_path / "state.db")
    (wear2,) = array_wear(again, array.name)
    assert wear2.member(target) is not None
    assert wear2.member(target).bytes_written == rebuilt.bytes_written  # type: ignore[union-attr]
