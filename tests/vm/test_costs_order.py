"""The VM tests' order (tests/vm/costs.py) splits their measured time evenly between the two
halves worksteal hands the two guests. Runs without a VM."""

from __future__ import annotations

from tests.vm.costs import WALL_S, cost, two_queues


def test_two_queues_split_the_time_evenly_longest_first() -> None:
    ids = [f"tests/vm/{n}" for n in sorted(WALL_S)]
    order = two_queues(ids, lambda n: n)
    assert sorted(order) == sorted(ids)
    half = len(order) // 2
    a, b = order[:half], order[half:]
    ta, tb = sum(cost(n) for n in a), sum(cost(n) for n in b)
    # each half is longest first, one of them starting with the longest of all
    for q in (a, b):
        assert [cost(n) for n in q] == sorted((cost(n) for n in q), reverse=True)
    assert max(WALL_S.values()) in (cost(a[0]), cost(b[0]))
    # the halves differ by less than one long test (in collection order: 1,183 s against 1,094)
    assert abs(ta - tb) <= max(WALL_S.values()), (ta, tb)


def test_an_unlisted_test_counts_the_default() -> None:
    assert cost("tests/vm/test_new.py::test_x") == 20
