"""Parsers on real outputs generated on this host (tests/rules/samples/, see README there)."""

from __future__ import annotations

import pytest

from app.parsers.errors import ParseError
from app.parsers.lvmconfig import parse_lvmconfig
from app.parsers.tune2fs import parse_tune2fs
from app.parsers.xfs_info import parse_xfs_info
from tests.rules.machines import sample


@pytest.mark.parametrize(
    ("name", "block", "stride", "width"),
    [
        ("tune2fs-stride8-sw16.txt", 4096, 8, 16),
        ("dumpe2fs-h-stride8-sw16.txt", 4096, 8, 16),
        ("tune2fs-stride16-sw64.txt", 4096, 16, 64),
        ("tune2fs-1k-stride32-sw64.txt", 1024, 32, 64),
        ("tune2fs-no-raid.txt", 4096, None, None),
    ],
)
def test_tune2fs_geometry(name: str, block: int, stride: int | None, width: int | None) -> None:
    sb = parse_tune2fs(sample(name))
    assert (sb.block_size, sb.stride, sb.stripe_width) == (block, stride, width)
    assert sb.has_feature("extent") and sb.has_feature("has_journal")
    assert sb.uuid is not None and len(sb.uuid) == 36
    assert sb.label is None  # "<none>"
    assert sb.state == "clean"


def test_dumpe2fs_h_matches_tune2fs_fields() -> None:
    """dumpe2fs -h adds a journal section; the superblock part reads the same."""
    d = parse_tune2fs(sample("dumpe2fs-h-stride8-sw16.txt"))
    assert "Journal features" in d.fields and "Journal sequence" in d.fields
    assert d.block_count == 262144  # a 1 GiB image with 4 KiB blocks


@pytest.mark.parametrize(
    "bad", ["", "tune2fs 1.47.0 (5-Feb-2023)\ntune2fs: Bad magic number\n", "Block size: lots\n"]
)
def test_tune2fs_rejects_garbage(bad: str) -> None:
    with pytest.raises(ParseError):
        parse_tune2fs(bad)


@pytest.mark.parametrize(
    ("name", "su", "sw"),
    [
        ("xfs_info-su32k-sw2.txt", 32768, 65536),
        ("xfs_db-info-su32k-sw2.txt", 32768, 65536),
        ("xfs_info-su64k-sw3.txt", 65536, 196608),
        ("xfs_info-no-stripe.txt", 0, 0),
    ],
)
def test_xfs_info_geometry(name: str, su: int, sw: int) -> None:
    g = parse_xfs_info(sample(name))
    assert g.bsize == 4096
    assert (g.sunit_bytes, g.swidth_bytes) == (su, sw)
    assert g.sunit_blocks * 4096 == su
    assert g.log_device == "internal log"
    assert g.device is not None and g.device.endswith(".img")
    assert g.crc is True and g.sectsz == 512


def test_xfs_info_log_sunit_is_not_the_data_sunit() -> None:
    g = parse_xfs_info(sample("xfs_info-su64k-sw3.txt"))
    assert g.log_sunit_blocks == 16 and g.swidth_blocks == 48


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "xfs_info: ra.img is not a mounted XFS filesystem\n",
        "data     =   bsize=4096 blocks=1\n",
    ],
)
def test_xfs_info_rejects_garbage(bad: str) -> None:
    with pytest.raises(ParseError):
        parse_xfs_info(bad)


def test_lvmconfig_bare_lines() -> None:
    c = parse_lvmconfig(sample("lvmconfig-full-devices.txt"))
    assert c.get_bool("devices/issue_discards") is False
    assert c.get_bool("devices/md_chunk_alignment") is True
    assert c.get_bool("devices/data_alignment_detection") is True
    assert c.get("devices/data_alignment") == 0


def test_lvmconfig_sections() -> None:
    c = parse_lvmconfig(sample("lvmconfig-full-sections.txt"))
    assert c.get("devices/dir") == "/dev"
    assert c.get_bool("devices/md_chunk_alignment") is True
    assert c.get("devices/scan") == '["/dev"]'
    assert "allocation/raid_stripe_all_devices" in c.values


@pytest.mark.parametrize("bad", ["devices {\n issue_discards=0\n", "}\n", "what is this\n"])
def test_lvmconfig_rejects_garbage(bad: str) -> None:
    with pytest.raises(ParseError):
        parse_lvmconfig(bad)
