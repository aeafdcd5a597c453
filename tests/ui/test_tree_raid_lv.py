"""A raid LV in the tree (widgets/tree_raid_lv.py): under its VG, its sync and health on its
label, one node per image linking its PV, a lost PV's image in red; from the VM's captures
(tests/parsers/samples/lvm_raid)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.model.devices import Disk, Machine, PhysicalVolume, VolumeGroup
from app.parsers.lvm import parse_lvs
from app.parsers.lvm_raid import attach_status, parse_raid_status
from widgets.tree_spec import build_tree_spec

SAMPLES = Path(__file__).parents[1] / "parsers" / "samples" / "lvm_raid"


def _machine(look: str, lost: str | None = None) -> Machine:
    lvs = parse_lvs((SAMPLES / f"{look}.lvs.json").read_text()).lvs
    lvs = attach_status(lvs, parse_raid_status((SAMPLES / f"{look}.dmstatus").read_text()))
    names = [f"nvme{i}n1" for i in range(4) if f"nvme{i}n1" != lost]
    disks = tuple(Disk(name=n, size_bytes=268435456) for n in names)
    pvs = tuple(PhysicalVolume(n, "vgr", 264241152) for n in names)
    vg = VolumeGroup("vgr", 4 * 264241152, 0, 4 * 1024 * 1024)
    kernel = {lv.name: f"dm-{i}" for i, lv in enumerate(lvs)}
    lvs = tuple(replace(lv, kernel_name=kernel[lv.name]) for lv in lvs)
    edges = tuple((pv.device, "vg:vgr") for pv in pvs)
    return Machine(host="h", kernel="6.1", disks=disks, pvs=pvs, vgs=(vg,), lvs=lvs, edges=edges)


def test_a_syncing_raid1_lv_shows_progress_and_its_images_link_their_pvs() -> None:
    specs = {s.ref.key: s for s in build_tree_spec(_machine("a_r1_syncing"))}
    r1 = next(s for s in specs.values() if s.ref.kind == "lv" and "r1 " in s.label.plain)
    assert "raid1" in r1.label.plain and "resync 9.4%" in r1.label.plain
    images = [s for s in specs.values() if s.ref.key.startswith("rimage:vgr/r1:")]
    assert [s.label.plain for s in images] == [
        "◦ image 0  nvme0n1  not in sync",
        "◦ image 1  nvme1n1  not in sync",
    ]
    assert [s.ref.target for s in images] == ["dev:nvme0n1", "dev:nvme1n1"]
    assert all(s.parent == r1.ref.key for s in images)


def test_a_lost_pv_shows_partial_and_the_failed_image() -> None:
    specs = build_tree_spec(_machine("f_pv_lost", lost="nvme1n1"))
    r1 = next(s for s in specs if s.ref.kind == "lv" and s.label.plain.startswith("r1 "))
    assert "raid1  partial" in r1.label.plain and "resync" not in r1.label.plain
    (failed,) = [s for s in specs if s.ref.key == "rimage:vgr/r1:1"]
    assert failed.label.plain == "◦ image 1  [unknown]  failed" and failed.ref.target is None
    assert any(span.style == "bold red" for span in failed.label.spans)
    mism = next(s for s in specs if s.ref.kind == "lv" and s.label.plain.startswith("r5 "))
    assert "raid5  partial" in mism.label.plain


def test_the_demos_r5_line_reads_whole_at_80_columns() -> None:
    # at 80x24 the tree pane had room for "r5  100G  raid5 ×3  mismatches exi": the images'
    # count is its nodes, lvm's "mismatches exist" is "mismatches" on the line
    from backends.simulated import SimClock, SimulatedBackend

    m = SimulatedBackend.from_scenario("lvm-raid", clock=SimClock.manual()).probe()
    (r5,) = [s for s in build_tree_spec(m) if s.ref.kind == "lv" and s.label.plain[:3] == "r5 "]
    assert r5.label.plain == "r5  100G  raid5  mismatches  (dm-1)"
    assert len("└ ▼ ▲ " + r5.label.plain) <= 41  # the tree's width at 80 columns
