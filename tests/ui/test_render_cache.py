"""A syncing array's Details render only the sync block again each sample (issue 29: the field
and member tables were most of raid10-evo's time each second), and show the same text as
without the cache."""

from __future__ import annotations

import dataclasses
from io import StringIO
from typing import Any

import pytest
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


def _segments(r: RenderableType, width: int) -> list[list[tuple[str, object]]]:
    """What Rich renders at ``width``, as Textual asks for it (no highlighting), with runs of
    one style merged and "no style" spelt one way."""
    from rich.segment import Segment

    console = Console(file=StringIO(), width=width, color_system="truecolor")
    options = console.options.update(highlight=False)
    return [
        [(s.text, s.style or None) for s in Segment.simplify(line) if s.text]
        for line in console.render_lines(r, options, pad=False)
    ]


def test_the_sync_block_shows_what_its_table_showed_at_every_width() -> None:
    """The sync block's rows are laid out without a Rich table (issue 29: measuring it each
    second was most of what a sample cost the Details); segment for segment the same as the
    table at every width, including the narrow ones where a value wraps (left to the table)."""
    from rich.text import Text

    from widgets.detail_fields import LabelGrid
    from widgets.device_detail import sync_block

    blocks = []
    for scenario in ("raid10-evo", "raid5-cable", "raid6-wd", "imsm"):
        backend = SimulatedBackend.from_scenario(scenario, clock=SimClock.manual())
        m = merge_live(backend.probe(), backend.sample())
        blocks += [a.sync for a in m.arrays if a.sync is not None]
    assert len(blocks) >= 3
    grids = [sync_block(s, width=w).renderables[1] for s in blocks for w in (30, 120)]  # type: ignore[attr-defined]
    grids.append(LabelGrid([("rebuilding", Text("sd[a]1, [bold]x"))]))
    fitted = wrapped = 0
    for grid in grids:
        assert isinstance(grid, LabelGrid)
        for width in range(8, 130):
            fast = _segments(grid, width)
            assert fast == _segments(grid.table(), width), (grid.rows, width)
            fits = len(fast) == len(grid.rows)
            fitted, wrapped = fitted + fits, wrapped + (not fits)
    assert fitted and wrapped  # both paths compared
    # machine data is never markup: the brackets show literally
    assert "sd[a]1, [bold]x" in _text(grids[-1])


async def test_a_group_renders_only_its_new_parts() -> None:
    """Details' body (issue 29): of a ``Group`` updated in place, the parts that are the same
    objects as last time keep their strips; only the new part is rendered, and the screen
    shows the whole new content."""
    import pytest
    from rich.console import Group
    from rich.text import Text
    from textual.app import App, ComposeResult

    from tests.ui.helpers import screen_lines
    from widgets.render_cache import Cached, LineDiffStatic

    head = Cached("head", lambda: Text("head line\nsecond head line"))
    tail = Cached("tail", lambda: Text("tail line"))

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield LineDiffStatic(Group(head, Text("moving 0"), tail), id="body")

    app = Host()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        body = app.query_one(LineDiffStatic)
        body.update(Group(head, Text("moving 1"), tail), layout=False)  # parts now cached
        await pilot.pause()
        rendered: list[object] = []
        original = LineDiffStatic.render_part

        def spy(widget: LineDiffStatic, part: Any, *a: Any) -> Any:
            rendered.append(part)
            return original(widget, part, *a)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(LineDiffStatic, "render_part", spy)
            moving = Text("moving 2")
            body.update(Group(head, moving, tail), layout=False)
            assert rendered == [moving]
            assert [(r.y, r.height) for r in body._repaint_regions] == [(2, 1)]
        await pilot.pause()
        assert [line.rstrip() for line in screen_lines(app)[:4]] == [
            "head line",
            "second head line",
            "moving 2",
            "tail line",
        ]


