"""mdadm parsers: jc-mdadm (--detail/--examine text vs jc's expected .json), libstorage-ng
(--detail --export files), and --detail --scan / mdadm.conf samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.parsers.errors import ParseError
from app.parsers.mdadm import (
    MdadmDevice,
    export_view,
    parse_detail,
    parse_detail_export,
    parse_examine,
    parse_scan,
)
from tests.corpus import corpus

DETAIL_FILES = [
    "container1-member", "container1-root", "container2-member", "container2-root", "detail",
    "raid0-ok", "raid1-failed-and-flags", "raid1-faulty-and-removed", "raid1-faulty-with-spare",
    "raid1-faulty", "raid1-ok-0-9", "raid1-ok-failfast", "raid1-ok-spare", "raid1-ok",
    "raid1-rebuild-failfast", "raid1-spare-writem-rebuild", "raid1-syncing", "raid5-homehost",
    "raid5-meta09", "raid5-ok",
]  # fmt: skip
EXAMINE_FILES = [
    "examine-container1", "examine-container2-dev1", "examine-container2-dev2",
    "examine-raid0-offline", "examine-raid0-ok", "examine-raid1-0-90-ok", "examine-raid1-checking",
    "examine-raid1-failfast", "examine-raid1-faulty1", "examine-raid1-faulty2",
    "examine-raid1-moreflags", "examine-raid1-ok", "examine-raid1-replacing", "examine-raid1-resync",
    "examine-raid1-spare", "examine-raid1-syncing", "examine-raid5-homehost", "examine-raid5-meta09",
    "examine-raid5-ok", "examine",
]  # fmt: skip


def _jc(stem: str) -> tuple[str, dict[str, Any]]:
    base = corpus("jc-mdadm", stem)
    text = Path(f"{base}.out").read_text()
    return text, json.loads(Path(f"{base}.json").read_text())


def _table(devs: tuple[MdadmDevice, ...]) -> list[dict[str, Any]]:
    return [
        {
            "number": d.number,
            "major": d.major,
            "minor": d.minor,
            "raid_device": d.raid_device,
            "device": d.device,
            **({"state": list(d.state)} if d.state else {}),
        }
        for d in devs
    ]


def _progress(exp: dict[str, Any]) -> dict[str, int]:
    return {
        k[: -len("_status_percent")]: v for k, v in exp.items() if k.endswith("_status_percent")
    }


@pytest.mark.parametrize("stem", DETAIL_FILES)
def test_jc_detail(stem: str) -> None:
    """jc-mdadm mdadm-query-*: every field modelled agrees with jc's expected .json."""
    text, exp = _jc(f"mdadm-query-{stem}")
    d = parse_detail(text)
    assert d.device == exp["device"]
    assert d.version == exp.get("version")
    assert d.raid_level == exp["raid_level"]
    assert d.array_size_kib == exp.get("array_size_num")
    assert d.used_dev_size_kib == exp.get("used_dev_size_num")
    for f in (
        "raid_devices",
        "total_devices",
        "active_devices",
        "working_devices",
        "failed_devices",
        "spare_devices",
    ):
        assert getattr(d, f) == exp.get(f), f
    assert list(d.state) == exp.get("state_list", [])
    assert d.chunk_bytes == (exp["chunk_size_num"] * 1024 if "chunk_size_num" in exp else None)
    assert d.layout == exp.get("layout")
    assert d.name == exp.get("name_val")
    assert d.homehost == exp.get("homehost")
    assert d.uuid == exp.get("uuid_val", exp.get("uuid"))
    assert d.events == exp.get("events_num")
    assert d.fields.get("Events") == exp.get("events")
    assert d.consistency_policy == exp.get("consistency_policy")
    assert d.intent_bitmap == exp.get("intent_bitmap")
    assert dict(d.progress) == _progress(exp)
    assert d.container == exp.get("container_dev")
    assert d.container_member == exp.get("container_member")
    assert list(d.member_arrays) == exp.get("member_arrays_list", [])
    assert _table(d.devices) == exp["device_table"]


@pytest.mark.parametrize("stem", EXAMINE_FILES)
def test_jc_examine(stem: str) -> None:
    """jc-mdadm mdadm-examine*: modelled fields agree with jc's expected .json.

    The 0.90 device table is compared on our own reading: jc's .json turns the row
    "   1     1     254 ..." into number 11 (it glues the slot index to the number)."""
    text, exp = _jc(f"mdadm-{stem}")
    e = parse_examine(text)
    assert e.device == exp["device"]
    assert (e.magic, e.version) == (exp.get("magic"), exp.get("version"))
    assert e.feature_map == exp.get("feature_map")
    assert e.array_uuid == exp.get("array_uuid", exp.get("uuid_val", exp.get("uuid")))
    assert e.name == exp.get("name_val", exp.get("name"))
    assert e.homehost == exp.get("homehost")
    assert e.raid_level == exp.get("raid_level")
    assert e.raid_devices == exp.get("raid_devices")
    assert e.avail_dev_size_sectors == exp.get("avail_dev_size_num")
    assert e.array_size_kib == exp.get("array_size_num")
    assert e.data_offset_sectors == exp.get("data_offset")
    assert e.super_offset_sectors == exp.get("super_offset")
    assert list(e.state) == exp.get("state_list", [])
    assert e.device_uuid == exp.get("device_uuid")
    assert list(e.flags) == exp.get("flag_list", [])
    assert e.events == exp.get("events_num")
    assert e.device_role == exp.get("device_role")
    assert e.array_state == (exp["array_state"].split()[0] if "array_state" in exp else None)
    assert e.layout == exp.get("layout")
    assert e.chunk_bytes == (exp["chunk_size_num"] * 1024 if "chunk_size_num" in exp else None)
    assert dict(e.progress) == _progress(exp)
    if "recovery_offset" in exp:
        assert e.recovery_offset_sectors == int(exp["recovery_offset"].split()[0])


