"""Mutations of real inputs for the parser fuzz tests (hypothesis strategies).

Seeds are real tool outputs: the shared corpus (/work/shared/corpus: pymdstat, prometheus-procfs,
libstorage-ng, jc-mdadm, trident-lsblk, smartctl_exporter, scrutiny, netdata), tests/parsers/samples,
tests/rules/samples and the VM captures in tests/fixtures. The mutations are the shapes that broke
parsers before: digits that are not ASCII ("²"), numbers with two dots, NaN/Infinity and
400-digit numbers in JSON, negative values, deep nesting, cut and doubled lines, bytes that are
not UTF-8.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.corpus import FIXTURES, corpus_dir

TESTS = Path(__file__).resolve().parents[1]

# tokens that have broken parsers: not-ASCII digits, malformed numbers, JSON specials, nesting
TOKENS = (
    "²", "٣", "¹²", "1.5.8", "-65536", "-1", "0", "00", "4294967296", "9" * 400, "1e400",
    "NaN", "Infinity", "-Infinity", "nan", "inf", "null", "true", "[", "]", "{", "}", "(", ")",
    ":", ",", "=", "%", "K/sec", "min", " ", "\t", "\n", "\x00", "\ufffd", "U", "_", "(F)",
    "[" * 3000, "{\"a\":" * 3000, "k", "KB", "blocks", "chunk", "super", "0x", "-", "..",
    # counts that once sized a list (issue 23: raid_disks 2x10^8 took 2 GB) and md's limit
    "30000000", "200000000", "1920", "1921", "9" * 5000,
)  # fmt: skip

# seeds for the small formats that have no corpus (the kernel's and dmsetup's own layout)
SWAPS_SEEDS = (
    "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
    "/dev/sda3                               partition\t8388604\t\t0\t\t-2\n"
    "/swap\\040file                          file\t\t1048572\t\t512\t\t-3\n",
)
DMSETUP_SEEDS = (
    "0 1953257472 crypt aes-xts-plain64 :64:logon:cryptsetup:abc 0 8:2 32768\n",
    "0 409600 crypt aes-xts-plain64 0000000000000000 0 253:1 4096 2 allow_discards sector_size:4096\n",
)


@cache
def _files(kind: str) -> tuple[str, ...]:
    """Seed texts for one parser family."""
    c = corpus_dir()
    paths: list[Path] = []
    if kind == "mdstat":
        paths += sorted((c / "pymdstat").glob("mdstat.*"))
        paths += [c / "prometheus-procfs" / "mdstat"]
        paths += sorted((c / "libstorage-ng").rglob("*mdstat*"))
        paths += sorted(FIXTURES.rglob("proc/mdstat"))
    elif kind == "mdadm-detail":
        paths += sorted((c / "jc-mdadm").glob("mdadm-query-*.out"))
    elif kind == "mdadm-examine":
        paths += sorted((c / "jc-mdadm").glob("mdadm-examine*.out"))
    elif kind == "mdadm-export":
        paths += sorted((c / "libstorage-ng").rglob("mdadm-detail-export*"))
    elif kind == "lsblk":
        paths += sorted((c / "trident-lsblk").glob("*.json"))
        paths += sorted((TESTS / "parsers" / "samples").glob("*lsblk*.json"))
    elif kind == "lvm":
        paths += sorted((TESTS / "parsers" / "samples").glob("lvm*.json"))
        paths += sorted((TESTS / "parsers" / "samples" / "lvm_raid").glob("*.json"))
        paths += sorted((c / "libstorage-ng").rglob("*s.json"))
    elif kind == "smartctl":
        paths += sorted((c / "smartctl_exporter").rglob("*.json"))[:40]
        paths += sorted((c / "scrutiny").rglob("*.json"))
        paths += sorted((c / "netdata").rglob("*.json"))
    elif kind == "mountinfo":
        paths += sorted((TESTS / "parsers" / "samples").glob("*mountinfo*"))
        paths += sorted(FIXTURES.rglob("self/mountinfo"))[:3]
    elif kind in ("tune2fs", "xfs_info", "lvmconfig"):
        paths += sorted((TESTS / "rules" / "samples").glob("*"))
    elif kind == "swaps":
        return SWAPS_SEEDS
    elif kind == "dmsetup":
        return DMSETUP_SEEDS
    elif kind == "dmsetup-raid":  # captured in the VM (samples/lvm_raid)
        paths += sorted((TESTS / "parsers" / "samples" / "lvm_raid").glob("*.dmstatus*"))
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in paths if p.is_file()]
    if kind in ("tune2fs", "xfs_info", "lvmconfig"):
        texts = [t for t in texts if t.strip()]
    if kind == "lvm":
        texts += [_recorded("lvm")]
    if kind == "lsblk":
        texts += [_recorded("lsblk")]
    assert texts, kind
    return tuple(t for t in texts if t)


def _recorded(program: str) -> str:
    for cmds in sorted(FIXTURES.rglob("commands.json")):
        for c in json.loads(cmds.read_text()):
            if c["argv"][0] == program and c.get("stdout"):
                return str(c["stdout"])
    return ""


def sysfs_values() -> st.SearchStrategy[str]:
    """md sysfs attribute texts from the VM captures, and tokens, mutated."""
    return st.one_of(
        st.sampled_from(_sysfs_seeds()).flatmap(mutated_text),
        st.sampled_from(TOKENS),
        st.text(max_size=30),
    )


@cache
def _sysfs_seeds() -> tuple[str, ...]:
    out = set()
    for f in sorted(FIXTURES.rglob("md/*")):
        if f.is_file() and f.stat().st_size < 200:
            out.add(f.read_text(errors="replace"))
    return tuple(sorted(out))


# a run this long made the quadratic parsers of issue 37 take seconds (xfs_info's key=value
# search ~54 s, mdadm's "Key : value" 2.7 s at 24,000); a linear parser takes milliseconds
AMPLIFIED = 40_000


def _mutate(text: str, ops: list[tuple[int, int, int, str]]) -> str:
    for kind, a, b, tok in ops:
        n = len(text)
        if n == 0:
            text = tok
            continue
        i, j = sorted((a % (n + 1), b % (n + 1)))
        j = min(j, i + 64)
        if kind == 0:  # replace a short span by a token
            text = text[:i] + tok + text[j:]
        elif kind == 1:  # insert a token
            text = text[:i] + tok + text[i:]
        elif kind == 2:  # delete a span
            text = text[:i] + text[j:]
        elif kind == 3:  # duplicate a span
            text = text[:j] + text[i:j] + text[j:]
        elif kind == 4:  # cut the text
            text = text[:i]
        elif kind == 6:  # one to three characters there repeated to a 40,000-character run
            unit = text[i : i + 1 + len(tok) % 3] or tok or "a"
            text = text[:i] + unit * (AMPLIFIED // len(unit)) + text[i:]
        else:  # replace every digit run at that position with the token
            k = i
            while k < n and text[k].isdigit():
                k += 1
            text = text[:i] + tok + text[k:]
    return text


_OPS = st.lists(
    st.tuples(
        st.integers(0, 6),
        st.integers(0, 1 << 20),
        st.integers(0, 1 << 20),
        st.one_of(st.sampled_from(TOKENS), st.text(max_size=8)),
    ),
    min_size=1,
    max_size=6,
)


def mutated_text(seed: str) -> st.SearchStrategy[str]:
    return _OPS.map(lambda ops: _mutate(seed, ops))


def mutated(kind: str) -> st.SearchStrategy[str]:
    """A real input of ``kind`` with a few text mutations."""
    return st.sampled_from(_files(kind)).flatmap(mutated_text)


WEIRD_JSON: tuple[Any, ...] = (
    float("nan"), float("inf"), -float("inf"), 10**400, -(10**400), -65536, -1, 0, 2**64,
    "²", "1.5.8", "NaN", "Infinity", "9" * 400, "", None, True, False, [], {}, [[]], {"a": {}},
    "-65536", "1e400", 1.5,
)  # fmt: skip


def _leaves(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _leaves(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _leaves(v, (*path, i))
    return out


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {k: (_set(v, rest, value) if k == head else v) for k, v in doc.items()}
    return [(_set(v, rest, value) if i == head else v) for i, v in enumerate(doc)]


def _json_mutation(seed: str, picks: list[tuple[int, int]], nest: int) -> str:
    doc = json.loads(seed)
    for where, what in picks:
        paths = _leaves(doc)
        p = paths[where % len(paths)]
        value = WEIRD_JSON[what % len(WEIRD_JSON)]
        doc = _set(doc, p, value)
    text = json.dumps(doc, allow_nan=True)
    if nest:
        text = "[" * nest + text + "]" * nest
    return text


def mutated_json(kind: str) -> st.SearchStrategy[str]:
    """A real JSON input with leaves replaced by values that broke parsers, sometimes buried
    under thousands of brackets; or its text mutated."""
    seeds = [t for t in _files(kind) if _is_json(t)]
    structural = st.builds(
        _json_mutation,
        st.sampled_from(seeds),
        st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 64)), min_size=1, max_size=4),
        st.sampled_from((0, 0, 0, 1, 5000)),
    )
    return st.one_of(structural, mutated(kind))


def _is_json(t: str) -> bool:
    try:
        json.loads(t)
    except ValueError:
        return False
    return True


# CPU seconds one parser may spend on one input: ~100x what a linear parser needs for the
# longest inputs here (40,000-character runs: ~10 ms), far below what a quadratic one needs
# (seconds). CPU time of this process, not the wall clock: other work on the machine does not
# count against it.
BUDGET_S = 1.0


@contextmanager
def within_budget(text: str, budget_s: float = BUDGET_S) -> Iterator[None]:
    """Fails when the body takes more than ``budget_s`` of CPU time on ``text``."""
    t0 = time.process_time()
    yield
    spent = time.process_time() - t0
    assert spent <= budget_s, (
        f"{spent:.2f} s of CPU on {len(text)} characters (budget {budget_s:g} s): "
        f"super-linear? input starts {text[:80]!r}"
    )
