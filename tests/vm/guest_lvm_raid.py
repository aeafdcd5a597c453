"""Guest-side helper for test_lvm_raid.py (``vm.call("tests.vm.guest_lvm_raid:NAME")``): the
wear monitor over a raid LV's sync, in one guest process (no interpreter start per look).
Standard library plus raidman only; every value is JSON-serialisable."""

from __future__ import annotations

import subprocess
import time
from typing import Any

from tests.vm.guest_sync import _state_dir


def _diskstats_written(disks: list[str]) -> dict[str, int]:
    """Bytes written per disk now (/proc/diskstats field 10: sectors written)."""
    out: dict[str, int] = {}
    with open("/proc/diskstats") as f:
        for line in f:
            p = line.split()
            if len(p) > 9 and p[2] in disks:
                out[p[2]] = int(p[9]) * 512
    return out


def record_lv_sync(
    lv: str, pvs: list[str], state_dir: str, *, until_s: float = 240.0, interval: float = 0.5
) -> dict[str, Any]:
    """A ``WearMonitor`` started while ``lv``'s sync is held by its --maxrecoveryrate: ticks
    until the record has begun, then lifts the LV's limit (``lvchange --maxrecoveryrate 0``)
    and ticks until the record has ended. Returns the record (``syncs_json``), the monitor's
    log and the PVs' written bytes (/proc/diskstats) when the record began and ended."""
    from app.monitor import WearMonitor
    from app.wear.report import syncs_json
    from app.wear.snapshots import SnapshotStore
    from backends.linux import LinuxBackend

    _state_dir(state_dir)
    store = SnapshotStore.open()
    log: list[str] = []
    mon = WearMonitor(LinuxBackend(), store, interval_s=1e9, log=log.append)
    t_end = time.monotonic() + until_s
    began: dict[str, int] = {}
    while time.monotonic() < t_end and not store.syncs_for(lv):
        began = _diskstats_written(pvs)
        mon.tick()
        time.sleep(interval)
    subprocess.run(["lvchange", "--maxrecoveryrate", "0", lv], check=True, timeout=60)
    while time.monotonic() < t_end and any(s.running for s in store.syncs_for(lv)):
        mon.tick()
        time.sleep(interval)
    ended = _diskstats_written(pvs)
    records = syncs_json(store, lv)
    store.close()
    return {"records": records, "log": log, "began": began, "ended": ended}