def test_jc_examine_expected_md_table() -> None:
    """jc-mdadm EXPECTED.md --examine table: roles, array states, events, replacement offset."""
    cases = {
        "examine-raid0-offline": ("Active device 0", "AA", 0, 0),
        "examine-raid1-faulty1": ("Active device 0", "A.", 25, 0),
        "examine-raid1-replacing": ("Replacement device 1", "AR", 75, 1),
        "examine-raid1-spare": ("spare", "AA", 52, None),
        "examine": ("Active device 0", "AA", 2193679, 0),
    }
    for stem, (role, astate, events, slot) in cases.items():
        e = parse_examine(_jc(f"mdadm-{stem}")[0])
        assert (e.device_role, e.array_state, e.events, e.role_slot) == (role, astate, events, slot)
    rep = parse_examine(_jc("mdadm-examine-raid1-replacing")[0])
    assert rep.recovery_offset_sectors == 115200 and rep.flags == ("write-mostly", "failfast")
    m09 = parse_examine(_jc("mdadm-examine-raid5-meta09")[0])
    assert m09.this is not None and (m09.this.number, m09.this.device) == (0, "/dev/vda1")
    assert [(d.number, d.raid_device, d.name) for d in m09.devices] == [
        (0, 0, "vda1"),
        (1, 1, "vda2"),
        (2, 2, "vda3"),
    ]
    assert m09.array_uuid == "4de9c6a6:ce05eada:96fc04a8:108a4af7" and m09.homehost == "sysrescue"
    ddf = parse_examine(_jc("mdadm-examine-container1")[0])
    assert ddf.version == "01.02.00" and ddf.fields["Raid Level[0]"] == "RAID1"
    assert ddf.fields["Container GUID"].startswith("4C696E75:782D4D44:DEADBEEF")


# ---- --detail --export -----------------------------------------------------------------------


def test_libstorage_export_parse1() -> None:
    """libstorage-ng mdadm-detail/parse1.export: uuid, no devname (only MD_NAME), 1.0, RAID1, roles."""
    v = export_view(
        parse_detail_export(corpus("libstorage-ng", "mdadm-detail", "parse1.export").read_text())
    )
    assert (v.uuid, v.devname, v.name, v.metadata, v.level) == (
        "35dd06d4:b4e9e248:9262c3ad:02b61654",
        None,
        "linux:0",
        "1.0",
        "raid1",
    )
    assert v.roles == (("/dev/sda1", "0"), ("/dev/sdb1", "1"))


def test_libstorage_export_parse2_mangled_keys() -> None:
    """libstorage-ng mdadm-detail/parse2.export: RAID10 "test", mangled MD_DEVICE_ev_sdd2_ROLE keys."""
    kv = parse_detail_export(corpus("libstorage-ng", "mdadm-detail", "parse2.export").read_text())
    assert kv["MD_DEVICE_ev_sdd2_ROLE"] == "3"
    v = export_view(kv)
    assert (v.uuid, v.devname, v.metadata, v.level) == (
        "bc9eb9bb:cba04711:7e4155f7:808630e7",
        "test",
        "1.2",
        "raid10",
    )
    assert v.roles == (
        ("/dev/sdc1", "0"),
        ("/dev/sdc2", "2"),
        ("/dev/sdc3", "spare"),
        ("/dev/sdd2", "3"),
        ("/dev/sdd3", "1"),
    )
    assert v.role_of("sdc3") == "spare"


