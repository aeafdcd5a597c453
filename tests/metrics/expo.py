"""A strict reader of the text exposition format for the tests (independent of app.metrics)."""

from __future__ import annotations

import re

_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')


def _unescape(v: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), v)


def parse(text: str) -> tuple[dict[tuple[str, frozenset[tuple[str, str]]], float], dict[str, str]]:
    """({(name, labels): value}, {name: type}). Raises AssertionError on a line out of shape,
    a sample with a timestamp, a sample before its TYPE, or a series given twice."""
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    types: dict[str, str] = {}
    helps: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helps.add(line.split(" ", 3)[2])
            continue
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ", 3)
            assert name not in types, f"TYPE twice: {name}"
            types[name] = typ
            continue
        m = _LINE.match(line)
        assert m, f"not a sample line (or one with a timestamp): {line!r}"
        name, _, body, value = m.groups()
        assert name in types and name in helps, f"{name}: sample without HELP/TYPE"
        labels: list[tuple[str, str]] = []
        pos = 0
        body = body or ""
        while pos < len(body):
            lm = _LABEL.match(body, pos)
            assert lm, f"bad labels in {line!r}"
            labels.append((lm.group(1), _unescape(lm.group(2))))
            pos = lm.end()
        key = (name, frozenset(labels))
        assert key not in samples, f"series twice: {line!r}"
        samples[key] = float(value)
    return samples, types


def find(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> dict[frozenset[tuple[str, str]], float]:
    """Every series of ``name`` whose labels include ``labels``."""
    want = set(labels.items())
    return {lab: v for (n, lab), v in samples.items() if n == name and want <= lab}


def one(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    hits = find(samples, name, **labels)
    assert len(hits) == 1, f"{name}{labels}: {len(hits)} series"
    return next(iter(hits.values()))
