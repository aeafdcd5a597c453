"""A syncing array's Details render only the sync block again each sample (issue 29: the field
and member tables were most of raid10-evo's time each second), and show the same text as
without the cache."""

from __future__ import annotations

import dataclasses
from io import StringIO

from rich.console import Console, RenderableType

from app.session import merge_live
from backends.simulated import SimClock, SimulatedBackend
from widgets.device_detail import render_ref
from widgets.render_cache import CachedParts
from widgets.tree_spec import NodeRef


def _text(r: RenderableType) -> str:
    console = Console(file=StringIO(), width=120, color_system=None, record=True)
    console.print(r)
    return console.export_text()


def test_a_sync_sample_renders_only_the_sync_block_again() -> None:
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    probed = backend.probe()
    ref = NodeRef("dev:md127", "array", "md127")
    cache = CachedParts()
    shown = []
    for _ in range(3):
        clock.advance(1.0)
        m = merge_live(probed, backend.sample())
        a = m.array("md127")
        assert a is not None and a.sync is not None
        r = render_ref(m, ref, width=120, cache=cache)
        cache.done()
        assert _text(r) == _text(render_ref(m, ref, width=120))  # the same text as uncached
        shown.append((r, a))
    (r0, a0), (r1, a1), (r2, _) = shown
    assert a0.sync != a1.sync  # the sync moved each second...
    head0, head1, head2 = (r.renderables[0] for r in (r0, r1, r2))  # type: ignore[attr-defined]
    assert head0 is head1 is head2  # ...the part before it was made once
    assert "members" in _text(head0)
    # a change in the array itself (not its sync) makes that part again
    changed = dataclasses.replace(a1, mismatch_cnt=(a1.mismatch_cnt or 0) + 8)
    m2 = dataclasses.replace(m, arrays=(changed,))
    r3 = render_ref(m2, ref, width=120, cache=cache)
    assert r3.renderables[0] is not head2  # type: ignore[attr-defined]


async def test_a_line_diff_static_repaints_only_the_lines_that_changed() -> None:
    """Details' body (issue 29): a live update of the same shape marks dirty only the lines
    whose text changed, and the screen shows the new text."""
    from textual.app import App, ComposeResult

    from tests.ui.helpers import screen_lines
    from widgets.render_cache import LineDiffStatic

    lines = [f"line {i}" for i in range(10)]

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield LineDiffStatic("\n".join(lines), id="body", markup=False)

    app = Host()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        body = app.query_one(LineDiffStatic)
        lines[3] = "line 3 moved"
        body.update("\n".join(lines), layout=False)
        dirty = body._repaint_regions
        assert [(r.y, r.height) for r in dirty] == [(3, 1)]
        await pilot.pause()
        assert screen_lines(app)[3].rstrip() == "line 3 moved"
        body.update("\n".join([*lines, "one more"]), layout=False)  # more lines: a layout
        await pilot.pause()
        assert screen_lines(app)[10].rstrip() == "one more"
