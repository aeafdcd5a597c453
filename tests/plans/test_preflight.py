"""Pre-flight: refusals (mounted, swap, held, boot/root) and warnings (signatures, sizes, media, count)."""

from __future__ import annotations

import json
from dataclasses import replace

from app.plans.preflight import check
from backends.base import CommandResult
from tests.plans.fakes import GIB, FakeBackend, array_machine, blank_machine, nvme


def _codes(issues: tuple) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [(i.code, i.device) for i in issues]


def test_blank_nvme_disks_pass_clean() -> None:
    m = blank_machine()
    be = FakeBackend(m)
    pf = check(m, ["nvme0n1", "/dev/nvme1n1", "nvme2n1", "nvme3n1"], backend=be, level="raid10")
    assert pf.refusals == () and pf.warnings == ()
    assert be.argvs == [("wipefs", "--no-act", "--json", f"/dev/nvme{i}n1") for i in range(4)]


def test_root_boot_disk_and_its_partitions_are_refused() -> None:
    m = blank_machine()
    pf = check(m, ["sda", "sda2", "sda3"])
    refused = _codes(pf.refusals)
    assert ("boot", "sda") in refused
    assert ("mounted", "sda2") in refused  # "/" itself
    assert ("boot", "sda2") in refused
    assert ("swap", "sda3") in refused
    msgs = " | ".join(str(r) for r in pf.refusals)
    assert "sda: is the system disk" in msgs
    assert "its partition sda2 is mounted on /" in msgs
    assert not pf.allows(["signatures", "size-mismatch", "mixed-media", "too-few"])


def test_mounted_array_and_members_and_pv_refused_with_reason() -> None:
    m = array_machine()
    pf = check(m, ["md126", "nvme1n1", "sdf", "md127"])
    refused = {(r.code, r.device): r.message for r in pf.refusals}
    assert refused[("mounted", "md126")] == "is mounted on /srv"
    assert refused[("held", "nvme1n1")] == "is a member of the md array md127"
    assert refused[("held", "sdf")] == "is a member of the md array md126"
    assert refused[("held", "md127")] == "is an LVM physical volume of volume group vg127"


def test_device_held_by_device_mapper_is_refused() -> None:
    m = blank_machine()
    m = replace(m, edges=(*m.edges, ("nvme0n1", "dm-0")))
    pf = check(m, ["nvme0n1"])
    assert _codes(pf.refusals) == [("held", "nvme0n1")]
    assert "dm-0" in pf.refusals[0].message


def test_unknown_device_refused() -> None:
    pf = check(blank_machine(), ["nvme9n1"])
    assert _codes(pf.refusals) == [("unknown", "nvme9n1")]


def test_existing_signatures_warned_from_wipefs_json() -> None:
    m = blank_machine()
    be = FakeBackend(m)
    out = json.dumps(
        {
            "signatures": [
                {
                    "device": "nvme1n1",
                    "offset": "0x438",
                    "type": "ext4",
                    "uuid": "x",
                    "label": "old",
                },
                {
                    "device": "nvme1n1",
                    "offset": "0x1000",
                    "type": "linux_raid_member",
                    "uuid": "y",
                    "label": "h:0",
                },
            ]
        }
    )

    def r(argv: tuple[str, ...], stdin: str | None) -> CommandResult | None:
        if argv[-1] == "/dev/nvme1n1":
            return CommandResult(argv, 0, out, "")
        return None

    be.responders.append(r)
    pf = check(m, ["nvme0n1", "nvme1n1"], backend=be)
    assert pf.refusals == ()
    assert _codes(pf.warnings) == [("signatures", "nvme1n1")]
    assert "ext4 label 'old' at 0x438" in pf.warnings[0].message
    assert "linux_raid_member" in pf.warnings[0].message
    assert not pf.allows([]) and pf.allows(["signatures"])


def test_wipefs_missing_is_a_warning_not_a_crash() -> None:
    m = blank_machine()
    be = FakeBackend(m)
    be.fail_when("wipefs", 127)
    pf = check(m, ["nvme0n1"], backend=be)
    assert _codes(pf.warnings) == [("wipefs", "nvme0n1")]
    assert "not found" in pf.warnings[0].message


def test_size_mismatch_reports_lost_bytes() -> None:
    m = blank_machine()
    m = replace(
        m, disks=(nvme("nvme0n1"), nvme("nvme1n1", 1200 * GIB), nvme("nvme2n1", 1100 * GIB))
    )
    pf = check(m, ["nvme0n1", "nvme1n1", "nvme2n1"], level="raid5")
    (w,) = pf.warnings
    assert w.code == "size-mismatch"
    assert f"{300 * GIB} bytes" in w.message and "300 GiB" in w.message


def test_mixed_rotational_and_ssd_warned() -> None:
    m = blank_machine()
    pf = check(m, ["nvme0n1", "sdb"], level="raid1", check_sizes=False)
    assert [w.code for w in pf.warnings] == ["mixed-media"]


def test_too_few_devices_per_level() -> None:
    m = blank_machine()
    two = ["nvme0n1", "nvme1n1"]
    three = [*two, "nvme2n1"]
    assert [w.code for w in check(m, two, level="raid5").warnings] == ["too-few"]
    assert [w.code for w in check(m, three, level="6").warnings] == ["too-few"]
    assert check(m, three, level="raid5").warnings == ()
    assert check(m, two, level="10", layout="n2").warnings == ()
    assert [w.code for w in check(m, two, level="10", layout="n3").warnings] == ["too-few"]
    assert [w.code for w in check(m, ["nvme0n1"], level="raid1").warnings] == ["too-few"]
    assert (
        "raid6 needs at least 4 devices, 3 given"
        in check(m, three, level="raid6").warnings[0].message
    )
