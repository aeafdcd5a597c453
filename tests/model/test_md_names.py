"""The md name table (app/model/md_names.py) and the guard that keeps it the only one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.model import levels, md_names

ROOT = Path(__file__).resolve().parents[2]
TABLE_MODULES = {"app/model/md_names.py", "app/model/levels.py"}


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("5", "raid5"),
        (5, "raid5"),
        ("raid5", "raid5"),
        ("RAID5", "raid5"),
        ("RAID-5", "raid5"),
        ("r5", "raid5"),
        ("mirror", "raid1"),
        ("stripe", "raid0"),
        ("linear", "linear"),
        ("-1", "linear"),
        ("10", "raid10"),
        ("raid3", None),
        ("7", None),
        ("multipath", None),
        ("", None),
        (None, None),
    ],
)
def test_level_aliases(text: str | int | None, want: str | None) -> None:
    assert md_names.level_name(text) == want


def test_level_numbers() -> None:
    assert md_names.level_number("raid10") == 10
    assert md_names.level_number("mirror") == 1
    assert md_names.level_number("linear") == -1
    assert md_names.level_number("nope") is None


def test_parity_layout_numbers_as_mdadm_maps_them() -> None:
    # mdadm maps.c r5layout[]: aliases and the ddf names as aliases of 1, 0, 2 on RAID-5
    assert md_names.parity_layout_number("raid5", "ls") == 2
    assert md_names.parity_layout_number("raid5", None) == 2  # "default"
    assert md_names.parity_layout_number("raid5", "parity-last") == 5
    assert md_names.parity_layout_number("raid5", "ddf-zero-restart") == 1
    assert md_names.parity_layout_number("raid5", "left-symmetric-6") is None
    # r6layout[]: the DDF rotations have their own numbers, and the -6 layouts 16..20
    assert md_names.parity_layout_number("raid6", "ddf-zero-restart") == 8
    assert md_names.parity_layout_number("raid6", "ddf-N-continue") == 10
    assert md_names.parity_layout_number("raid6", "parity-first-6") == 20
    assert md_names.parity_layout_number("raid6", "right-symmetric-6") == 19
    assert md_names.parity_layout_name(18) == "left-symmetric-6"
    assert md_names.parity_layout_name(7) is None
    # every number has one name and back
    for number, name in md_names.PARITY_LAYOUT_NAMES.items():
        assert md_names.R6_LAYOUTS[name] == number


@pytest.mark.parametrize(
    ("name", "number"),
    [("n2", 0x102), ("f2", 0x201), ("o2", 0x10201), ("n3", 0x103), ("n2f2", 0x202), ("n1", 0x101)],
)
def test_raid10_layout_encode_decode(name: str, number: int) -> None:
    assert levels.raid10_layout(name).number == number
    g = levels.Raid10Layout.from_number(number)
    assert g is not None and g.name == name


@pytest.mark.parametrize("bad", [-1, 0, 0x2, 0x100, 0x20102])
def test_raid10_layout_refused_numbers(bad: int) -> None:
    assert md_names.raid10_decode(bad) is None
    assert levels.Raid10Layout.from_number(bad) is None


def test_create_choices_follow_the_table() -> None:
    for label, value in levels.CREATE_CHOICES:
        name = md_names.level_name(value)
        assert name is not None and levels.label(name) == label


# ---- the guard: no second table of md names ---------------------------------------------------
_LAYOUT_NAMES = (
    set(md_names.R5_LAYOUTS) | set(md_names.R6_LAYOUTS) | set(md_names.RAID0_LAYOUT_NAMES.values())
) - {"default"}
_LEVEL_WORDS = set(md_names.MDADM_LEVELS) - {"-1"}


def _is_level_word(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value in _LEVEL_WORDS


def _level_collections(tree: ast.Module) -> list[ast.AST]:
    """Tuples, lists and sets that act as a table: a module-level constant's value (or an
    element of it), or the right side of an ``in``/``not in`` test."""
    out: list[ast.AST] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            out.extend(ast.walk(stmt.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            out.extend(
                c
                for c, op in zip(node.comparators, node.ops, strict=True)
                if isinstance(op, ast.In | ast.NotIn)
            )
    return out


def _program_names(tree: ast.Module) -> set[int]:
    """String constants that name a program, not a layout ("ls" is both): an argv's first
    element followed by an option (``["ls", "-1", path]``), or a handler registry's key naming
    the function it maps to (``{"ls": ls}``)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.List | ast.Tuple) and len(node.elts) >= 2:
            first, second = node.elts[0], node.elts[1]
            if (
                isinstance(first, ast.Constant)
                and isinstance(second, ast.Constant)
                and isinstance(second.value, str)
                and second.value.startswith("-")
            ):
                out.add(id(first))
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                if isinstance(k, ast.Constant) and isinstance(v, ast.Name) and v.id == k.value:
                    out.add(id(k))
    return out


