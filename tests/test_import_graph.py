"""No import circle among app/, widgets/ and backends/ (issue 25's done-when): between modules,
counting imports made only for type checking and those inside functions, and between folders
(app.plans, app.wear, backends.simulated, ...). grimp is the graph import-linter builds."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

import grimp


def _circles(nodes: Iterable[str], edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def _graph() -> dict[str, set[str]]:
    g = grimp.build_graph("app", "widgets", "backends", cache_dir=None)
    return {m: set(g.find_modules_directly_imported_by(m)) for m in sorted(g.modules)}


def _folder(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_circles_are_found() -> None:
    assert _circles("abcd", {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circle_between_modules() -> None:
    edges = _graph()
    # the graph holds the code (not tests/backends, a package of the same name)
    assert {"app.ui.app", "backends.simulated.backend", "widgets.storage_tree"} <= set(edges)
    assert _circles(edges, edges) == []


def test_no_import_circle_between_folders() -> None:
    edges = _graph()
    folders: dict[str, set[str]] = defaultdict(set)
    for a, targets in edges.items():
        folders[_folder(a)] |= {_folder(b) for b in targets if _folder(b) != _folder(a)}
    assert _circles(sorted(folders), folders) == []
