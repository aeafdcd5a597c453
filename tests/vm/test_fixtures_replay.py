"""The VM captures in tests/fixtures/vm replay through the replay backend as the state they record.

Runs on the host (no VM, no marker): it guards the committed fixtures that the rebuild, wear and
audit tests use. Regenerate them with ``RAIDMAN_VM_UPDATE_FIXTURES=1 make test-vm``.
"""

from __future__ import annotations

import pytest

from tests.vm.machine import FIXTURES_VM

# capture -> (level, raid_disks, degraded, sync action or None, {state flags present})
EXPECTED: dict[str, tuple[str, int, int, str | None, set[str]]] = {
    "create-raid0": ("raid0", 4, 0, None, {"in_sync"}),
    "create-raid1-synced": ("raid1", 2, 0, None, {"in_sync"}),
    "create-raid5-syncing": ("raid5", 4, 1, "recover", {"in_sync", "spare"}),
    "create-raid5-synced": ("raid5", 4, 0, None, {"in_sync"}),
    "create-raid6-synced": ("raid6", 4, 0, None, {"in_sync"}),
    "create-raid10-syncing": ("raid10", 4, 0, "resync", {"in_sync"}),
    "create-raid10-synced": ("raid10", 4, 0, None, {"in_sync"}),
    "raid10-recovering": ("raid10", 4, 1, "recover", {"in_sync", "spare"}),
    "raid10-recovered": ("raid10", 4, 0, None, {"in_sync"}),
    "raid5-spare-rebuilding": ("raid5", 3, 1, "recover", {"in_sync", "spare", "faulty"}),
    "raid5-spare-took-over": ("raid5", 3, 0, None, {"in_sync", "faulty"}),
    "raid1-checking": ("raid1", 2, 0, "check", {"in_sync"}),
    "raid1-check-mismatch": ("raid1", 2, 0, None, {"in_sync"}),
    "raid5-reshaping-3-to-4": ("raid5", 4, 0, "reshape", {"in_sync"}),
    "raid5-grown-3-to-4": ("raid5", 4, 0, None, {"in_sync"}),
    "lvm-ext4-xfs-on-raid10": ("raid10", 4, 0, None, {"in_sync"}),
    # auto-read-only after the unplug: the kernel holds the resync ("resync=PENDING")
    "raid10-member-unplugged": ("raid10", 4, 1, "pending", {"in_sync"}),
    "raid1-bitmap-recovering": ("raid1", 2, 1, "recover", {"in_sync", "spare"}),
}


def _present() -> list[str]:
    return (
        sorted(p.name for p in FIXTURES_VM.iterdir() if p.is_dir()) if FIXTURES_VM.is_dir() else []
    )


@pytest.mark.parametrize(
    "name",
    sorted(EXPECTED),
)
def test_md_capture_replays_as_recorded(name: str) -> None:
    if name not in _present():
        pytest.fail(
            f"tests/fixtures/vm/{name} missing: run RAIDMAN_VM_UPDATE_FIXTURES=1 make test-vm"
        )
    from backends.replay import ReplayBackend

    m = ReplayBackend(str(FIXTURES_VM / name)).probe()
    assert m.kernel.startswith("6.") and m.host == "virtme-ng"
    level, raid_disks, degraded, action, flags = EXPECTED[name]
    (a,) = m.arrays
    assert (a.level, a.raid_disks, a.degraded) == (level, raid_disks, degraded)
    assert (a.sync.action if a.sync else None) == action
    assert {f for mem in a.members for f in mem.state} == flags
    if action == "pending":  # held where it stopped (resync_start)
        assert a.sync is not None and a.sync.total_sectors
        assert a.sync.done_sectors is not None and 0 <= a.sync.done_sectors < a.sync.total_sectors
    elif action is not None:
        assert a.sync is not None and a.sync.done_sectors and a.sync.total_sectors
        assert 0 < a.sync.done_sectors < a.sync.total_sectors
    assert len([d for d in m.disks if d.name.startswith("nvme")]) >= 5


def test_lvm_capture_has_the_stack() -> None:
    from backends.replay import ReplayBackend

    m = ReplayBackend(str(FIXTURES_VM / "lvm-ext4-xfs-on-raid10")).probe()
    assert [pv.device for pv in m.pvs] == ["md0"]
    assert sorted((lv.name, lv.segtype) for lv in m.lvs) == [("ext", "linear"), ("xfs", "linear")]
    fstypes = {f.fstype for f in m.filesystems if f.device.startswith("dm-")}
    assert fstypes == {"ext4", "xfs"}


def test_virtio_capture_has_the_usb_bridge_topology() -> None:
    from backends.replay import ReplayBackend

    m = ReplayBackend(str(FIXTURES_VM / "virtio-usb-bridge-topology")).probe()
    (vda,) = [d for d in m.disks if d.name == "vda"]
    assert (vda.physical_sector, vda.optimal_io) == (4096, 33553920)
    parts = {
        p.name: (p.start_sector, p.alignment_offset) for p in m.partitions if p.parent == "vda"
    }
    assert parts == {"vda1": (65535, 512), "vda2": (131070, 1024), "vda3": (196605, 1536)}


def test_every_capture_is_known() -> None:
    known = set(EXPECTED) | {"virtio-usb-bridge-topology", "imsm-container-raid1"}
    assert set(_present()) <= known, set(_present()) - known
