"""Every text parser is linear in its input (issue 37, item 4): xfs_info's ``key=value`` search
tried every position inside a run of letters, each scanning to the run's end, so a 40,000-letter
line took ~54 s (``report --host`` 52 s, the TUI 55 s to quit); mdadm's ``Key : value`` regex
(lazy, spaces allowed in the key) took 2.7 s on a line of 24,000 spaces.

Each parser gets real lines (its seed from the corpus, tests/parsers/fuzzing.py) with one line
carrying a 40,000-character run of each filler below, and must finish within the fuzzer's
per-input CPU budget (1 s; linear parsers take ~1-20 ms here, the quadratic ones seconds).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest

from app.parsers import kernel_log, mdadm, xfs_info
from app.parsers.errors import ParseError
from app.parsers.mdadm_bitmap import parse_examine_bitmap
from app.parsers.mdadm_superblock import parse_superblock
from tests.parsers.fuzzing import AMPLIFIED, _files, within_budget
from tests.parsers.test_fuzz import TEXT_PARSERS

# the shapes that made regexes backtrack: word runs, spaces, key=value, " :", digits, brackets
FILLERS = ("a", " ", "a=", "=a", " :", "0", "[", "(", "a ", "\\", "\t", " a\n", "a,")
LINES = 12


def _parses(fn: Callable[[str], Any], text: str) -> bool:
    try:
        fn(text)
    except ParseError:
        return False
    return True


def _seed(kind: str, fn: Callable[[str], Any]) -> str:
    """The first seed of ``kind`` the parser takes as it is (so the run is read, not refused at
    the first line)."""
    if kind == "mdadm -X":
        return BITMAP
    return next(t for t in _files(kind) if _parses(fn, t))


# mdadm bitmap.c ExamineBitmap()'s layout (no corpus file holds one)
BITMAP = (
    "        Filename : /dev/sdb1\n           Magic : 6d746962\n         Version : 4\n"
    "           Chunksize : 64 MB\n          Daemon : 5s flush period\n"
    "              Bitmap : 16 bits (chunks), 3 dirty (18.8%)\n"
)

PARSERS: dict[str, tuple[str, Callable[[str], Any]]] = {
    **TEXT_PARSERS,
    "mdadm -X": ("mdadm -X", parse_examine_bitmap),
    "mdadm --examine (superblock)": ("mdadm-examine", lambda t: parse_superblock("sda", None, t)),
}


def _with_run(lines: list[str], i: int, filler: str) -> str:
    line = lines[i]
    at = len(line) // 2
    run = filler * (AMPLIFIED // len(filler))
    return "\n".join([*lines[:i], line[:at] + run + line[at:], *lines[i + 1 :]])


@pytest.mark.parametrize("name", list(PARSERS))
def test_a_long_run_in_any_line_costs_linear_time(name: str) -> None:
    kind, fn = PARSERS[name]
    lines = _seed(kind, fn).splitlines()[:LINES]
    for i in range(len(lines)):
        for filler in FILLERS:
            text = _with_run(lines, i, filler)
            with within_budget(text), contextlib.suppress(ParseError):
                fn(text)


@pytest.mark.parametrize(
    "shape",
    ["a" * 40_000, "x=" * 20_000, "x=1," * 10_000, "-a" * 20_000, "a-" * 20_000],
    ids=["letters", "x=", "x=1,", "-a", "a-"],
)
def test_a_40000_character_xfs_info_line_parses_within_a_second(shape: str) -> None:
    """issue 37's bar: a 40,000-character xfs_info line in ≤ 1 s (it was ~54 s)."""
    seed = _seed("xfs_info", xfs_info.parse_xfs_info)
    lines = seed.splitlines()
    data = next(i for i, ln in enumerate(lines) if ln.startswith("data"))
    lines[data] += " " + shape
    text = "\n".join(lines)
    with within_budget(text, 1.0):
        geometry = xfs_info.parse_xfs_info(text)
    assert geometry.bsize == xfs_info.parse_xfs_info(seed).bsize  # still read


def test_xfs_info_pairs_are_read_as_before() -> None:
    """The look-behind changes no real line: keys after spaces, commas and the section's ``=``."""
    g = xfs_info.parse_xfs_info(
        "meta-data=/dev/md0 isize=512    agcount=8, agsize=65528 blks\n"
        "         =         sectsz=512   attr=2, projid32bit=1\n"
        "         =         crc=1        finobt=1, sparse=1, rmapbt=0\n"
        "         =         reflink=1    bigtime=1 inobtcount=1 nrext64=0\n"
        "data     =         bsize=4096   blocks=524224, imaxpct=25\n"
        "         =         sunit=8      swidth=16 blks\n"
        "log      =internal log bsize=4096 blocks=16384, version=2\n"
        "         =         sectsz=512   sunit=8 blks, lazy-count=1\n"
    )
    assert (g.device, g.agcount, g.agsize_blocks, g.sectsz) == ("/dev/md0", 8, 65528, 512)
    assert (g.bsize, g.sunit_blocks, g.swidth_blocks, g.data_blocks) == (4096, 8, 16, 524224)
    assert (g.log_device, g.log_sunit_blocks, g.crc, g.reflink) == ("internal log", 8, True, True)


def test_mdadm_key_lines_and_local_host_are_read_as_before() -> None:
    text = (
        "/dev/md0:\n"
        "           Version : 1.2\n"
        "     Creation Time : Fri Aug 19 16:20:42 2022\n"
        "        Raid Level : raid1\n"
        "              Name : box:0  (local to host box)\n"
        "     Intent Bitmap : Internal\n"
        "             State : clean\n"
        "    Consistency Policy : bitmap\n"
        "              UUID : 5a2b:77c1:aa31:0ef2\n"
        "            Events : 19\n"
    )
    d = mdadm.parse_detail(text)
    assert d.fields["Creation Time"] == "Fri Aug 19 16:20:42 2022"  # ":" in the value
    assert d.fields["Consistency Policy"] == "bitmap"
    assert (d.raid_level, d.events) == ("raid1", 19)
    assert mdadm._split_local("box:0  (local to host box)") == ("box:0", "box")
    assert mdadm._split_local("x (local to host y) z") == ("x (local to host y) z", None)
    assert mdadm._split_local("a (b) (local to host c)  ") == ("a (b)", "c")


def test_continuation_lines_are_joined_once() -> None:
    """20,000 continuation lines of one key (or of one ARRAY line): each appended to a growing
    string was quadratic; they are joined once."""
    text = "/dev/md0:\n  Version : 1.2\n  Raid Level : raid1\n  Name : x\n" + " y\n" * 20_000
    with within_budget(text, 1.0):
        d = mdadm.parse_detail(text)
    assert d.fields["Name"] == "x" + " y" * 20_000
    conf = "ARRAY /dev/md0 metadata=1.2\n" + "  name=x\n" + "  # c\n" * 20_000 + "  uuid=a:b:c:d\n"
    with within_budget(conf, 1.0):
        (a,) = mdadm.parse_scan(conf)
    assert (a.devname, a.name, a.uuid) == ("/dev/md0", "x", "a:b:c:d")


def test_kernel_log_lines_are_linear() -> None:
    text = "[    1.000000] " + "a " * 20_000 + "\n" + "[ 2.5] md0: x\n" * 2
    with within_budget(text, 1.0):
        lines = kernel_log.parse_dmesg(text)
    assert lines[-1].text.endswith("md0: x")
