"""/proc/swaps parser (mm/swapfile.c swap_show): the dev host's real empty table
(tests/fixtures/preflight/devhost-root-on-vda/files/proc/swaps) and the kernel's row format."""

from __future__ import annotations

import pytest

from app.parsers.errors import ParseError
from app.parsers.swaps import SwapEntry, parse_swaps
from tests.corpus import FIXTURES


def test_real_empty_table() -> None:
    text = (FIXTURES / "preflight/devhost-root-on-vda/files/proc/swaps").read_text()
    assert text.startswith("Filename")
    assert parse_swaps(text) == ()


def test_partition_and_escaped_file() -> None:
    text = (
        "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
        "/dev/dm-1                               partition\t8388604\t\t1024\t\t-2\n"
        "/var/swap\\040file                       file\t\t1048572\t\t0\t\t-3\n"
    )
    assert parse_swaps(text) == (
        SwapEntry("/dev/dm-1", "partition", 8388604, 1024),
        SwapEntry("/var/swap file", "file", 1048572, 0),
    )


@pytest.mark.parametrize("bad", ["", "nonsense\n", "Filename Type\n/dev/sda3\n"])
def test_bad_input_is_a_parse_error(bad: str) -> None:
    with pytest.raises(ParseError):
        parse_swaps(bad)


def test_odd_numbers_are_none_not_an_exception() -> None:
    (e,) = parse_swaps("Filename Type Size Used Priority\n/dev/sda3 partition ² x -1\n")
    assert (e.size_kib, e.used_kib) == (None, None)
