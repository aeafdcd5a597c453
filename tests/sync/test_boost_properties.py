"""boost.json as untrusted state, fuzzed (issue 23, Deliver: the fuzzing kept as property tests
over boost records; fixed seeds). A real boost.json — written by ``BoostStore`` for a planned
boost — has its text mutated or its values replaced by shapes that broke readers before; opening
it never raises, and every record it yields is one boost itself could have written (or the file
is refused with a note naming boost.json)."""

from __future__ import annotations

import json
import os
import tempfile
from functools import cache
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.sync.boost import BoostStore, plan_boost
from tests.parsers.fuzzing import WEIRD_JSON, mutated_text
from tests.sync.test_boost import KERNEL_DEFAULTS, Files

EXAMPLES = int(os.environ.get("RAIDMAN_FUZZ_EXAMPLES", "50"))
PROPS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@cache
def seed() -> str:
    with tempfile.TemporaryDirectory() as d:
        store = BoostStore(Path(d) / "boost.json")
        for name, action in (("md0", "recover"), ("md127", "resync")):
            _plan, record = plan_boost(
                Files(KERNEL_DEFAULTS).read,
                name,
                action,
                level="raid6",
                members=5,
                store=store,
                rotational=False,
            )
            store.add(record)
        return (Path(d) / "boost.json").read_text()


def _replace_leaf(text: str, which: int, what: int) -> str:
    doc = json.loads(text)
    leaves: list[tuple[object, object]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                leaves.append((node, k))
                walk(v)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                leaves.append((node, i))
                walk(v)

    walk(doc)
    parent, key = leaves[which % len(leaves)]
    parent[key] = WEIRD_JSON[what % len(WEIRD_JSON)]  # type: ignore[index]
    return json.dumps(doc, allow_nan=True)


BOOST_TEXTS = st.one_of(
    st.builds(lambda: seed()).flatmap(mutated_text),
    st.builds(
        _replace_leaf, st.builds(lambda: seed()), st.integers(0, 1 << 12), st.integers(0, 64)
    ),
)


def test_the_seed_is_a_real_boost_file() -> None:
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "boost.json"
        f.write_text(seed())
        f.chmod(0o600)
        assert sorted(r.array for r in BoostStore(f).records) == ["md0", "md127"]


@PROPS
@given(BOOST_TEXTS)
def test_a_mutated_boost_file_opens_or_is_refused_with_a_note(text: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o700)
        f = Path(d) / "boost.json"
        f.write_text(text, encoding="utf-8", errors="surrogateescape")
        f.chmod(0o600)
        store = BoostStore(f)  # never raises
        for r in store.records:
            r.validate()
            assert isinstance(r.started_at, float | int)
        try:
            json.loads(text)
        except (ValueError, RecursionError):  # not JSON (or nested past the json module's
            # recursion limit: app.parsers.safe bounds the depth first): refused whole, and said so
            if not text.strip():
                return
            assert store.records == ()
            assert any("boost.json" in n for n in store.notes), store.notes
