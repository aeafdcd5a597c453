"""lsblk JSON parser against trident-lsblk (shared corpus) and captured/hand-written samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.parsers.errors import ParseError
from app.parsers.lsblk import LSBLK_COLUMNS, LsblkReport, parse_lsblk, partition_number
from tests.corpus import corpus

SAMPLES = Path(__file__).parent / "samples"


def _trident(name: str) -> LsblkReport:
    return parse_lsblk(corpus("trident-lsblk", name).read_text(encoding="utf-8"))


# name, type, size, fstype, fssize, fs uuid, partuuid, partn, mountpoints, pkname
SDA_EXPECTED = [
    ("sda", "disk", 17179869184, None, None, None, None, None, (), None),
    ("sda1", "part", 52428800, "vfat", 52293632, "6AA2-09D2", "118abae1-b97c-4f85-a1d0-ed8fc0482cb0", 1, ("/boot/efi",), "sda"),
    ("sda2", "part", 4294967296, "ext4", 4143841280, "f3c65403-dafc-4dbf-873a-c17d6fb98a2f", "04b3150d-48b5-425d-8054-4c332a5405d9", 2, ("/",), "sda"),
    ("sda3", "part", 4294967296, None, None, None, "68de2d58-40a9-4f60-8f36-2252f4861357", 3, (), "sda"),
    ("sda4", "part", 2147483648, "swap", None, "91180e8c-096a-43d8-88b2-c24a5b5eaee6", "8dda3985-5246-497f-98de-9b41bb8ef35c", 4, ("[SWAP]",), "sda"),
    ("sda5", "part", 104857600, "ext4", 92500992, "2253b2d0-62db-4ae9-8343-4023a361a9c3", "b62fa0d6-4241-4992-ab38-cc7cf81a0b99", 5, ("/var/lib/trident",), "sda"),
]  # fmt: skip


def test_osutils_sample_sda() -> None:
    """trident-lsblk osutils_sample_lsblk_sda.json (test_parse_lsblk_output): --paths names, 6 nodes."""
    r = _trident("osutils_sample_lsblk_sda.json")
    got = [
        (
            n.name,
            n.type,
            n.size_bytes,
            n.fstype,
            n.fssize,
            n.uuid,
            n.partuuid,
            n.partn,
            n.mountpoints,
            n.pkname,
        )
        for n in r.nodes
    ]
    assert got == SDA_EXPECTED
    assert all(n.ro is False for n in r.nodes)
    sda = r.node("sda")
    assert (
        sda is not None
        and sda.ptuuid == "5f578d9b-bc43-4778-927b-d7e019586bc5"
        and sda.pttype == "gpt"
    )
    assert r.edges == tuple(("sda", f"sda{i}") for i in range(1, 6))
    assert [p.number for p in r.partitions] == [1, 2, 3, 4, 5]
    assert [d.name for d in r.disks] == ["sda"] and r.disks[0].partition_table == "gpt"
    assert [(f.device, f.fstype) for f in r.filesystems] == [
        ("sda1", "vfat"),
        ("sda2", "ext4"),
        ("sda4", "swap"),
        ("sda5", "ext4"),
    ]


def test_bad_output_rejected() -> None:
    """trident-lsblk: the string "bad output" must be rejected."""
    with pytest.raises(ParseError):
        parse_lsblk("bad output")


def test_old_format_mbr_partuuid() -> None:
    """trident-lsblk osutils_bad_uuids_sda1.json: older string-number format, MBR partuuid accepted."""
    r = _trident("osutils_bad_uuids_sda1.json")
    assert len(r.nodes) == 1
    n = r.nodes[0]
    assert (n.name, n.partuuid, n.uuid, n.fstype) == ("sda1", "3a9c2054-02", "B333-37D9", "vfat")
    assert (n.fssize, n.fsavail, n.fsused) == (52293632, 49911808, 2381824)
    assert r.filesystems[0].mountpoints == ("/boot/efi",)
    # no START column in that output: known as a node and an edge, not as a Partition
    assert r.edges == (("sda", "sda1"),)
    assert r.partitions == () and r.incomplete == ("sda1",)


def test_azl3_single_parses() -> None:
    """trident-lsblk osutils_azl3_single.json: upstream asserts only that it parses."""
    r = _trident("osutils_azl3_single.json")
    assert len(r.nodes) == 1 and r.partitions[0].name == "sda1"


LOOP13 = [
    ("loop13p1", 2048, 536870912, "vfat", ("/boot/efi",)),
    ("loop13p2", 1050624, 268435456, "ext4", ("/boot",)),
    ("loop13p3", 1574912, 268435456, None, ()),
    ("loop13p4", 2099200, 4294967296, "ext4", ("/",)),
    ("loop13p5", None, 4294967296, None, ()),
    ("loop13p6", None, 1073741824, "ext4", ("/usr",)),
    ("loop13p7", None, 1073741824, None, ()),
    ("loop13p8", None, 134217728, None, ()),
    ("loop13p9", None, 134217728, None, ()),
    ("loop13p10", None, 536870912, "ext4", ("/var/lib/trident",)),
    ("loop13p11", None, 1073741824, "ext4", ("/home",)),
    ("loop13p12", None, 134217728, "ext4", ("/srv",)),
]


def test_full_system_tree() -> None:
    """trident-lsblk lsblk.json: 36 nodes; loop13's 12 partitions; nvme0n1p2 -> two LVM children."""
    r = _trident("lsblk.json")
    assert len(r.nodes) == 36
    assert [r.node(f"loop{i}").type for i in range(12)] == ["loop"] * 12  # type: ignore[union-attr]
    loop0 = r.node("loop0")
    assert loop0 is not None and loop0.size_bytes == 66863104 and loop0.mountpoints == ()
    assert r.children_of("loop12") == ("loop12p1", "loop12p2")
    assert r.children_of("loop13") == tuple(f"loop13p{i}" for i in range(1, 13))
    parts = {p.name: p for p in r.partitions}
    for name, start, size, fstype, mps in LOOP13:
        p = parts[name]
        assert p.parent == "loop13" and p.size_bytes == size
        assert p.number == int(name.rsplit("p", 1)[1])
        if start is not None:
            assert p.start_sector == start
        node = r.node(name)
        assert node is not None and (node.fstype, node.mountpoints) == (fstype, mps)
    p1 = r.node("loop13p1")
    assert p1 is not None and p1.partlabel == "esp"
    assert (p1.fssize, p1.fsused, p1.fsavail) == (535801856, 1945600, 533856256)
    sda = next(d for d in r.disks if d.name == "sda")
    assert (sda.size_bytes, sda.model, sda.transport, sda.rotational, sda.vendor) == (
        512110190592,
        "MTFDDAK512MBF-1A",
        "sata",
        False,
        "ATA",
    )
    assert (parts["sda1"].start_sector, parts["sda1"].size_bytes) == (2048, 1127219200)
    assert (parts["sda2"].start_sector, parts["sda2"].size_bytes) == (2203648, 510980521984)
    nvme = next(d for d in r.disks if d.name == "nvme0n1")
    assert nvme.model == "SAMSUNG MZVPV512HDGL-000H1" and nvme.transport == "nvme"
    assert nvme.scheduler == "none"
    assert r.children_of("nvme0n1p2") == ("dm-0", "dm-1")
    root = r.node("dm-0")
    assert root is not None and root.display_name == "xubuntu--vg--old-root" and root.type == "lvm"
    fs = {f.device: f for f in r.filesystems}
    assert (
        fs["dm-0"].fstype,
        fs["dm-0"].size_bytes,
        fs["dm-0"].used_bytes,
        fs["dm-0"].avail_bytes,
    ) == (
        "ext4",
        501380800512,
        170235727872,
        305601134592,
    )
    assert fs["dm-0"].mountpoints == ("/_imageconfigs",)
    assert fs["dm-1"].fstype == "swap"
    assert root.raw["fsuse%"] == "34%"
    # LVM2_member is a building block, not a filesystem
    assert "nvme0n1p2" not in fs and r.node("nvme0n1p2").fstype == "LVM2_member"  # type: ignore[union-attr]
    assert {d.kind for d in r.disks} == {"loop", "disk"}