async def test_new_superblocks_of_the_same_shape_lay_nothing_out() -> None:
    """Each audit (every probe of a syncing array) hands the Details new member superblocks
    (their event counts move): on screen that is a line diff, no screen layout (issue 29: a
    layout every 10 s was a sixth of raid10-evo's CPU); what grows the pane still lays out."""
    import dataclasses

    import pytest
    from textual.app import App, ComposeResult
    from textual.widget import Widget

    from app.plans.superblocks import read_superblocks
    from tests.ui.helpers import screen_lines
    from widgets.device_detail import DeviceDetail

    backend = SimulatedBackend.from_scenario("retire", clock=SimClock.manual())
    m = backend.probe()
    sbs = read_superblocks(m, backend)
    ref = NodeRef("dev:md0", "array", "md0")

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield DeviceDetail(id="detail")

    app = Host()
    async with app.run_test(size=(200, 50)) as pilot:
        detail = app.query_one(DeviceDetail)
        detail.superblocks = sbs
        detail.show(m, ref)
        await pilot.pause()
        assert any("events 244 (current)" in line for line in screen_lines(app))
        # the next audit: every member's events moved on by one (a sync's checkpoint)
        moved = dataclasses.replace(
            sbs,
            members={
                k: dataclasses.replace(v, events=(v.events or 0) + 1)
                for k, v in sbs.members.items()
            },
        )
        layouts: list[Widget] = []
        original = Widget.refresh

        def spy(self: Widget, *regions: object, **kw: object) -> Widget:
            if kw.get("layout"):
                layouts.append(self)
            return original(self, *regions, **kw)  # type: ignore[arg-type]

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(Widget, "refresh", spy)
            detail.set_superblocks(moved)
            await pilot.pause()
            assert layouts == []
            assert any("events 245 (current)" in line for line in screen_lines(app))
            fewer = dataclasses.replace(moved, outside={})  # lines less: a layout
            detail.set_superblocks(fewer)
            await pilot.pause()
            assert layouts
        assert not any("carries md0's superblock" in line for line in screen_lines(app))


def test_an_audits_new_superblocks_keep_the_head_while_nothing_it_shows_moved() -> None:
    """Each audit reads the member superblocks again (every probe of a syncing array): their
    update times move, nothing the Details show of them does (no member behind, nobody outside):
    the fields and members part is not made again (it was, every 10 s)."""
    from app.plans.superblocks import read_superblocks

    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    ref = NodeRef("dev:md127", "array", "md127")
    cache = CachedParts()
    heads = []
    for _ in range(2):
        clock.advance(10.0)
        m = merge_live(backend.probe(), backend.sample())
        sbs = read_superblocks(m, backend)
        r = render_ref(m, ref, width=120, cache=cache, superblocks=sbs)
        cache.done()
        heads.append((r.renderables[0], sbs))  # type: ignore[attr-defined]
    (h0, s0), (h1, s1) = heads
    assert s0 != s1  # read again: not the same superblocks...
    assert h0 is h1  # ...but the same head


async def test_a_new_sync_block_renders_only_its_lines_that_moved() -> None:
    """The sync block is a new ``Group`` each second (issue 44): of its lines, a heading, a
    grid row or a bar whose text did not move keeps its strips; only the moved ones are
    rendered, and the screen shows the same as the block rendered whole."""
    import pytest
    from rich.console import Group
    from rich.text import Text
    from textual.app import App, ComposeResult

    from tests.ui.helpers import screen_lines
    from widgets.detail_fields import GridRow, LabelGrid
    from widgets.render_cache import LineDiffStatic

    def block(pct: str, eta: str) -> Group:
        grid = LabelGrid(
            [("action", Text("resync", "yellow")), ("progress", Text(pct)), ("ETA", Text(eta))]
        )
        return Group(Group(Text("sync", "bold underline"), grid), Text("risk line"))

    head = Text("head")  # the part before the block: the same object (a Cached one in Details)

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield LineDiffStatic(Group(head, block("1.0%", "5m")), id="body")

    app = Host()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        body = app.query_one(LineDiffStatic)
        body.update(Group(head, block("1.1%", "5m")), layout=False)
        await pilot.pause()
        rendered: list[object] = []
        original = LineDiffStatic.render_part

        def spy(widget: LineDiffStatic, part: Any, *a: Any) -> Any:
            rendered.append(part)
            return original(widget, part, *a)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(LineDiffStatic, "render_part", spy)
            body.update(Group(head, block("1.2%", "5m")), layout=False)
        # every line of the new block but the progress row kept its strips
        moved = [r.label for r in rendered if isinstance(r, GridRow)]
        assert moved == ["progress"] and len(rendered) == 1, rendered
        await pilot.pause()
        shown = [line.rstrip() for line in screen_lines(app)[:6]]
        assert shown == [
            "head",
            "sync",
            "action    resync",
            "progress  1.2%",
            "ETA       5m",
            "risk line",
        ]


async def test_the_banner_repaints_its_moving_line_not_the_title() -> None:
    """A sync moving each second changes the banner's second line (issue 44): only that line
    is repainted, the title above it is not, and the screen shows the new line."""
    from textual.app import App, ComposeResult

    from app.session import merge_live
    from tests.ui.helpers import screen_lines
    from widgets.header_banner import HeaderBanner

    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    probed = backend.probe()

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield HeaderBanner(id="banner")

    app = Host()
    async with app.run_test(size=(120, 6)) as pilot:
        banner = app.query_one(HeaderBanner)
        banner.set_machine(merge_live(probed, backend.sample()))
        await pilot.pause()
        before = screen_lines(app)[:2]
        clock.advance(5.0)
        moved = merge_live(probed, backend.sample())
        banner.set_machine(moved)
        dirty = banner._repaint_regions
        assert dirty and all((r.y, r.height) == (1, 1) for r in dirty), dirty
        await pilot.pause()
        after = screen_lines(app)[:2]
        assert after[0] == before[0] and after[1] != before[1]
        assert "SYNCING" in after[1] and "md127" in after[1]


