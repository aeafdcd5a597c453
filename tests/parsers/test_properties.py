"""Property tests kept from the adversarial pass of issue 23 (fixed seeds: ``derandomize``;
``RAIDMAN_FUZZ_EXAMPLES`` raises the count for a longer local run):

* no parser's answer is sized by a number in its input: mutated /proc/mdstat (counts such as
  ``[30000000/3]`` among the mutations) parsed, mapped and formatted within a memory bound;
* every count the md parsers accept is within md's own limit;
* a replayed capture with one index or one recorded file mutated probes to a Machine, or is
  refused with one BackendError naming the file: never another exception;
* an ssh answer, mutated, is a Batch or a FrameError.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.backend import BackendError
from app.format import array_summary
from app.model import levels
from app.parsers import md_sysfs, mdstat
from app.parsers.errors import ParseError
from app.report import machine_to_text
from backends.linux.ssh_batch import FrameError, parse_batch
from backends.replay import ReplayBackend
from tests.corpus import FIXTURES
from tests.parsers.fuzzing import _files, mutated, mutated_text, sysfs_values
from tests.parsers.test_fuzz import TEXT_PARSERS, _only_parse_error

EXAMPLES = int(os.environ.get("RAIDMAN_FUZZ_EXAMPLES", "50"))
PROPS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
MEMORY_BOUND = 32 << 20  # bytes; the inputs are a few KB


@PROPS
@given(mutated("mdstat"))
def test_mdstat_memory_does_not_follow_its_numbers(text: str) -> None:
    tracemalloc.start()
    try:
        try:
            arrays = mdstat.mdstat_to_arrays(mdstat.parse_mdstat(text))
        except ParseError:
            arrays = ()
        for a in arrays:
            assert a.raid_disks is None or a.raid_disks <= levels.MAX_RAID_DISKS
            array_summary(a)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_BOUND, f"{peak / 2**20:.0f} MB"


@PROPS
@given(sysfs_values())
def test_md_sysfs_counts_stay_within_md(text: str) -> None:
    for fn in (md_sysfs.parse_raid_disks, md_sysfs.parse_slot):
        try:
            v = fn(text)
        except ParseError:
            continue
        assert v is None or 0 <= v <= levels.MAX_RAID_DISKS


HOSTILE_NUMBERS = ("²", "٣", "9" * 5000, "30000000", "200000000", "1921", "-1", "1.5.8", "")
_DIGITS = re.compile(r"[0-9]+")


@pytest.mark.parametrize("name", list(TEXT_PARSERS))
def test_any_one_number_made_hostile(name: str) -> None:
    """Each text parser's real inputs with one of their numbers replaced by one that broke a
    parser before (not ASCII, 5,000 digits, a count far beyond md's, negative, two dots): the
    parser returns within the memory bound or raises ParseError."""
    kind, fn = TEXT_PARSERS[name]

    @PROPS
    @given(st.sampled_from(_files(kind)), st.integers(0, 1 << 16), st.sampled_from(HOSTILE_NUMBERS))
    def run(seed: str, which: int, number: str) -> None:
        runs = list(_DIGITS.finditer(seed))
        if not runs:
            return
        m = runs[which % len(runs)]
        text = seed[: m.start()] + number + seed[m.end() :]
        tracemalloc.start()
        try:
            _only_parse_error(fn, text)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < MEMORY_BOUND, f"{peak / 2**20:.0f} MB"

    run()


# ---- the replay loader -------------------------------------------------------------------

BASE = FIXTURES / "captures" / "raid5-raid10-syncing"
INDEXES = ("meta.json", "reads.json", "listdir.json", "readlink.json", "commands.json")
RECORDED = (
    "files/proc/mdstat",
    "files/sys/block/md127/md/raid_disks",
    "files/sys/block/md127/md/sync_completed",
    "files/sys/block/md126/md/level",
    "files/proc/self/mountinfo",
)


@pytest.fixture(scope="module")
def capture_copy() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="raidman-replay-fuzz-") as d:
        dest = Path(d) / "cap"
        shutil.copytree(BASE, dest)
        yield dest


def _index_mutation(name: str) -> st.SearchStrategy[tuple[str, str]]:
    return mutated_text((BASE / name).read_text()).map(lambda t: (name, t))


def _file_mutation(rel: str) -> st.SearchStrategy[tuple[str, str]]:
    return mutated_text((BASE / rel).read_text()).map(lambda t: (rel, t))


def _structural(name: str) -> st.SearchStrategy[tuple[str, str]]:
    """The index replaced by a value of another shape (or nested very deep)."""
    shapes = st.sampled_from(
        (
            "[]",
            "{}",
            "null",
            "1e400",
            '"x"',
            "[" * 5000 + "]" * 5000,
            '{"a": ' * 3000 + "1" + "}" * 3000,
        )
    )
    return shapes.map(lambda t: (name, t))


REPLAY_MUTATIONS = st.one_of(
    *(_index_mutation(n) for n in INDEXES),
    *(_structural(n) for n in (*INDEXES, "disk_io.json")),
    *(_file_mutation(r) for r in RECORDED),
)


def test_a_mutated_capture_probes_or_is_refused_in_one_line(capture_copy: Path) -> None:
    @PROPS
    @given(REPLAY_MUTATIONS)
    def run(change: tuple[str, str]) -> None:
        rel, text = change
        target = capture_copy / rel
        original = (BASE / rel).read_bytes() if (BASE / rel).exists() else None
        target.write_text(text, encoding="utf-8", errors="surrogateescape")
        try:
            try:
                m = ReplayBackend(capture_copy).probe()
            except BackendError as e:
                assert "\n" not in str(e).strip()
                return
            machine_to_text(m)
            json.dumps([n.message for n in m.notes])
        finally:
            if original is None:
                target.unlink()
            else:
                target.write_bytes(original)

    run()


# ---- ssh answers ---------------------------------------------------------------------------

ANSWER = (
    b"U\0node\0006.1.0\0000\0001700000000\0"
    b"F\0/proc/mdstat\0ok\0"
    b"L\0/sys/block\0ok\0sda\0md127\0\0"
    b"C\0003\0lsblk\0--json\0--bytes\0000\0"
    b"Z\0" + b"5 /t/1\n3 /t/2\n3 /t/3\n11 total\n" + b"\0hello{}\nerr"
    b"E\0"
)


@PROPS
@given(
    st.builds(
        lambda ops: ops,
        st.lists(
            st.tuples(st.integers(0, 4), st.integers(0, 1 << 16), st.binary(max_size=12)),
            min_size=1,
            max_size=5,
        ),
    )
)
def test_a_mutated_ssh_answer_is_a_batch_or_a_frame_error(
    ops: list[tuple[int, int, bytes]],
) -> None:
    data = ANSWER
    for kind, at, blob in ops:
        i = at % (len(data) + 1)
        if kind == 0:
            data = data[:i] + blob + data[i + len(blob) :]
        elif kind == 1:
            data = data[:i] + blob + data[i:]
        elif kind == 2:
            data = data[:i] + data[i + 8 :]
        elif kind == 3:
            data = data[:i]
        else:  # a number field made huge or not ASCII
            data = data[:i] + "²".encode() + b"9" * 30 + data[i:]
    with contextlib.suppress(FrameError):  # anything else fails the test
        parse_batch(data)


def test_the_unmutated_answer_is_whole() -> None:
    b = parse_batch(ANSWER)
    assert b.complete and b.files["/proc/mdstat"] == ("ok", "hello")
    assert b.euid == 0 and b.uname == ("node", "6.1.0")
    assert b.commands[("lsblk", "--json", "--bytes")].stdout == "{}\n"
