"""Device pickers' eligibility: the same in-use reasons as pre-flight, plus size and SMART."""

from __future__ import annotations

from app.model.smart import SmartAttribute, SmartReading
from app.plans.guards.eligibility import Candidate, candidates
from app.plans.guards.preflight import check
from backends.replay import ReplayBackend
from tests.corpus import FIXTURES
from tests.plans.fakes import GIB, array_machine, blank_machine


def _by_name(cands: tuple[Candidate, ...]) -> dict[str, Candidate]:
    return {c.name: c for c in cands}


def test_blank_disks_eligible_root_disk_not() -> None:
    c = _by_name(candidates(blank_machine()))
    assert c["nvme0n1"].reason is None and c["nvme0n1"].model == "Fake NVMe"
    assert c["nvme0n1"].rotational is False and c["nvme0n1"].size_bytes == 1000 * GIB
    assert c["sda"].reason is not None and "/" in c["sda"].reason
    assert c["sda2"].reason == "mounted on /"
    assert "swap" in c["sda3"].reasons
    assert c["sdb"].reason is None
    order = [x.name for x in candidates(blank_machine())]
    assert order.index("sdb") < order.index("sda")  # eligible first


def test_member_and_pv_reasons() -> None:
    c = _by_name(candidates(array_machine()))
    assert c["nvme0n1"].reason == "member of md127"
    assert c["sdf"].reason == "member of md126"
    assert c["nvme4n1"].reason is None


def test_too_small_and_smart_failed() -> None:
    smart = {
        "nvme0n1": SmartReading(device="nvme0n1", available=True, health="FAILED"),
        "nvme1n1": SmartReading(
            device="nvme1n1",
            available=True,
            health="PASSED",
            attributes=(SmartAttribute(id=5, name="Reallocated_Sector_Ct", raw=8),),
        ),
    }
    c = _by_name(candidates(blank_machine(), smart=smart, min_size_bytes=1500 * GIB))
    assert c["nvme0n1"].reasons == ("too small (needs 1.5 TiB)", "SMART FAILED")
    assert c["sdb"].reason is None  # 2000 GiB
    assert c["nvme1n1"].notes == ("8 reallocated sectors",)


def test_picker_and_preflight_agree_on_in_use() -> None:
    for m in (blank_machine(), array_machine()):
        for cand in candidates(m):
            refused = bool(check(m, [cand.name]).refusals)
            assert refused == (cand.reason is not None), cand


def test_min_size_from_the_array_marks_small_devices() -> None:
    from dataclasses import replace

    from app.plans.guards.eligibility import needed_member_bytes

    m = array_machine()
    arr = m.arrays[0]
    members = tuple(
        replace(x, size_kib=1100 * 1024 * 1024, data_offset_sectors=2048) for x in arr.members
    )
    m = replace(m, arrays=(replace(arr, members=members), m.arrays[1]))
    need = needed_member_bytes(m, "md127")
    assert need == 1100 * GIB + 2048 * 512
    c = _by_name(candidates(m, min_size_bytes=need))
    assert c["nvme4n1"].reason is not None and c["nvme4n1"].reason.startswith(
        "too small (needs 1.1 TiB"
    )
    assert c["sdc"].reason == "member of md126"


def test_free_partition_of_the_system_disk_is_eligible_with_its_warning() -> None:
    """Article 000 (/work/shared/seeds/000_d5848e1cef7805d7.txt, "Schritt 3") builds its array
    from the second partitions of disks whose first is the EFI partition: the picker offers such
    a partition, naming what else its disk holds; the disk itself stays ineligible."""
    from dataclasses import replace

    from app.model import Partition
    from tests.plans.fakes import with_usage

    m = blank_machine()
    sda4 = Partition(name="sda4", parent="sda", number=4, start_sector=2**30, size_bytes=50 * GIB)
    m = with_usage(replace(m, partitions=(*m.partitions, sda4), edges=(*m.edges, ("sda", "sda4"))))
    c = _by_name(candidates(m))
    assert c["sda4"].eligible
    assert c["sda4"].notes == ("sda also holds / (sda2) and /boot/efi (sda1)",)
    assert c["sda"].reason == "holds /, /boot/efi (system disk)"
    assert c["sda2"].reason == "mounted on /" and c["sda2"].notes == ()
    assert c["nvme0n1"].notes == ()
    assert check(m, ["sda4"]).warning_codes == ("system-disk",)


def test_root_disk_without_partitions_says_system_disk_once() -> None:
    """Issue 11's machine (tests/fixtures/preflight/devhost-root-on-vda/README): vda itself is
    mounted on "/" (from mountinfo; lsblk has no FSTYPE). The picker says so once, not
    "mounted on /; holds /"; pre-flight keeps both sentences (tests/plans/test_preflight.py)."""
    m = ReplayBackend(FIXTURES / "preflight" / "devhost-root-on-vda").probe()
    vda = _by_name(candidates(m))["vda"]
    assert vda.reasons == ("holds / (system disk)",)


def test_whole_disk_swap_of_the_system_disk_said_once() -> None:
    """A whole disk that is active swap (kernel's /proc/swaps) and only that."""
    from dataclasses import replace

    from app.model.usage import KernelUsage

    m = replace(
        blank_machine(),
        usage=KernelUsage(mounts=(("sda2", "/"),), swaps=(("nvme2n1", "/dev/nvme2n1"),)),
    )
    c = _by_name(candidates(m))
    assert c["nvme2n1"].reasons == ("holds active swap (system disk)",)
    assert c["sda"].reasons[0] == "holds /, /boot/efi (system disk)"
