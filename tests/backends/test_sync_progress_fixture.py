"""Sync progress where sysfs and /proc/mdstat differ in the same moment (issue 28 item 5)."""

from __future__ import annotations

from app.parsers.mdstat import MdstatProgress
from backends.linux.md import fresher_progress
from tests.vm.machine import FIXTURES_VM


def test_bitmap_recovery_shows_mdstats_fresher_count() -> None:
    """Real kernel (tests/vm/test_bitmap_recovery_progress.py): a bitmap re-add held at 20 KiB/s.
    md/sync_completed (curr_resync_completed, moved lazily by md_do_sync) read 327680 / 522240
    sectors while /proc/mdstat read (165888/261120) KiB = 331776 sectors: raidman shows the
    fresher count, mdstat's, not the lagging sysfs one."""
    from backends.replay import ReplayBackend

    m = ReplayBackend(str(FIXTURES_VM / "raid1-bitmap-recovering")).probe()
    (a,) = m.arrays
    assert a.sync is not None and a.sync.action == "recover"
    assert (a.sync.done_sectors, a.sync.total_sectors) == (331776, 522240)


def test_fresher_progress_never_goes_back_or_mixes_totals() -> None:
    from app.model.devices import SyncStatus

    s = SyncStatus(action="recover", done_sectors=1000, total_sectors=8000)
    ahead = MdstatProgress("recovery", 25.0, done_kib=2000, total_kib=4000)
    assert fresher_progress(s, ahead) == SyncStatus("recover", 4000, 8000)
    behind = MdstatProgress("recovery", 6.0, done_kib=250, total_kib=4000)
    assert fresher_progress(s, behind) is s
    other_total = MdstatProgress("recovery", 50.0, done_kib=2000, total_kib=3000)
    assert fresher_progress(s, other_total) is s
    assert fresher_progress(s, None) is s and fresher_progress(None, ahead) is None
