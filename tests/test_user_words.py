"""User-facing text says the fact and its reason in plain English: no string in app/, widgets/
or backends/ cites "article 000", "seed 000" or "the source article", nor quotes the German or
Russian sources (their citations belong in tests' docstrings and docs). Docstrings and comments
are for developers and may cite them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CITES = re.compile(r"\b(articles?|seeds? \d|artikel)\b|[äöüßа-яА-Я]", re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def test_no_source_citations_in_user_text() -> None:
    found = []
    for top in ("app", "widgets", "backends"):
        for path in sorted((ROOT / top).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docs = _docstrings(tree)
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and id(node) not in docs
                    and CITES.search(node.value)
                ):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value[:70]!r}")
    assert found == []
