"""widgets.storage_tree.build_tree_spec: each device once as a full node, every other mention a link."""

from __future__ import annotations

from collections import Counter

from app.format import duration, speed
from app.model import (
    CryptMapping,
    Disk,
    Filesystem,
    LogicalVolume,
    Machine,
    MdArray,
    MdMember,
    Partition,
    PhysicalVolume,
    VolumeGroup,
)
from tests.ui.fake_backend import build_machine
from widgets.tree_spec import NodeSpec, build_tree_spec

FULL_KINDS = {"disk", "partition", "array", "container", "crypt", "lv", "vg", "fs", "dev"}


def _full(specs: list[NodeSpec]) -> list[str]:
    return [s.ref.key for s in specs if s.ref.kind in FULL_KINDS and not s.ref.is_link]


def _check_invariants(specs: list[NodeSpec]) -> None:
    keys = [s.ref.key for s in specs]
    assert len(keys) == len(set(keys)), "node keys are unique"
    full = _full(specs)
    assert not [k for k, n in Counter(full).items() if n > 1], "a device appears once in full"
    seen: set[str] = set()
    for s in specs:  # parents come before children
        assert s.parent is None or s.parent in seen
        seen.add(s.ref.key)
    for s in specs:
        if s.ref.target is not None:
            assert s.ref.target in keys, f"link {s.ref.key} points at a node that exists"


def test_raid10_stack() -> None:
    specs = build_tree_spec(build_machine())
    _check_invariants(specs)
    by_key = {s.ref.key: s for s in specs}
    assert [s.ref.name for s in specs if s.parent is None] == ["Disks", "Arrays", "Volume groups"]
    link = by_key["memberof:nvme0n1p1>md127"]
    assert link.parent == "dev:nvme0n1p1" and link.ref.target == "dev:md127"
    assert link.label.plain == "→ md127 slot 0  in_sync"
    back = by_key["member:md127:nvme0n1p1"]
    assert back.parent == "dev:md127" and back.ref.target == "dev:nvme0n1p1"
    md127 = build_machine().array("md127")
    assert md127 is not None and md127.sync is not None
    live = f"{speed(md127.sync.speed_kib_s)} · ETA {duration(md127.sync.eta_s)}"
    assert (
        by_key["dev:md127"].label.plain
        == f"md127  raid10 [UUUU] · resync 16.3% · {live} · n2 · 32K"
    )
    assert by_key["pvlink:md127"].ref.target == "vg:vg0"
    assert by_key["vgpv:vg0:md127"].ref.target == "dev:md127"
    assert by_key["dev:dm-0"].parent == "vg:vg0"
    assert by_key["fs:dm-0"].parent == "dev:dm-0"
    assert by_key["fs:dm-0"].label.plain.startswith("ext4  /")


def test_member_colours_and_marks() -> None:
    m = build_machine(degraded=True)
    a = m.arrays[0]
    members = (
        *a.members[:2],
        MdMember("nvme2n1p1", 2, ("in_sync", "write_mostly")),
        MdMember("nvme3n1p1", 3, ("spare",)),  # spare with a slot: being rebuilt
    )
    from dataclasses import replace

    m = replace(m, arrays=(replace(a, members=members, degraded=1),))
    by_key = {s.ref.key: s for s in build_tree_spec(m)}
    wm = by_key["member:md127:nvme2n1p1"].label
    assert wm.plain.endswith("in_sync (W)")
    rebuilding = by_key["member:md127:nvme3n1p1"].label
    assert "rebuilding" in rebuilding.plain
    styles = {str(span.style) for span in rebuilding.spans}
    assert "yellow" in styles
    assert "DEGRADED(1)" in by_key["dev:md127"].label.plain


def _imsm_machine() -> Machine:
    disks = tuple(Disk(name=f"sd{c}", size_bytes=10**12, rotational=True) for c in "ab")
    container = MdArray(
        name="md127",
        level="container",
        metadata="imsm",
        members=tuple(MdMember(d.name, None, ()) for d in disks),
    )
    vols = tuple(
        MdArray(
            name=f"md12{6 - i}",
            level="raid1",
            raid_disks=2,
            metadata="external:/md127/" + str(i),
            container="md127",
            member_index=i,
            members=tuple(MdMember(d.name, j, ("in_sync",)) for j, d in enumerate(disks)),
        )
        for i in range(2)
    )
    edges = [(d.name, "md127") for d in disks] + [(d.name, v.name) for d in disks for v in vols]
    edges += [("md127", v.name) for v in vols]
    fs = Filesystem(device="md126", fstype="xfs", mountpoints=("/srv",))
    return Machine(
        host="h", kernel="k", disks=disks, arrays=(container, *vols), edges=tuple(edges),
        filesystems=(fs,),
    )  # fmt: skip


def test_imsm_container_holds_its_volumes() -> None:
    specs = build_tree_spec(_imsm_machine())
    _check_invariants(specs)
    by_key = {s.ref.key: s for s in specs}
    assert by_key["dev:md127"].ref.kind == "container"
    assert by_key["dev:md126"].parent == "dev:md127"
    assert by_key["dev:md125"].parent == "dev:md127"
    assert by_key["fs:md126"].parent == "dev:md126"
    arrays_top = [s.ref.name for s in specs if s.parent == "section:arrays"]
    assert arrays_top == ["md127"]
    # each disk links to the container and to both volumes
    assert {s.ref.target for s in specs if s.parent == "dev:sda"} == {
        "dev:md127", "dev:md126", "dev:md125",
    }  # fmt: skip


