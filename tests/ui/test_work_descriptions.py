"""Every ``@work`` worker names itself (``description=``). Without one, Textual's decorator
builds a description from ``repr()`` of every argument at each call (textual/_work_decorator.py):
the 1 Hz sample worker's ``HostView`` argument reprs the whole session and machine, which on
``--demo big`` (1,000 disks) was 54 % of the TUI's CPU (py-spy, issue 29)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _work_decorators(tree: ast.AST) -> list[ast.Call]:
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for d in node.decorator_list:
                func = d.func if isinstance(d, ast.Call) else d
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name == "work":
                    calls.append(d)
    return calls


def test_every_worker_has_a_description() -> None:
    missing, seen = [], 0
    for path in sorted([*(ROOT / "app").rglob("*.py"), *(ROOT / "widgets").rglob("*.py")]):
        for d in _work_decorators(ast.parse(path.read_text(), str(path))):
            seen += 1
            if not (isinstance(d, ast.Call) and any(k.arg == "description" for k in d.keywords)):
                missing.append(f"{path.relative_to(ROOT)}:{d.lineno}")
    assert seen >= 10  # the scan finds the workers at all
    assert missing == []


def test_a_worker_with_a_description_reprs_none_of_its_arguments() -> None:
    """What the rule buys: the decorator does not touch the arguments' repr."""
    import asyncio

    from textual import work
    from textual.app import App

    class Loud:
        reprs = 0

        def __repr__(self) -> str:
            Loud.reprs += 1
            return "Loud()"

    class Host(App[None]):
        @work(thread=True, description="quiet")
        def quiet(self, arg: Loud) -> None: ...

        @work(thread=True)
        def loud(self, arg: Loud) -> None: ...

    async def run() -> None:
        app = Host()
        async with app.run_test():
            app.quiet(Loud())
            assert Loud.reprs == 0
            app.loud(Loud())
            assert Loud.reprs == 1  # Textual's default: repr of every argument, each call
            await app.workers.wait_for_complete()

    asyncio.run(run())
