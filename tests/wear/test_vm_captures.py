"""SMART of the VM's NVMe disks, replayed from a real capture (tests/fixtures/vm/create-raid5-synced:
four 256 MiB NVMe disks right after a RAID-5's initial sync). The pySMART reading that the backend
replays agrees with the `smartctl -j -a` JSON recorded in the same capture (QEMU counts data units
of 512,000 bytes). The counters are lifetime values of a VM that ran other scenarios first, so the
per-sync deltas are checked live in tests/vm/test_wear.py, not here."""

from __future__ import annotations

import json

from app.model.smart_units import bytes_written
from backends.replay import ReplayBackend
from tests.vm.machine import FIXTURES_VM

CAPTURE = FIXTURES_VM / "create-raid5-synced"


def _smartctl_json() -> dict[str, dict[str, object]]:
    out = {}
    for c in json.loads((CAPTURE / "commands.json").read_text()):
        argv = c["argv"]
        if argv[:3] == ["smartctl", "-j", "-a"] and argv[3].startswith("/dev/nvme"):
            out[argv[3].removeprefix("/dev/")] = json.loads(c["stdout"])
    return out


def test_replayed_pysmart_reading_agrees_with_recorded_smartctl_json() -> None:
    b = ReplayBackend(str(CAPTURE))
    recorded = _smartctl_json()
    assert len(recorded) >= 4
    for disk, doc in recorded.items():
        r = b.smart(disk)
        assert r.available, (disk, r.reason)
        units = doc["nvme_smart_health_information_log"]["data_units_written"]  # type: ignore[index]
        w = bytes_written(r)
        assert w is not None and w.bytes == units * 512_000, disk
        assert r.serial == doc["serial_number"]