def test_lazy_variant_has_fewer_partitions() -> None:
    """trident-lsblk lazy_lsblk.json: the same capture minus four "-b" partitions (32 nodes)."""
    full, lazy = _trident("lsblk.json"), _trident("lazy_lsblk.json")
    assert len(lazy.nodes) == 32
    missing = {n.name for n in full.nodes} - {n.name for n in lazy.nodes}
    assert len(missing) == 4 and all(full.node(m).type == "part" for m in missing)  # type: ignore[union-attr]
    assert len([p for p in lazy.partitions if p.parent == "loop13"]) == 8


def test_md_under_two_partitions_dedupes() -> None:
    """Hand-written sample (samples/lsblk_md_lvm.json): md0 and its LV are printed under both
    partitions; each device appears once, every edge once, nothing lost."""
    r = parse_lsblk((SAMPLES / "lsblk_md_lvm.json").read_text())
    assert [n.name for n in r.nodes] == ["sda", "sda1", "md0", "dm-0", "sdb", "sdb1"]
    assert r.edges == (
        ("sda", "sda1"),
        ("sda1", "md0"),
        ("md0", "dm-0"),
        ("sdb", "sdb1"),
        ("sdb1", "md0"),
    )
    assert r.parents_of("md0") == ("sda1", "sdb1")
    assert [f.device for f in r.filesystems] == ["dm-0"]  # members are not filesystems
    assert r.filesystems[0].mountpoints == ("/srv",)
    d = r.disks[0]
    assert (d.model, d.vendor, d.physical_sector, d.min_io, d.transport) == (
        "Samsung SSD 850 EVO 500GB",
        "ATA",
        4096,
        4096,
        "sata",
    )
    assert [(p.name, p.parent, p.number, p.start_sector) for p in r.partitions] == [
        ("sda1", "sda", 1, 2048),
        ("sdb1", "sdb", 1, 2048),
    ]