PROBE_EXPORTS = {
    ("md-imsm1", "md_imsm0"): ("container", "imsm", "imsm0", None, None, "sdb:spare sdc:spare sdd:spare"),
    ("md-imsm1", "md_a"): ("raid0", None, "a", "/dev/md/imsm0", 0, "sdb:1 sdd:0"),
    ("md-imsm1", "md_b"): ("raid1", None, "b", "/dev/md/imsm0", 1, "sdb:1 sdc:0"),
    ("md-ddf1", "md_ddf0"): ("container", "ddf", "ddf0", None, None, "sdb:spare sdc:spare sdd:spare"),
    ("md-ddf1", "md_a"): ("raid0", None, "a", "/dev/md/ddf0", 0, "sdb:0 sdd:1"),
    ("md-ddf1", "md_b"): ("raid1", None, "b", "/dev/md/ddf0", 1, "sdb:0 sdd:1"),
    ("md_plus_lvm1", "md_md-b"): ("raid1", "1.0", "md-b", None, None, "sdc2:0 sdd2:1"),
    ("md3", "md_test4"): ("raid0", "1.2", "test4", None, None, "sdb10:1 sdb9:0"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(PROBE_EXPORTS))
def test_libstorage_probe_exports(case: tuple[str, str]) -> None:
    """libstorage-ng probe/*/mdadm-detail-export_*.txt: containers (imsm/ddf) and their members."""
    folder, name = case
    path = corpus("libstorage-ng", "probe", folder, f"mdadm-detail-export_{name}.txt")
    v = export_view(parse_detail_export(path.read_text()))
    roles = " ".join(f"{d.rsplit('/', 1)[-1]}:{r}" for d, r in v.roles)
    assert (v.level, v.metadata, v.devname, v.container, v.member, roles) == PROBE_EXPORTS[case]


def test_all_probe_exports_parse() -> None:
    """Every libstorage-ng probe export file parses and names a level and a uuid."""
    files = sorted(corpus("libstorage-ng", "probe").glob("*/mdadm-detail-export_*.txt"))
    assert len(files) == 18
    for f in files:
        v = export_view(parse_detail_export(f.read_text()))
        assert v.level and v.uuid


# ---- --detail --scan / mdadm.conf ------------------------------------------------------------

SCAN = """\
ARRAY /dev/md/127 metadata=1.2 name=nas:127 UUID=3aaa0122:29827cfa:5331ad66:ca767371
ARRAY /dev/md/imsm0 metadata=imsm UUID=955f4f3a:dea4bc4d:f597c49e:c118251c
ARRAY /dev/md/vol0 container=/dev/md/imsm0 member=0 UUID=8f600ff3:ccc9872c:539cd6c8:91e3b4a1
"""

CONF = """\
# mdadm.conf written by the installer
DEVICE partitions containers
HOMEHOST <system>
MAILADDR root

# definitions of existing MD arrays
ARRAY /dev/md0 level=raid1 num-devices=2 metadata=0.90
   UUID=35dd06d4:b4e9e248:9262c3ad:02b61654
   devices=/dev/sda1,/dev/sdb1
ARRAY <ignore> UUID=c8440826:8e55745c:d7e14cdd:ac26716d
ARRAY /dev/md/data metadata=1.2 spares=1 name="host:data" UUID=bc9eb9bb:cba04711:7e4155f7:808630e7  # trailing comment
"""


def test_scan_output() -> None:
    arrays = parse_scan(SCAN)
    assert [(a.devname, a.metadata, a.name, a.container, a.member) for a in arrays] == [
        ("/dev/md/127", "1.2", "nas:127", None, None),
        ("/dev/md/imsm0", "imsm", None, None, None),
        ("/dev/md/vol0", None, None, "/dev/md/imsm0", "0"),
    ]
    assert arrays[0].uuid == "3aaa0122:29827cfa:5331ad66:ca767371"


def test_mdadm_conf_with_continuations_and_comments() -> None:
    arrays = parse_scan(CONF)
    assert len(arrays) == 3
    md0, ign, data = arrays
    assert (md0.devname, md0.level, md0.num_devices, md0.metadata, md0.uuid) == (
        "/dev/md0",
        "raid1",
        2,
        "0.90",
        "35dd06d4:b4e9e248:9262c3ad:02b61654",
    )
    assert md0.devices == ("/dev/sda1", "/dev/sdb1")
    assert ign.devname is None and ign.uuid == "c8440826:8e55745c:d7e14cdd:ac26716d"
    assert (data.name, data.spares) == ("host:data", 1)


# ---- malformed ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hello world",
        "/dev/md0:\n",
        "/dev/md0:\n        Raid Level : raid1\n    Number   Major   Minor   RaidDevice State\n       x     8       1        0      active sync   /dev/sda1\n",
        "/dev/md0:\nnot a key value line\n",
    ],
)
def test_detail_malformed(text: str) -> None:
    with pytest.raises(ParseError):
        parse_detail(text)


def test_export_malformed() -> None:
    with pytest.raises(ParseError):
        parse_detail_export("MD_LEVEL=raid1\nthis is not an export\n")


def test_scan_malformed() -> None:
    with pytest.raises(ParseError):
        parse_scan("ARRAY /dev/md0 /dev/md1 UUID=x\n")
    with pytest.raises(ParseError):
        parse_scan('ARRAY /dev/md0 name="unterminated\n')


@given(
    st.text(
        alphabet=st.sampled_from(list(" \t=/:,.-_<>aZ09\"'\\é\xa0\x1f\x85#")),
        max_size=60,
    )
)
@settings(max_examples=400, deadline=None)
def test_an_array_lines_words_are_shlexs(line: str) -> None:
    """parse_scan's quick split of a plain line gives shlex's words; a line shlex refuses is
    refused as well."""
    import shlex

    from app.parsers.mdadm import shell_words

    try:
        expected = shlex.split(line)
    except ValueError:
        with pytest.raises(ValueError):
            shell_words(line)
        return
    assert shell_words(line) == expected
