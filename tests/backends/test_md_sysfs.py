"""Value parsers for md sysfs attributes (Documentation/admin-guide/md.rst, drivers/md/raid5.h)."""

from __future__ import annotations

import pytest

from app.model import levels
from app.parsers import md_sysfs
from app.parsers.errors import ParseError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("none\n", (None, None, "none")),
        ("delayed\n", (None, None, "delayed")),
        ("pending\n", (None, None, "pending")),
        ("1024 / 327680\n", (1024, 327680, None)),
        ("0 / 8\n", (0, 8, None)),
    ],
)
def test_sync_completed(text: str, expected: tuple[int | None, int | None, str | None]) -> None:
    assert tuple(md_sysfs.parse_sync_completed(text)) == expected


@pytest.mark.parametrize("bad", ["", "12", "a / b", "1 / 2 / 3", "-1 / 5", "idle"])
def test_sync_completed_rejects(bad: str) -> None:
    with pytest.raises(ParseError):
        md_sysfs.parse_sync_completed(bad)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("in_sync\n", ("in_sync",)),
        ("faulty,write_error\n", ("faulty", "write_error")),
        ("in_sync,writemostly\n", ("in_sync", "write_mostly")),
        ("spare\n", ("spare",)),
        ("journal,in_sync\n", ("journal", "in_sync")),
        ("\n", ()),
    ],
)
def test_dev_state(text: str, expected: tuple[str, ...]) -> None:
    assert md_sysfs.parse_dev_state(text) == expected


def test_dev_state_rejects_garbage() -> None:
    with pytest.raises(ParseError):
        md_sysfs.parse_dev_state("in sync")


def test_slot() -> None:
    assert md_sysfs.parse_slot("none\n") is None
    assert md_sysfs.parse_slot("3\n") == 3
    with pytest.raises(ParseError):
        md_sysfs.parse_slot("-1")
    with pytest.raises(ParseError):
        md_sysfs.parse_slot("x")


@pytest.mark.parametrize(
    ("text", "expected"), [("none\n", None), ("+8\n", "+8"), ("-16", "-16"), ("file\n", "file")]
)
def test_bitmap_location(text: str, expected: str | None) -> None:
    assert md_sysfs.parse_bitmap_location(text) == expected


@pytest.mark.parametrize("bad", ["", "internal", "+", "8"])
def test_bitmap_location_rejects(bad: str) -> None:
    with pytest.raises(ParseError):
        md_sysfs.parse_bitmap_location(bad)


@pytest.mark.parametrize(
    ("layout", "name", "copies"),
    [
        (0x102, "n2", 2),  # mdadm --layout=n2 (258)
        (0x103, "n3", 3),
        (0x201, "f2", 2),  # 513
        (0x10201, "o2", 2),  # 66049
        (0x10301, "o3", 3),
        (0x202, "n2f2", 4),
    ],
)
def test_raid10_layouts(layout: int, name: str, copies: int) -> None:
    assert md_sysfs.layout_name("raid10", f"{layout}\n") == name
    assert levels.raid10_copies(name) == copies  # the name the parser gives, in the one table


def test_raid10_layout_rejects_zero_copies() -> None:
    with pytest.raises(ParseError):
        md_sysfs.raid10_layout_name(0)
    with pytest.raises(ParseError):
        md_sysfs.raid10_layout_name(0x2)  # far copies 0


@pytest.mark.parametrize(
    ("level", "number", "name"),
    [
        ("raid5", 0, "left-asymmetric"),
        ("raid5", 1, "right-asymmetric"),
        ("raid5", 2, "left-symmetric"),
        ("raid5", 3, "right-symmetric"),
        ("raid5", 4, "parity-first"),
        ("raid5", 5, "parity-last"),
        ("raid6", 2, "left-symmetric"),
        ("raid6", 8, "ddf-zero-restart"),
        ("raid6", 18, "left-symmetric-6"),
        ("raid6", 20, "parity-first-6"),
        ("raid4", 5, "parity-last"),
        ("raid0", 2, "alternate"),
        ("raid1", 0, None),
    ],
)
def test_parity_layouts(level: str, number: int, name: str | None) -> None:
    assert md_sysfs.layout_name(level, f"{number}\n") == name