def test_host_capture_in_backend_columns() -> None:
    """samples/host_lsblk.json: this host's lsblk 2.38 output for exactly LSBLK_COLUMNS."""
    r = parse_lsblk((SAMPLES / "host_lsblk.json").read_text())
    keys = set(r.nodes[0].raw)
    assert keys == {c.lower() for c in LSBLK_COLUMNS}
    vda = r.node("vda")
    assert vda is not None and vda.size_bytes == 274877906944 and vda.phy_sec == 4096
    assert [d.name for d in r.disks] == ["zram0", "vda"]


def test_columns_exclude_partn() -> None:
    """PARTN needs util-linux 2.39; the backend targets 2.38, so it is derived instead."""
    assert "PARTN" not in LSBLK_COLUMNS and "START" in LSBLK_COLUMNS and "MAJ:MIN" in LSBLK_COLUMNS
    assert len(set(LSBLK_COLUMNS)) == len(LSBLK_COLUMNS)


@pytest.mark.parametrize(
    ("name", "parent", "number"),
    [
        ("sda1", "sda", 1),
        ("sdb12", "sdb", 12),
        ("nvme0n1p2", "nvme0n1", 2),
        ("mmcblk0p1", "mmcblk0", 1),
        ("md126p3", "md126", 3),
        ("loop13p10", "loop13", 10),
        ("weird", "sda", None),
    ],
)
def test_partition_number(name: str, parent: str, number: int | None) -> None:
    assert partition_number(name, parent) == number


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[]",
        '{"blockdevices": {}}',
        '{"blockdevices": [{"name": "sda"}]}',
        '{"blockdevices": [{"name": "sda", "type": "disk", "size": "big"}]}',
        '{"blockdevices": [{"name": "sda", "type": "disk", "size": 1, "rota": "maybe"}]}',
        '{"blockdevices": [{"type": "disk", "size": 1}]}',
        '{"blockdevices": [{"name": "sda1", "type": "part", "size": 1, "start": 2048}]}',
    ],
)
def test_malformed_rejected(text: str) -> None:
    with pytest.raises(ParseError):
        parse_lsblk(text)