def test_lvm_thin_pool_raid_lv_and_crypt() -> None:
    disk = Disk(name="vda", size_bytes=10**11)
    parts = (
        Partition("vda1", "vda", 1, 2048, 10**10),
        Partition("vda2", "vda", 2, 2048 + 10**10 // 512, 10**10),
    )
    lvs = (
        LogicalVolume("pool", "vg", 10**9, "thin-pool", data_percent=85.0),
        LogicalVolume("[pool_tdata]", "vg", 10**9, "linear", hidden=True),
        LogicalVolume("thin1", "vg", 10**9, "thin", pool="pool", kernel_name="dm-4"),
        LogicalVolume("mirror", "vg", 10**9, "raid1", kernel_name="dm-5"),
        LogicalVolume("[mirror_rimage_0]", "vg", 10**9, "linear", hidden=True),
        LogicalVolume("off", "vg", 10**9, "linear", active=False),
    )
    crypt = CryptMapping(name="luks-1", kernel_name="dm-9", backing="vda2", type="LUKS2")
    m = Machine(
        host="h",
        kernel="k",
        disks=(disk,),
        partitions=parts,
        pvs=(PhysicalVolume("vda1", "vg", 10**10),),
        vgs=(VolumeGroup("vg", 10**10, 0, 4 << 20),),
        lvs=lvs,
        crypts=(crypt,),
        filesystems=(Filesystem("dm-9", "ext4"), Filesystem("dm-4", "xfs", mountpoints=("/t",))),
        edges=(("vda", "vda1"), ("vda", "vda2"), ("vda2", "dm-9"), ("vda1", "dm-4")),
    )
    specs = build_tree_spec(m)
    _check_invariants(specs)
    by_key = {s.ref.key: s for s in specs}
    assert by_key["dev:dm-4"].parent == "lv:vg/pool"
    assert by_key["lv:vg/[pool_tdata]"].parent == "lv:vg/pool"
    assert by_key["lv:vg/[mirror_rimage_0]"].parent == "dev:dm-5"
    assert by_key["lv:vg/off"].label.plain.endswith("inactive")
    assert by_key["dev:dm-9"].parent == "dev:vda2"  # the crypt sits on its partition
    assert by_key["fs:dm-9"].parent == "dev:dm-9"
    assert by_key["fs:dm-4"].parent == "dev:dm-4"
    assert by_key["pvlink:vda1"].ref.target == "vg:vg"
    assert "85.0%" in by_key["lv:vg/pool"].label.plain


def test_blank_machine_has_only_disks() -> None:
    m = Machine(host="h", kernel="k", disks=(Disk("nvme0n1", 10**12),))
    specs = build_tree_spec(m)
    assert [s.ref.key for s in specs] == ["section:disks", "dev:nvme0n1"]


def test_tree_lists_the_disks_the_report_lists() -> None:
    """Issue 11's machine (tests/fixtures/preflight/devhost-root-on-vda/README) has a 0-byte
    zram0: `raidman report` does not list it as a disk, and neither does the tree (one rule,
    ``Disk.is_storage``), nor the Disks section's table."""
    from io import StringIO

    from rich.console import Console

    from app.report import machine_to_text
    from backends.replay import ReplayBackend
    from tests.corpus import FIXTURES
    from widgets.device_detail import section_view

    m = ReplayBackend(FIXTURES / "preflight" / "devhost-root-on-vda").probe()
    assert [d.name for d in m.disks] == ["zram0", "vda"]
    specs = build_tree_spec(m)
    tree_disks = [s.ref.name for s in specs if s.parent == "section:disks"]
    report = machine_to_text(m)
    listed = [d.name for d in m.disks if f"  {d.name} " in report]
    assert tree_disks == listed == ["vda"]
    console = Console(file=StringIO(), width=160, color_system=None, record=True)
    console.print(section_view(m, "Disks"))
    table = console.export_text()
    assert "vda" in table and "zram0" not in table


def test_a_failed_self_test_marks_its_disk_only() -> None:
    """disk_marks keeps the findings that name a mark (a failed SMART self-test,
    app/rules/smart_logs.py), and only on the disk the finding names; the mark goes after the
    size and before the model (a narrow tree cuts the end of a label)."""
    from app.rules.finding import Finding
    from widgets.tree_spec import disk_marks

    m = Machine(
        host="h",
        kernel="k",
        disks=(
            Disk("sda", 10**12, model="WDC WD10EFRX", rotational=True, transport="sata"),
            Disk("sdb", 10**12, model="WDC WD10EFRX", rotational=True, transport="sata"),
        ),
    )
    findings = [
        Finding("error", "smart-selftest-failed", "sdb", "sdb: last SMART self-test failed", ""),
        Finding("error", "smart-failed", "sda", "sda: SMART health FAILED", ""),
    ]
    marks = disk_marks(findings)
    assert marks == {"sdb": "smart-selftest-failed"}
    labels = {s.ref.name: s.label.plain for s in build_tree_spec(m, marks)}
    assert labels["sdb"] == "sdb  931.3G  self-test✖  hdd sata  WDC WD10EFRX"
    assert labels["sda"] == "sda  931.3G  hdd sata  WDC WD10EFRX"
    assert {s.ref.name: s.label.plain for s in build_tree_spec(m)}["sdb"] == labels["sda"].replace(
        "sda", "sdb"
    )
