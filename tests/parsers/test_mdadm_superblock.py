"""Issue 26 item 3: one member's superblock from ``mdadm --examine --export`` and the plain
``mdadm --examine`` (../shared/corpus/jc-mdadm, EXPECTED.md's --examine table: role, array state,
events, recovery offset), and "events N (array M: K behind)"."""

from __future__ import annotations

import pytest

from app.model.superblock import Superblock, array_events
from app.parsers.errors import ParseError
from app.parsers.mdadm_superblock import parse_superblock
from app.plans.superblocks import events_text
from tests.corpus import corpus

# mdadm super1.c export_examine_super1's keys, in its order (values of a RAID-10 n2 x4 member)
EXPORT = """\
MD_LEVEL=raid10
MD_DEVICES=4
MD_NAME=virtme-ng:0
MD_ARRAY_SIZE=268.44MB
MD_UUID=88dbf2d7:d3b9f81b:34a72f58:bf443edd
MD_UPDATE_TIME=1764076800
MD_DEV_UUID=1ec6a01d:e96d7f47:59970cf2:f0c056d2
MD_EVENTS=1234
"""


def _plain(name: str) -> str:
    return corpus("jc-mdadm", f"mdadm-examine-{name}.out").read_text()


@pytest.mark.parametrize(
    ("name", "role", "state", "events"),
    [
        ("raid1-replacing", "Replacement device 1", "AR", 75),
        ("raid1-spare", "spare", "AA", 52),
        ("raid1-faulty1", "Active device 0", "A.", 25),
        ("raid5-ok", "Active device 0", "AAA", 18),
        ("raid1-0-90-ok", None, None, 18),
    ],
)
def test_plain_examine_gives_role_state_and_events(
    name: str, role: str | None, state: str | None, events: int
) -> None:
    sb = parse_superblock("vda2", None, _plain(name))
    assert (sb.device_role, sb.array_state, sb.events) == (role, state, events)


def test_recovery_offset_bad_block_log_and_name() -> None:
    sb = parse_superblock("vda2", None, _plain("raid1-replacing"))
    assert sb.recovery_offset_sectors == 115200
    assert sb.bad_blocks == "512 entries available at offset 16 sectors"
    assert sb.name == "sysrescue:126"
    assert sb.array_uuid == "e054553a:fbccdcfe:0ae80bc8:9379377a"
    assert sb.bitmap is None  # feature map 0x12: recovery offset + replacement, no bitmap bit


def test_internal_bitmap_line() -> None:
    sb = parse_superblock("vda1", None, _plain("raid1-ok"))
    assert sb.bitmap is None
    real = parse_superblock("sdb1", None, corpus("jc-mdadm", "mdadm-examine.out").read_text())
    assert real.bitmap == "internal at 8 sectors from superblock"
    assert real.events == 2193679


def test_export_and_plain_together() -> None:
    sb = parse_superblock("vda2", EXPORT, _plain("raid1-replacing"))
    # the export's numbers win; the role and recovery offset only the plain text has
    assert (sb.events, sb.update_time, sb.level) == (1234, 1764076800, "raid10")
    assert sb.name == "virtme-ng:0" and sb.raid_devices == 4
    assert sb.device_role == "Replacement device 1" and sb.recovery_offset_sectors == 115200


def test_export_alone() -> None:
    sb = parse_superblock("nvme0n1", EXPORT)
    assert sb.array_uuid == "88dbf2d7:d3b9f81b:34a72f58:bf443edd" and sb.events == 1234
    assert sb.device_role is None


@pytest.mark.parametrize(
    ("export", "plain"),
    [
        (None, None),
        ("MD_LEVEL=raid1\n", None),  # neither UUID nor events: not a superblock's export
        ("MD_EVENTS=12x\nMD_UUID=a\n", None),
        ("not key value\n", None),
        (None, "/dev/sda:\n   nothing here\n"),
        ("MD_UUID=" + "a" * 70000 + "\n", None),
    ],
)
def test_bad_input_is_a_parse_error(export: str | None, plain: str | None) -> None:
    with pytest.raises(ParseError):
        parse_superblock("sda", export, plain)


def test_events_behind_the_array() -> None:
    cur = Superblock("a", events=1240)
    old = Superblock("b", events=1234)
    n = array_events([cur, old])
    assert n == 1240
    assert events_text(old, n) == "events 1234 (array 1240: 6 behind)"
    assert events_text(cur, n) == "events 1240 (current)"
    assert events_text(Superblock("c"), n) == "events unknown"


# mdadm --examine --export of a RAID-10 member failed and removed, then 16 MiB written to the
# array (the VM, tests/vm/test_lifecycle.py: mdadm 4.2, kernel 6.1): the array's members said
# events 6, this one 1
VM_EXPORT = (
    "MD_LEVEL=raid10\nMD_DEVICES=4\nMD_NAME=virtme-ng:0\nMD_ARRAY_SIZE=268.44MB\n"
    "MD_UUID=86126bb6:e441e4a4:e5517c66:aad9588c\nMD_UPDATE_TIME=1795614906\n"
    "MD_DEV_UUID=878e8353:d5c627dd:48fbd703:7153e571\nMD_EVENTS=1\n"
)


def test_the_export_mdadm_printed_in_the_vm() -> None:
    sb = parse_superblock("nvme2n1", VM_EXPORT)
    assert (sb.level, sb.raid_devices, sb.name) == ("raid10", 4, "virtme-ng:0")
    assert sb.array_uuid == "86126bb6:e441e4a4:e5517c66:aad9588c"
    assert (sb.events, sb.update_time) == (1, 1795614906)
    assert sb.behind(6) == 5