async def test_a_part_renders_as_textuals_to_strips_renders_it() -> None:
    """``render_part`` is ``Visual.to_strips`` of the part in a ``Group`` of its own, without
    its per-call look-ups: the same strips for styled text, a grid row, a wrapped line and a
    table, on a widget with a background and padding."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text
    from textual.app import App, ComposeResult
    from textual.visual import RichVisual, Visual

    from widgets.detail_fields import LabelGrid
    from widgets.render_cache import LineDiffStatic, one_line

    table = Table("device", "slot")
    table.add_row("sda2", "0")
    parts: list[Any] = [
        Text("sync", "bold underline"),
        Text("resync 17.7% @ 412.6 MiB/s", "bold yellow", end="\n"),
        Text("a line long enough to wrap at forty columns, " * 3, "red"),
        *LabelGrid([("progress", Text("17.7%")), ("ETA", Text("5m 27s", "cyan"))]).row_parts(),
        table,
        # one line that fits, rendered without Rich's layout (render_cache.one_line): a base
        # style and no span (Rich renders it as a span), spans over a base style, nothing at
        # all, wide characters, exactly the width, one cell more (cut), justified (padded)
        Text("only a base style", "bold red"),
        Text.assemble(
            ("⟳ SYNCING:", "bold black on yellow"), " md127 ", ("17.7%", "cyan"), style="bold"
        ),
        Text(""),
        Text.assemble(("md127", "bold"), " resync ", ("17.7%", "cyan")),  # spans, no base style
        Text("名前 md127 ✖ ⟳", "magenta"),
        Text("x" * 38, "green"),
        Text("y" * 39, "green", no_wrap=True, overflow="ellipsis"),
        Text("left justified", "blue", justify="left"),
        Text("right justified", justify="right"),
        *LabelGrid([("a label wider than the rest", Text("and a value", "bold"))]).row_parts(),
    ]

    class Host(App[None]):
        CSS = "LineDiffStatic { background: $panel; padding: 0 1; color: $text; }"

        def compose(self) -> ComposeResult:
            yield LineDiffStatic(Group(Text("x")), id="body")

    app = Host()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        body = app.query_one(LineDiffStatic)
        width, style = body.content_region.width, body.visual_style
        ctx = (app.console, app.console_options.update(highlight=False, width=width, height=None))
        fast = 0
        for part in parts:
            fast += one_line(part, width, *ctx) is not None
            ours = body.render_part(part, width, style.rich_style, ctx)
            textuals = Visual.to_strips(body, RichVisual(body, Group(part)), width, None, style)
            assert ours == textuals, part
            assert [s.text for s in ours] == [s.text for s in textuals]
        assert fast == 10  # the grid rows that fit and the fitting lines took the short way


def test_the_rebuild_risk_is_worked_out_again_only_when_its_inputs_move(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Beside a resync the risk is that of a member failing: its figures do not move with the
    resync, so it is worked out once; beside a recovery its window is md's ETA, worked out at
    each sample. Either way the Details read as they do uncached."""
    import widgets.device_detail as dd

    calls: list[str] = []
    real = dd.risk_block

    def counting(m: Any, a: Any) -> Any:
        calls.append(a.name)
        return real(m, a)

    monkeypatch.setattr(dd, "risk_block", counting)
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    probed = backend.probe()
    ref = NodeRef("dev:md127", "array", "md127")
    cache = CachedParts()
    machines = []
    for _ in range(3):
        clock.advance(1.0)
        m = merge_live(probed, backend.sample())
        machines.append(m)
        r = render_ref(m, ref, width=120, cache=cache)
        cache.done()
        assert "rebuild risk" in _text(r)
    assert calls == ["md127"]  # the resync moved three times; the risk was made once
    # a recovery onto sdd2: its window is md's ETA, which moves with every sample
    base = machines[-1]
    a = base.array("md127")
    assert a is not None and a.sync is not None
    calls.clear()
    texts = []
    for done in (1_000_000, 2_000_000):
        sync = dataclasses.replace(a.sync, action="recover", targets=("sdd2",), done_sectors=done)
        m = dataclasses.replace(base, arrays=(dataclasses.replace(a, sync=sync),))
        r = render_ref(m, ref, width=120, cache=cache)
        cache.done()
        assert _text(r) == _text(render_ref(m, ref, width=120))
        texts.append(_text(r))
    assert len(calls) == 2 + 2  # each sample's (and each uncached render's)
    assert texts[0] != texts[1]
