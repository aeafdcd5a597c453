"""The kernel-usage lookups are indexed once (issue 13: a picker over 1,000 disks asked them
~3,000 times by scanning every pair); the index answers exactly what a scan of the pairs says."""

from __future__ import annotations

from app.model.usage import KernelUsage
from backends.simulated import SimulatedBackend

USAGE = KernelUsage(
    mounts=(
        ("sda2", "/"),
        ("sda1", "/boot/efi"),
        ("dm-0", "/srv"),
        ("dm-0", "/srv"),
        ("sda2", "/x"),
    ),
    swaps=(("sda3", "/dev/sda3"), ("dm-1", "/swapfile")),
    holders=(("sdb1", "md0"), ("sdc1", "md0"), ("md0", "dm-0"), ("md0", "dm-1")),
    partitions=(
        ("sda1", "sda"),
        ("sda2", "sda"),
        ("sda3", "sda"),
        ("sdb1", "sdb"),
        ("sdc1", "sdc"),
    ),
)
NAMES = ("sda", "sda1", "sda2", "sda3", "sdb", "sdb1", "sdc1", "md0", "dm-0", "dm-1", "nvme0n1")


def test_indexed_lookups_equal_a_scan_of_the_pairs() -> None:
    u = USAGE
    for n in NAMES:
        assert u.mountpoints(n) == tuple(dict.fromkeys(mp for d, mp in u.mounts if d == n))
        assert u.swap_files(n) == tuple(f for d, f in u.swaps if d == n)
        assert u.holders_of(n) == tuple(h for d, h in u.holders if d == n)
        assert u.slaves_of(n) == tuple(d for d, h in u.holders if h == n)
        assert u.partitions_of(n) == tuple(p for p, d in u.partitions if d == n)
        assert u.disk_of(n) == next((d for p, d in u.partitions if p == n), None)
    assert u.mountpoints("dm-0") == ("/srv",)
    assert [h for h, _ in u.stacked_on("sdb1")] == ["md0", "dm-0", "dm-1"]


def test_arrays_with_member_equals_asking_every_array() -> None:
    m = SimulatedBackend.big(disks=40, arrays=10, syncing=2).probe()
    devices = {mm.device for a in m.arrays for mm in a.members} | {"nope"}
    for dev in devices:
        want = tuple(a for a in m.arrays if a.member(dev) is not None)
        assert m.arrays_with_member(dev) == want
    assert any(m.arrays_with_member(d) for d in devices)
