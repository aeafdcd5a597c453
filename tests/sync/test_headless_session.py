"""The headless monitor's session (``Session(shows=False)``) computes nothing a screen shows:
no per-disk rates, slow members, sync views or bytes-so-far each second, and records the same
syncs with the same exact kernel writes as a session that shows them (issue 29: the monitor on
1,000 disks costs no more than ``watch -n1 cat /proc/mdstat``)."""

from __future__ import annotations

from pathlib import Path

from app.model.live import DiskIO, LiveSample
from app.session import Session
from app.sync.throughput import ThroughputMeter
from app.wear.snapshots import SnapshotStore
from tests.test_session import DISKS, MIB, _records, run_rebuild


def test_a_meter_without_rates_keeps_the_counters_only() -> None:
    m = ThroughputMeter(rates=False)
    a = LiveSample(1.0, (), (DiskIO("sda", 0, 0), DiskIO("sdb", 0, 0)))
    b = LiveSample(2.0, (), (DiskIO("sda", 0, 4096), DiskIO("sdb", 0, 0)))
    m.update(a)
    assert m.update(b) == {} and m.rates == {}
    assert dict(m.counters) == {"sda": b.disk_io[0], "sdb": b.disk_io[1]}
    shown = ThroughputMeter()
    shown.update(a)
    assert shown.update(b)["sda"].write_bytes_s == 4096.0  # the same samples, shown


def test_a_headless_session_records_what_a_showing_one_records(tmp_path: Path) -> None:
    shown_store = SnapshotStore.open(tmp_path / "shown.db")
    shown = Session(store=shown_store, audit_every_s=None)
    headless_store = SnapshotStore.open(tmp_path / "headless.db")
    headless = Session(store=headless_store, audit_every_s=None, shows=False)

    # mid-rebuild, the showing session has what the Sync card and the Live tab show
    w_shown, w_headless = run_rebuild_views(shown), run_rebuild_views(headless)
    assert w_shown[0] and w_shown[1] and w_shown[2]
    assert w_headless == ((), {}, {})

    assert _records(headless_store) == _records(shown_store)
    rec = _records(headless_store)
    assert [r[2] for r in rec] == ["recover"] and rec[0][5] == "finished"
    assert rec[0][7 + DISKS.index("nvme3n1")] == 256 * MIB  # the kernel's count, exact


def run_rebuild_views(
    s: Session,
) -> tuple[tuple[object, ...], dict[str, object], dict[str, object]]:
    """Run the rebuild; what the view held while it ran (syncs, rates, bytes so far)."""
    seen: list[tuple[tuple[object, ...], dict[str, object], dict[str, object]]] = []
    orig = s.sampled

    def spy(sample: LiveSample, now: float | None = None):  # type: ignore[no-untyped-def]
        eff = orig(sample, now)
        if s.view.live is not None and s.view.live.arrays and s.view.live.arrays[0].sync:
            seen.append((s.view.syncs, dict(s.view.rates), dict(s.view.sync_writes)))
        return eff

    s.sampled = spy  # type: ignore[method-assign]
    run_rebuild(s)
    return seen[-1]