def test_unknown_raid5_algorithm_rejected() -> None:
    with pytest.raises(ParseError):
        md_sysfs.layout_name("raid5", "7")
    with pytest.raises(ParseError):
        md_sysfs.layout_name("raid5", "left")


def test_speed_limits_and_ints() -> None:
    assert md_sysfs.parse_speed_limit("1000 (system)\n") == 1000
    assert md_sysfs.parse_speed_limit("200000 (local)\n") == 200000
    with pytest.raises(ParseError):
        md_sysfs.parse_speed_limit("(system)")
    assert md_sysfs.parse_int("none\n") is None
    assert md_sysfs.parse_int("65536\n") == 65536


def test_metadata_and_external_members() -> None:
    assert md_sysfs.parse_metadata_version("1.2\n") == "1.2"
    assert md_sysfs.parse_metadata_version("none\n") is None
    assert md_sysfs.parse_external_member("external:imsm\n") is None
    assert md_sysfs.parse_external_member("1.2") is None
    m = md_sysfs.parse_external_member("external:/md127/0\n")
    assert m is not None and (m.container, m.member) == ("md127", "0")
    ro = md_sysfs.parse_external_member("external:-md126/1")
    assert ro is not None and (ro.container, ro.member) == ("md126", "1")
    with pytest.raises(ParseError):
        md_sysfs.parse_external_member("external:/md127")


def test_raid_disks_during_a_reshape_is_the_new_count() -> None:
    """The kernel prints ``new (old)`` while a reshape runs (seen in the VM: ``4 (3)``)."""
    from app.parsers.md_sysfs import parse_raid_disks

    assert parse_raid_disks("4\n") == 4
    assert parse_raid_disks("4 (3)\n") == 4
    with pytest.raises(ParseError):
        parse_raid_disks("(3)")


def test_layout_and_chunk_during_a_reshape_are_the_new_ones() -> None:
    """md.c layout_show/chunk_size_show print "new (old)" while a reshape changes them; the
    VM walk (tests/fixtures/md_kinds/walk.json) read layout "2 (18)" during RAID-5 -> 6 and
    "18 (2)" during 6 -> 5. The probe read them as a parse error (no layout, a note)."""
    assert md_sysfs.layout_name("raid6", "2 (18)\n") == "left-symmetric"
    assert md_sysfs.layout_name("raid6", "18 (2)\n") == "left-symmetric-6"
    assert md_sysfs.parse_chunk_size("131072 (65536)\n") == 131072
    assert md_sysfs.parse_chunk_size("524288\n") == 524288
    for bad in ("2 (x)", "2 18", "131072 (65536"):
        with pytest.raises(ParseError):
            md_sysfs.layout_name("raid5", bad)
    with pytest.raises(ParseError):
        md_sysfs.parse_chunk_size("131072 (big)")


def test_array_uuid() -> None:
    assert md_sysfs.parse_array_uuid("bb49a2ea-22e4-96cb-112d-8712d8903475\n") == (
        "bb49a2ea-22e4-96cb-112d-8712d8903475"
    )
    assert md_sysfs.parse_array_uuid("bb49a2ea:22e496cb:112d8712:d8903475") == (
        "bb49a2ea:22e496cb:112d8712:d8903475"
    )
    # md's uuid before mdadm wrote the superblock, in both spellings: no UUID yet
    assert md_sysfs.parse_array_uuid("00000000-0000-0000-0000-000000000000\n") is None
    assert md_sysfs.parse_array_uuid("00000000:00000000:00000000:00000000") is None
    assert md_sysfs.parse_array_uuid("\n") is None
    for bad in ("bb49a2ea", "zz49a2ea-22e4-96cb-112d-8712d8903475", "x" * 100):
        with pytest.raises(ParseError):
            md_sysfs.parse_array_uuid(bad)
