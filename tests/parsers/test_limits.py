"""Size limits on what the parsers accept (issue 23, items 6 and 7): one number must not decide
the memory raidman takes, and one field that cannot be read costs that field or that file (a
note naming it), never the whole probe. md's own limit is ``levels.MAX_RAID_DISKS`` (md.c
``super_1_validate``: ``max_disks = (4096-256)/2``)."""

from __future__ import annotations

import json
import shutil
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.backend import BackendError
from app.format import mdstat_map
from app.model import levels
from app.model.devices import MdArray
from app.parsers import dmsetup, md_sysfs, mdstat, swaps
from app.parsers.errors import ParseError
from app.report import machine_to_text
from backends.replay import ReplayBackend
from tests.corpus import FIXTURES

BASE = FIXTURES / "captures" / "raid5-raid10-syncing"
HUGE = "9" * 5000
MDSTAT = (BASE / "files" / "proc" / "mdstat").read_text()


@contextmanager
def at_most_mb(mb: int) -> Iterator[None]:
    tracemalloc.start()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < mb << 20, f"peak {peak / 2**20:.0f} MB"


def test_md_limit_is_the_kernels() -> None:
    assert levels.MAX_RAID_DISKS == (4096 - 256) // 2


@pytest.mark.parametrize("count", ["[30000000/3]", "[4/30000000]", "[1921/3]"])
def test_mdstat_counts_beyond_md_are_refused_without_building_them(count: str) -> None:
    text = MDSTAT.replace("[4/3]", count)
    with at_most_mb(8), pytest.raises(ParseError, match="beyond md's"):
        mdstat.mdstat_to_arrays(mdstat.parse_mdstat(text))


def test_mdstat_member_number_beyond_md_is_refused() -> None:
    text = MDSTAT.replace("nvme3n1p1[4]", "nvme3n1p1[40000000]")
    with at_most_mb(8), pytest.raises(ParseError, match="beyond md's"):
        mdstat.mdstat_to_arrays(mdstat.parse_mdstat(text))


def test_mdstat_at_md_limit_still_parses() -> None:
    text = MDSTAT.replace("[4/3] [UUU_]", "[1920/3] [UUU" + "_" * 1917 + "]")
    arrays = mdstat.mdstat_to_arrays(mdstat.parse_mdstat(text))
    assert any(a.raid_disks == 1920 for a in arrays)


@pytest.mark.parametrize(
    ("fn", "text"),
    [
        (md_sysfs.parse_raid_disks, "200000000"),
        (md_sysfs.parse_raid_disks, "1921 (4)"),
        (md_sysfs.parse_slot, "90000000"),
        (md_sysfs.parse_raid_disks, HUGE),
    ],
)
def test_md_sysfs_counts_beyond_md_are_parse_errors(fn: Callable[[str], object], text: str) -> None:
    with pytest.raises(ParseError):
        fn(text)


def test_mdstat_map_of_an_impossible_count_is_short() -> None:
    with at_most_mb(4):
        s = mdstat_map(MdArray(name="md0", level="raid5", raid_disks=200_000_000))
    assert len(s) < 40


def test_swaps_unreadable_size_costs_the_size_only() -> None:
    text = f"Filename Type Size Used Priority\n/dev/sda3 partition {HUGE} ²  -2\n"
    (entry,) = swaps.parse_swaps(text)
    assert (entry.filename, entry.type, entry.size_kib, entry.used_kib) == (
        "/dev/sda3",
        "partition",
        None,
        None,
    )


@pytest.mark.parametrize("field", [7, 8])
def test_dmsetup_numbers_are_parse_errors(field: int) -> None:
    f = [
        "0",
        "1000",
        "crypt",
        "aes-xts-plain64",
        ":64:logon:k",
        "0",
        "8:2",
        "4096",
        "1",
        "allow_discards",
    ]
    f[field] = HUGE if field == 7 else "²"
    with pytest.raises(ParseError):
        dmsetup.parse_crypt_table(" ".join(f))
    f[field] = HUGE
    with pytest.raises(ParseError):
        dmsetup.parse_crypt_table(" ".join(f))


# ---- through the probe: a replay of a real capture with one file made hostile ------------


@pytest.fixture
def cap(tmp_path: Path) -> Path:
    dest = tmp_path / "cap"
    shutil.copytree(BASE, dest)
    return dest


def _put(cap: Path, path: str, text: str) -> None:
    f = cap / "files" / path.lstrip("/")
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    reads = json.loads((cap / "reads.json").read_text())
    reads[path] = "ok"
    (cap / "reads.json").write_text(json.dumps(reads))


def test_a_huge_raid_disks_in_sysfs_is_a_note_not_gigabytes(cap: Path) -> None:
    _put(cap, "/sys/block/md127/md/raid_disks", "200000000\n")
    with at_most_mb(64):
        m = ReplayBackend(cap).probe()
        text = machine_to_text(m)
    assert len(m.arrays) == 2 and m.disks
    assert any("/sys/block/md127/md/raid_disks" in n.message for n in m.notes), m.notes
    assert "md127" in text


def test_a_5000_digit_swap_size_keeps_the_machine(cap: Path) -> None:
    _put(cap, "/proc/swaps", f"Filename Type Size Used Priority\n/dev/sda3 partition {HUGE} 0 -2\n")
    m = ReplayBackend(cap).probe()
    assert m.disks and len(m.arrays) == 2


@pytest.mark.parametrize("index", ["disk_io.json", "reads.json", "commands.json"])
def test_a_deeply_nested_capture_index_is_refused_with_its_name(cap: Path, index: str) -> None:
    (cap / index).write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(BackendError, match=index):
        ReplayBackend(cap).probe()


def test_a_huge_mountinfo_line_is_a_short_note_not_a_copy_of_it(tmp_path: Path) -> None:
    """A 60 MB mountinfo line became a 60 MB note (465 MB RSS, issue 37): a line longer than
    any the kernel writes is refused by its length (the mounts unread: pre-flight refuses, as
    for any table it could not read) and no message quotes more than a few hundred
    characters of what it could not read. Measured on 12 MiB: peak 60 -> 24 MB, note
    12,583,027 -> 128 characters."""
    cap = tmp_path / "cap"
    shutil.copytree(BASE, cap)
    mi = cap / "files" / "proc" / "self" / "mountinfo"
    mi.write_text(mi.read_text() + "1 2 8:1 / /x" + "A" * (12 << 20) + "\n")
    backend = ReplayBackend(cap)
    with at_most_mb(40):
        m = backend.probe()
    assert m.usage is not None
    (why,) = [w for k, w in m.usage.unread if k == "mounts"]
    assert "a line of 12582924 characters is not the kernel's (line 36)" in why
    assert max(len(n.message) for n in m.notes) < 400 and len(why) < 400


def test_parse_errors_and_notes_quote_at_most_a_bounded_part() -> None:
    with pytest.raises(ParseError) as e:
        swaps.parse_swaps("Filename Type Size Used Priority\n" + "x" * 100_000 + "\n")
    assert len(str(e.value)) < 400
    from app.model.devices import MAX_NOTE, ProbeNote

    note = ProbeNote("lsblk", "y" * 100_000)
    assert len(note.message) <= MAX_NOTE + 30 and note.message.endswith("(100000 characters)")