def _offences(tree: ast.Module) -> list[tuple[int, str]]:
    """Layout names written out; tuples/lists/sets of strings used as a table (see above)
    holding three or more md level spellings; dicts from three or more level spellings to
    spellings or numbers."""
    out: list[tuple[int, str]] = []
    for node in _level_collections(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            # the elements, and those of (label, value) pairs inside
            elts = [
                x
                for e in node.elts
                for x in (e.elts if isinstance(e, ast.Tuple | ast.List) else [e])
            ]
            strings = all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elts)
            if strings and sum(map(_is_level_word, elts)) >= 3:
                out.append((node.lineno, "a literal collection of md levels"))
    programs = _program_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in _LAYOUT_NAMES:
            if id(node) not in programs:
                out.append((node.lineno, f"layout name {node.value!r}"))
        elif isinstance(node, ast.Dict):
            names = sum(map(_is_level_word, node.keys))
            values_are_names = all(
                _is_level_word(v) or (isinstance(v, ast.Constant) and isinstance(v.value, int))
                for v in node.values
            )
            if names >= 3 and values_are_names:
                out.append((node.lineno, "a literal md level table"))
    return out


def test_offence_finder_finds_the_copies_it_is_meant_to_find() -> None:
    """The scanner itself: the tables that used to live outside md_names are caught."""
    copies = [
        'LEVEL_ALIASES = {"0": "raid0", "stripe": "raid0", "1": "raid1", "mirror": "raid1"}',
        '_REDUNDANT = {"1", "4", "5", "6", "10", "raid1", "mirror"}',
        'striped = level in ("0", "4", "5", "6", "10")',
        'RAID5 = {0: "left-asymmetric"}',
        'LAYOUTS = ("ls", "parity-first")',
    ]
    for src in copies:
        assert _offences(ast.parse(src)), src
    # "ls" the program (an argv, a handler registry) is no layout name; a table of them still is
    assert not _offences(ast.parse('run(["ls", "-1", "/sys/block/sdb/device"])'))
    assert not _offences(ast.parse('HANDLERS = {"ls": ls, "readlink": readlink}'))
    assert _offences(ast.parse('NAMES = {"ls": left, "rs": right}'))
    assert _offences(ast.parse('LAYOUTS = ["ls", "-x", "rs"]'))
    # a module-level (label, value) list like the wizard's old one
    assert _offences(ast.parse('LEVELS = [("RAID-1", "1"), ("RAID-5", "5"), ("RAID-6", "6")]'))
    assert _offences(ast.parse('VALUES = ("10", "1", "5", "6")'))
    # per-level prose is not a name table
    prose = 'x = {"raid5": "a sentence about RAID-5", "raid6": "b", "raid1": "c"}'
    assert not _offences(ast.parse(prose))


def test_no_md_name_table_outside_the_table_module() -> None:
    found = []
    for top in ("app", "widgets", "backends"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in TABLE_MODULES:
                continue
            for line, what in _offences(ast.parse(path.read_text(encoding="utf-8"))):
                found.append(f"{rel}:{line}: {what}")
    assert not found, "md names belong in app/model/md_names.py:\n" + "\n".join(found)
