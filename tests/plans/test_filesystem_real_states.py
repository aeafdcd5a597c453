"""The filesystem plan and the report on real-kernel states (tests/fixtures/vm, captured in the VM)
that raidman planned wrongly or reported silently before issue 28."""

from __future__ import annotations

from app.plans.builders.filesystem import FilesystemParams, build_filesystem
from app.report import array_to_json
from tests.vm.machine import FIXTURES_VM


def _probe(name: str):  # type: ignore[no-untyped-def]
    from backends.replay import ReplayBackend

    return ReplayBackend(str(FIXTURES_VM / name)).probe()


def test_reshape_keeps_the_old_count_and_the_plan_says_the_kernel_reports_it() -> None:
    """Real kernel, RAID-5 growing 3 -> 4: md/raid_disks reads "4 (3)" (md.c raid_disks_show); the
    kernel keeps the old optimal I/O until end_reshape (raid5.c raid5_set_io_opt). The JSON keeps
    the old count; the filesystem plan uses the new geometry and says the kernel reports the old."""
    m = _probe("raid5-reshaping-3-to-4")
    (a,) = m.arrays
    assert (a.raid_disks, a.previous_raid_disks) == (4, 3)
    assert not [n for n in m.notes if "raid_disks" in n.message]
    j = array_to_json(a)
    assert (j["raid_disks"], j["previous_raid_disks"]) == (4, 3)
    plan = build_filesystem(m, "md0", FilesystemParams(fstype="ext4"))
    assert "stripe_width=48" in " ".join(plan.steps[0].argv)  # 16 × 3 data disks: the new
    [note] = [n for n in plan.notes if "reshaping" in n]
    assert "from 3 to 4 members" in note and "old geometry" in note and "128.0 KiB" in note
    done = _probe("raid5-grown-3-to-4")
    (g,) = done.arrays
    assert g.previous_raid_disks is None and g.raid_disks == 4
    assert not [n for n in build_filesystem(done, "md0", FilesystemParams()).notes if "reshap" in n]


def test_imsm_container_is_refused_and_reported_without_a_disk_count() -> None:
    """Real kernel (tests/vm/test_imsm.py): an IMSM container md127 with a RAID-1 volume md126.
    The container's md/raid_disks is empty (md.c raid_disks_show prints nothing), it has no
    md/degraded: raidman reports neither a count nor "degraded 0", notes nothing, and refuses
    to plan a filesystem on it, naming the volume."""
    import pytest

    from app.plans.geometry import PlanError

    m = _probe("imsm-container-raid1")
    c, v = m.array("md127"), m.array("md126")
    assert c is not None and v is not None and c.is_container and v.container == "md127"
    assert c.raid_disks is None and not [n for n in m.notes if "raid_disks" in n.message]
    assert array_to_json(c)["degraded"] is None and array_to_json(v)["degraded"] == 0
    with pytest.raises(PlanError, match=r"md127 is a container .*\(md126\)"):
        build_filesystem(m, "md127", FilesystemParams(fstype="ext4"))
    assert build_filesystem(m, "md126", FilesystemParams(fstype="ext4")).steps


def test_detail_pane_shows_the_old_count_only_during_a_reshape() -> None:
    from rich.console import Console

    from widgets.device_detail import field_table

    def text(name: str) -> str:
        (a,) = _probe(name).arrays
        c = Console(width=100, record=True)
        c.print(field_table(a))
        return c.export_text()

    assert "previous raid disks" in text("raid5-reshaping-3-to-4")
    assert "previous raid disks" not in text("raid5-grown-3-to-4")
