"""LVM JSON report parsers against libstorage-ng pvs/vgs/lvs + probe/md_plus_lvm1, netdata/lvm,
and a hand-written fullreport sample (samples/lvm_fullreport.json, see samples/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.model.devices import LogicalVolume
from app.parsers.errors import ParseError
from app.parsers.lvm import (
    parse_devices,
    parse_fullreport,
    parse_lvs,
    parse_pvs,
    parse_vgs,
    strip_trailing_commas,
    to_bytes,
)
from tests.corpus import corpus

SAMPLES = Path(__file__).parent / "samples"


def _ls(kind: str, name: str) -> str:
    return corpus("libstorage-ng", kind, f"{name}.json").read_text()


def _lvs(name: str) -> dict[str, LogicalVolume]:
    return {lv.name: lv for lv in parse_lvs(_ls("lvs", name)).lvs}


# ---- pvs / vgs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fname", "expected"),
    [
        ("parse1", [("sda2", "system", 1048576, False)]),
        ("parse2", [("md127", None, 1048576, False)]),
        ("parse_missing", [("sda1", "test", 1048576, False), ("[unknown]", "test", 1048576, True)]),
    ],
)
def test_libstorage_pvs(fname: str, expected: list[tuple[str, str | None, int, bool]]) -> None:
    """libstorage-ng pvs: pv_name -> kernel name, orphan PV (vg ""), pe_start, missing PV."""
    got = [(p.device, p.vg, p.pe_start, p.missing) for p in parse_pvs(_ls("pvs", fname))]
    assert got == expected


@pytest.mark.parametrize(
    ("fname", "expected"),
    [("parse1", ("system", 4194304, 230400, 71666)), ("parse2", ("b", 4194304, 25640, 25640))],
)
def test_libstorage_vgs(fname: str, expected: tuple[str, int, int, int]) -> None:
    """libstorage-ng vgs: extent size/count/free; sizes derived from extents when not reported."""
    (vg,) = parse_vgs(_ls("vgs", fname))
    assert (vg.name, vg.extent_size, vg.extent_count, vg.free_count) == expected
    assert vg.size_bytes == expected[1] * expected[2] and vg.free_bytes == expected[1] * expected[3]


def test_md_plus_lvm1_probe() -> None:
    """libstorage-ng probe/md_plus_lvm1: PVs on md0 and md127; `pvs -a` non-PV rows dropped;
    vg-a/vg-b 7153 extents of 4 MiB, 4593 free; lv-a, lv-b 10737418240 each."""
    base = corpus("libstorage-ng", "probe", "md_plus_lvm1")
    pvs = parse_pvs((base / "pvs.json").read_text())
    assert [(p.device, p.vg) for p in pvs] == [("md0", "vg-a"), ("md127", "vg-b")]
    vgs = parse_vgs((base / "vgs.json").read_text())
    assert [(v.name, v.extent_size, v.extent_count, v.free_count) for v in vgs] == [
        ("vg-a", 4194304, 7153, 4593),
        ("vg-b", 4194304, 7153, 4593),
    ]
    lvs = parse_lvs((base / "lvs.json").read_text()).lvs
    assert [(lv.vg, lv.name, lv.size_bytes, lv.active) for lv in lvs] == [
        ("vg-a", "lv-a", 10737418240, True),
        ("vg-b", "lv-b", 10737418240, True),
    ]
    assert lvs[0].dm_name == "vg--a-lv--a"


# ---- lvs ----------------------------------------------------------------------------------------


def test_lvs_parse1_parse2_parse10() -> None:
    """libstorage-ng lvs parse1/parse2 (trailing comma)/parse10: normal LVs, sizes, active."""
    p1 = _lvs("parse1")
    assert {n: (lv.size_bytes, lv.active, lv.hidden) for n, lv in p1.items()} == {
        "root": (34359738368, True, False),
        "swap": (2147483648, True, False),
    }
    p2 = _lvs("parse2")
    assert {n: lv.size_bytes for n, lv in p2.items()} == {"linear": 104857600, "striped": 109051904}
    p10 = _lvs("parse10")
    assert (p10["c"].vg, p10["c"].size_bytes, p10["c"].stripes, p10["c"].segtype) == (
        "b",
        107369988096,
        1,
        "linear",
    )


def test_lvs_parse3_thin() -> None:
    """libstorage-ng lvs/parse3: thin pool, thin LVs in it, hidden tdata/tmeta, inactive pmspare."""
    lvs = _lvs("parse3")
    assert (lvs["thin-pool"].segtype, lvs["thin-pool"].active, lvs["thin-pool"].size_bytes) == (
        "thin-pool",
        True,
        1073741824,
    )
    assert (lvs["thin1"].segtype, lvs["thin1"].pool, lvs["thin1"].size_bytes) == (
        "thin",
        "thin-pool",
        2147483648,
    )
    assert (lvs["thin2"].segtype, lvs["thin2"].size_bytes) == ("thin", 3221225472)
    assert lvs["thin-pool_tdata"].hidden and lvs["thin-pool_tdata"].active
    assert lvs["thin-pool_tdata"].size_bytes == 1073741824
    assert lvs["thin-pool_tmeta"].hidden and lvs["thin-pool_tmeta"].size_bytes == 4194304
    assert lvs["lvol0_pmspare"].hidden and not lvs["lvol0_pmspare"].active


def test_lvs_parse4_segments_merge() -> None:
    """libstorage-ng lvs/parse4 (trailing comma): 3 rows of one LV -> one LV with 3 segments."""
    r = parse_lvs(_ls("lvs", "parse4"))
    assert [lv.name for lv in r.lvs] == ["normal"]
    lv = r.lvs[0]
    assert lv.size_bytes == 25769803776 and lv.segtype == "striped"
    segs = r.segments_of("test", "normal")
    assert [(s.stripes, s.stripe_size) for s in segs] == [(1, 0), (2, 65536), (2, 262144)]
    assert lv.stripes is None and lv.stripe_size is None  # segments disagree


def test_lvs_parse5_cache() -> None:
    """libstorage-ng lvs/parse5: cache LVs and their pools, cache pools inactive, hidden sub-LVs."""
    lvs = _lvs("parse5")
    assert (lvs["cache1"].segtype, lvs["cache1"].pool) == ("cache", "cache1-volume")
    assert (lvs["cache2"].segtype, lvs["cache2"].pool) == ("cache", "cache2-pool")
    assert lvs["cache3"].segtype == "linear"
    for pool in ("cache2-pool", "cache3-pool"):
        assert lvs[pool].segtype == "cache-pool" and not lvs[pool].active
    assert lvs["cache2-pool"].hidden and not lvs["cache3-pool"].hidden
    for sub in ("cache1_corig", "cache2_corig", "cache2-pool_cmeta", "lvol0_pmspare"):
        assert lvs[sub].hidden


def test_lvs_parse6_snapshots() -> None:
    """libstorage-ng lvs/parse6: thick snapshots, thin snapshots, inactive LVs, thin pool."""
    lvs = _lvs("parse6")
    assert (lvs["linear1"].size_bytes, lvs["linear3"].size_bytes) == (1073741824, 1073741824)
    for snap, origin in (
        ("linear1-snap1", "linear1"),
        ("linear1-snap2", "linear1"),
        ("linear3-snap1", "linear3"),
    ):
        assert (lvs[snap].segtype, lvs[snap].size_bytes, lvs[snap].origin) == (
            "snapshot",
            134217728,
            origin,
        )
    assert (
        lvs["linear3-snap2"].segtype,
        lvs["linear3-snap2"].pool,
        lvs["linear3-snap2"].origin,
    ) == (
        "thin",
        "thin-pool",
        "linear3",
    )
    assert lvs["thin2"].segtype == "thin"
    assert (lvs["thin2-snap1"].origin, lvs["thin2-snap1"].active) == ("thin2", True)
    assert (lvs["thin2-snap2"].origin, lvs["thin2-snap2"].active) == ("thin2", False)
    assert (lvs["lvol0"].segtype, lvs["lvol0"].active, lvs["lvol0"].size_bytes) == (
        "linear",
        False,
        8388608,
    )
    assert (lvs["thin-pool"].segtype, lvs["thin-pool"].size_bytes) == ("thin-pool", 4294967296)


def test_lvs_parse7_mirror() -> None:
    """libstorage-ng lvs/parse7: mirror with 2 stripes, hidden images and log."""
    lvs = _lvs("parse7")
    assert (lvs["mirror"].segtype, lvs["mirror"].size_bytes, lvs["mirror"].stripes) == (
        "mirror",
        5368709120,
        2,
    )
    assert [lvs[f"mirror_mimage_{i}"].size_bytes for i in (0, 1)] == [5368709120] * 2
    assert lvs["mirror_mlog"].size_bytes == 4194304 and lvs["mirror_mlog"].hidden


def test_lvs_parse8_trailing_comma_snapshot() -> None:
    """libstorage-ng lvs/parse8 (trailing comma): origin + thick snapshot."""
    lvs = _lvs("parse8")
    assert lvs["linear1"].size_bytes == 10737418240 and lvs["linear1"].segtype == "linear"
    assert (
        lvs["linear1-snap1"].segtype,
        lvs["linear1-snap1"].size_bytes,
        lvs["linear1-snap1"].origin,
    ) == (
        "snapshot",
        1073741824,
        "linear1",
    )


def test_lvs_parse9_everything() -> None:
    """libstorage-ng lvs/parse9: striped, mirror, raid6 (5 stripes @ 64 KiB), caches, snapshots,
    hidden raid images/metas. (EXPECTED.md says "28 LVs"; the file has 32 rows, 32 distinct names.)"""
    lvs = _lvs("parse9")
    assert len(lvs) == 32
    assert (lvs["striped"].segtype, lvs["striped"].stripes, lvs["striped"].stripe_size) == (
        "striped",
        2,
        65536,
    )
    assert lvs["mirror"].segtype == "mirror"
    r6 = lvs["raid6"]
    assert (r6.segtype, r6.stripes, r6.stripe_size, r6.size_bytes) == (
        "raid6",
        5,
        65536,
        2151677952,
    )
    assert [lvs[f"raid6_rimage_{i}"].size_bytes for i in range(5)] == [717225984] * 5
    assert [lvs[f"raid6_rmeta_{i}"].size_bytes for i in range(5)] == [4194304] * 5
    assert all(lvs[f"raid6_rimage_{i}"].hidden for i in range(5))
    for base in ("linear", "striped", "mirror", "raid6", "cache1", "cache2"):
        snap = lvs[f"{base}-snap"]
        assert (snap.segtype, snap.size_bytes, snap.origin) == ("snapshot", 1073741824, base)
    assert lvs["cache1"].segtype == "cache" and lvs["cache2"].segtype == "cache"


def test_netdata_lvs() -> None:
    """netdata/lvm: thin pool with data_percent 78.89; a plain LV with data_percent "" -> None."""
    (thin,) = parse_lvs(corpus("netdata", "lvm", "lvs-report.json").read_text()).lvs
    assert (thin.vg, thin.name, thin.size_bytes, thin.segtype, thin.data_percent) == (
        "cm-vg",
        "root",
        214232465408,
        "thin-pool",
        78.89,
    )
    (plain,) = parse_lvs(corpus("netdata", "lvm", "lvs-report-no-thin.json").read_text()).lvs
    assert (plain.segtype, plain.data_percent, plain.active) == ("linear", None, True)


# ---- fullreport ---------------------------------------------------------------------------------


def test_fullreport_sample() -> None:
    """samples/lvm_fullreport.json: VG per entry, rows without vg_name, segments by lv_uuid,
    kernel minors -> dm-N, missing PV, orphan PV in an entry with an empty vg list."""
    r = parse_fullreport((SAMPLES / "lvm_fullreport.json").read_text())
    assert [
        (v.name, v.extent_size, v.extent_count, v.free_count, v.pv_count, v.lv_count) for v in r.vgs
    ] == [
        ("vg0", 4194304, 357072, 101072, 1, 3),
        ("scratch", 4194304, 953864, 441408, 2, 1),
    ]
    assert [(p.device, p.vg, p.missing) for p in r.pvs] == [
        ("md127", "vg0", False),
        ("sdb1", "scratch", False),
        ("[unknown]", "scratch", True),
        ("nvme1n1", None, False),
    ]
    md = r.pvs[0]
    assert (md.size_bytes, md.free_bytes, md.pe_start) == (1497930055680, 423923990528, 1048576)
    lvs = {lv.name: lv for lv in r.lvs}
    root = lvs["root"]
    assert (root.vg, root.kernel_name, root.segtype, root.devices, root.active, root.stripes) == (
        "vg0",
        "dm-0",
        "linear",
        ("md127",),
        True,
        1,
    )
    assert (lvs["pool"].segtype, lvs["pool"].kernel_name, lvs["pool"].data_percent) == (
        "thin-pool",
        "dm-3",
        12.5,
    )
    assert lvs["pool"].devices == ("pool_tdata",)
    assert (lvs["data"].segtype, lvs["data"].pool, lvs["data"].kernel_name) == (
        "thin",
        "pool",
        "dm-4",
    )
    assert lvs["pool_tdata"].hidden and lvs["pool_tdata"].kernel_name == "dm-2"
    assert lvs["lvol0_pmspare"].kernel_name is None and not lvs["lvol0_pmspare"].active
    bulk = lvs["bulk"]
    assert (bulk.segtype, bulk.stripes, bulk.stripe_size, bulk.devices, bulk.active) == (
        "striped",
        2,
        65536,
        ("sdb1", "[unknown]"),
        False,
    )
    assert len(r.segments) == 7


def test_fullreport_rejects_lvs_without_vg() -> None:
    doc = {
        "report": [
            {"vg": [], "pv": [], "lv": [{"lv_name": "x", "lv_size": "1", "lv_attr": "-wi-a-----"}]}
        ]
    }
    with pytest.raises(ParseError):
        parse_fullreport(json.dumps(doc))


# ---- values and malformed input ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1048576", 1048576),
        ("1048576B", 1048576),
        ("8s", 4096),
        ("4.00m", 4194304),
        ("<1.82t", round(1.82 * 1024**4)),
        ("2G", 2 * 1000**3),
        ("", None),
        (None, None),
        (512, 512),
    ],
)
def test_to_bytes(value: object, expected: int | None) -> None:
    assert to_bytes(value) == expected


def test_devices() -> None:
    assert parse_devices("/dev/sda(0),/dev/sdb(0)") == ("sda", "sdb")
    assert parse_devices("[pool_tdata](0)") == ("pool_tdata",)
    assert parse_devices("/dev/md127(0),/dev/md127(4000)") == ("md127",)
    assert parse_devices("") == ()


def test_trailing_comma_fallback() -> None:
    """Trailing commas are removed only outside strings; strict JSON is untouched."""
    assert json.loads(strip_trailing_commas('{"a": [1, 2, ], "b": "x, ]", }')) == {
        "a": [1, 2],
        "b": "x, ]",
    }
    strict = '{"report": [{"lv": []}]}'
    assert strip_trailing_commas(strict) == strict


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        '{"report": {}}',
        '{"report": [{"lv": [{"lv_name": "x", "vg_name": "v", "lv_size": "huge"}]}]}',
        '{"report": [{"lv": [{"lv_name": "x", "vg_name": "v", "lv_size": "1",,}]}]}',
    ],
)
def test_malformed_rejected(text: str) -> None:
    with pytest.raises(ParseError):
        parse_lvs(text)


def test_vg_without_extent_size_rejected() -> None:
    with pytest.raises(ParseError):
        parse_vgs('{"report": [{"vg": [{"vg_name": "v"}]}]}')
