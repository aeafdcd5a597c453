"""md/level as md's table names it (issue 38: the monitor logged "md127 (10) appeared"): md.c
level_show prints the personality's name, or the bare number while the array has none yet."""

from __future__ import annotations

from backends.linux.md import read_live
from tests.backends.test_usage import FakeSource

MD = "/sys/block/md127/md"


def _source(level: str) -> FakeSource:
    files = {f"{MD}/level": f"{level}\n", f"{MD}/array_state": "clean\n", f"{MD}/degraded": "0\n"}
    return FakeSource(files, {f"{MD}": ()}, {})


def test_the_number_md_shows_before_its_personality_is_named() -> None:
    for raw, name in (
        ("10", "raid10"),
        ("raid10", "raid10"),
        ("5", "raid5"),
        ("container", "container"),
    ):
        live, _notes = read_live(_source(raw), "md127")
        assert live is not None and live.level == name, (raw, live)
