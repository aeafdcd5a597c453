"""widgets.device_detail: how much a view shows is a parameter of the view (the pane's width),
not state left in the module by the pane that rendered last."""

from __future__ import annotations

from io import StringIO

from rich.console import Console, RenderableType

from tests.ui.fake_backend import build_machine
from widgets.device_detail import render_ref
from widgets.tree_spec import NodeRef


def _text(r: RenderableType) -> str:
    console = Console(file=StringIO(), width=200, color_system=None, record=True)
    console.print(r)
    return console.export_text()


def test_the_width_decides_sizes_and_member_columns() -> None:
    m = build_machine()
    ref = NodeRef("dev:md127", "array", "md127")
    a = m.array("md127")
    assert a is not None and a.size_bytes
    exact = f"{a.size_bytes:,} B"
    full = _text(render_ref(m, ref))  # width unknown: everything
    columns = "┃ device    ┃ slot ┃ role    ┃ state"
    assert exact in full and columns in full
    wide = _text(render_ref(m, ref, width=120))
    assert wide == full
    assert "┃ data offset" in full
    # issue 39: the member columns that fit whole, most needed first: nothing squeezed to "…"
    mid = _text(render_ref(m, ref, width=60))
    table = [ln.rstrip() for ln in mid.splitlines() if ln[:1] in "┏┃┡│└"]
    assert exact in mid and columns in mid and "┃ data offset" not in mid
    assert all(len(ln) <= 60 and "…" not in ln for ln in table), table
    narrow = _text(render_ref(m, ref, width=40))  # sizes without the exact bytes too
    table = [ln.rstrip() for ln in narrow.splitlines() if ln[:1] in "┏┃┡│└"]
    assert exact not in narrow and "┃ device    ┃ slot ┃ role    ┃" in narrow
    assert all(len(ln) <= 40 and "…" not in ln for ln in table), table
    # nothing carried over from the narrow rendering
    assert _text(render_ref(m, ref)) == full
