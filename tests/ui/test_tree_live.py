"""StorageTree at 1 Hz (issue 13): a live sample relabels only the lines whose text changed, and
what it shows is exactly what a full build of the same machine shows; a probe that finds the
same machine changes nothing on screen."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widgets.tree import TreeNode

from app.session import merge_live
from backends.simulated import SimClock, SimulatedBackend
from widgets.storage_tree import StorageTree
from widgets.tree_spec import build_tree_spec, dev_key, live_labels


class TreeApp(App[None]):
    def compose(self) -> ComposeResult:
        yield StorageTree(id="tree")


@pytest.fixture
def relabelled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Keys of the tree nodes whose label was set again (``StorageTree._relabel``, where a
    label is set in place)."""
    seen: list[str] = []
    original = StorageTree._relabel

    def spy(self: StorageTree, node: TreeNode[Any], label: Any) -> None:
        seen.append(node.data.key if node.data is not None else "?")
        original(self, node, label)

    monkeypatch.setattr(StorageTree, "_relabel", spy)
    return seen


async def test_a_sample_relabels_only_the_arrays_it_moved(relabelled: list[str]) -> None:
    clock = SimClock.manual()
    backend = SimulatedBackend.big(disks=40, arrays=10, syncing=3, clock=clock)
    probed = backend.probe()
    syncing = {a.name for a in probed.arrays if a.sync is not None and a.sync.active}
    assert len(syncing) == 3
    app = TreeApp()
    async with app.run_test(size=(120, 60)) as pilot:
        tree = app.query_one(StorageTree)
        tree.update_machine(probed)
        await pilot.pause()
        relabelled.clear()

        clock.advance(30.0)
        sample = backend.sample()
        merged = merge_live(probed, sample)
        assert live_labels(probed, merged) is not None  # the live path, not a rebuild
        tree.update_machine(merged)
        await pilot.pause()
        # the same text as a full build of that machine, for every node
        for spec in build_tree_spec(merged):
            assert tree.label_for(spec.ref.key) == spec.label, spec.ref.key
        # and only the syncing arrays' lines were touched: their own line at least
        assert {f"dev:{name}" for name in syncing} <= set(relabelled)
        assert all(any(name in key for name in syncing) for key in relabelled), relabelled

        relabelled.clear()
        tree.update_machine(merge_live(probed, sample))  # the same sample again
        await pilot.pause()
        assert relabelled == []

        tree.update_machine(backend.probe())  # a full probe of the same moment
        await pilot.pause()
        assert relabelled == []


def test_live_labels_gives_up_when_more_than_the_arrays_changed() -> None:
    """A probe of the same stack relabels only the arrays that moved, as a rebuild would label
    them (issue 29: big rebuilt its whole tree spec every 10 s); a device that changed is a
    rebuild."""
    clock = SimClock.manual()
    backend = SimulatedBackend.big(disks=20, arrays=5, syncing=1, clock=clock)
    first = backend.probe()
    clock.advance(1.0)
    second = backend.probe()  # a probe: the same stack, one array's sync moved
    live = live_labels(first, second)
    assert live is not None
    moved = [b.name for a, b in zip(first.arrays, second.arrays, strict=True) if a != b]
    assert moved and all(dev_key(n) in live for n in moved)
    rebuilt = {s.ref.key: s.label for s in build_tree_spec(second)}
    assert all(label == rebuilt[key] for key, label in live.items() if key in rebuilt)
    disk = dataclasses.replace(second.disks[0], model="another model")
    changed = dataclasses.replace(second, disks=(disk, *second.disks[1:]))
    assert live_labels(second, changed) is None
    assert live_labels(first, first) == {}


async def test_badges_change_the_trees_virtual_width_at_once() -> None:
    """A badge makes a label 2 cells wider (or narrower when it goes): the horizontal scrollbar
    must know at once, not at the next rebuild (the tree's virtual width lagged, and snapshots
    of the same screen differed in its thumb)."""
    from tests.ui.helpers import wait_ready
    from tests.ui.test_snapshots import _scenario_app

    def widest(tree: StorageTree) -> int:
        depth, root = tree.guide_depth, tree.show_root
        return max(
            tree.get_label_width(line.node) + line._get_guide_width(depth, root)
            for line in tree._tree_lines
        )

    app = _scenario_app("big")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        tree = app.storage_tree
        assert app.machine is not None
        tree.set_badges({})
        await pilot.pause()
        assert tree.virtual_size.width == widest(tree)
        tree.set_badges({a.name: "error" for a in app.machine.arrays})
        await pilot.pause()
        assert tree.virtual_size.width == widest(tree)


async def test_a_relabel_repaints_the_nodes_own_line_only() -> None:
    """A syncing array's percent moved: only its own line is repainted (issue 29: Textual's
    ``set_label`` repainted the array's whole subtree, its members, PV and filesystem, and
    rendered those lines again each second), and the screen shows the new label."""
    from textual.geometry import Region

    from tests.ui.helpers import screen_lines

    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    probed = backend.probe()
    app = TreeApp()
    async with app.run_test(size=(120, 40)) as pilot:
        tree = app.query_one(StorageTree)
        tree.update_machine(probed)
        await pilot.pause()
        node = tree.node_for("dev:md127")
        assert node is not None and node.children  # a subtree below it that must not repaint
        painted: list[Region] = []
        original = StorageTree.refresh

        def spy(self: StorageTree, *regions: Region, **kw: Any) -> StorageTree:
            painted.extend(regions)
            return original(self, *regions, **kw)

        resolved: list[tuple[str, ...]] = []
        styles = StorageTree.get_component_styles

        def spy_styles(self: StorageTree, *names: str) -> Any:
            resolved.append(names)
            return styles(self, *names)

        StorageTree.refresh = spy  # type: ignore[method-assign]
        StorageTree.get_component_styles = spy_styles  # type: ignore[method-assign]
        try:
            clock.advance(30.0)
            tree.update_machine(merge_live(probed, backend.sample()))
            await pilot.pause()
        finally:
            StorageTree.refresh = original  # type: ignore[method-assign]
            StorageTree.get_component_styles = styles  # type: ignore[method-assign]
        line = node.line - tree.scroll_offset.y
        assert painted == [Region(0, line, tree.size.width, 1)]
        # and its component styles (guides, cursor, highlight) were not resolved again: only
        # the guides' colour checks that Tree itself makes uncached for each line it renders
        assert all(n[0].startswith("tree--guides") for n in resolved), resolved
        label = tree.label_for("dev:md127")
        assert label is not None and "resync" in label.plain
        assert label.plain in screen_lines(app)[line]


def test_a_moving_sync_leaves_its_members_labels_alone() -> None:
    """A sync that moved changes its array's line, not its members' (their labels show the
    member alone): ``live_labels`` does not make those again each second (issue 44: 16 syncing
    arrays' members relabelled every sample on big); a member whose state moved is."""
    clock = SimClock.manual()
    backend = SimulatedBackend.big(disks=20, arrays=5, syncing=1, clock=clock)
    first = backend.probe()
    clock.advance(1.0)
    second = backend.probe()
    live = live_labels(first, second)
    assert live is not None
    moved = [b for a, b in zip(first.arrays, second.arrays, strict=True) if a != b]
    assert moved and all(
        a.members == b.members for a, b in zip(first.arrays, second.arrays, strict=True)
    )
    assert set(live) == {dev_key(b.name) for b in moved}
    # one member of the moving array goes faulty: its two labels are made, as a build makes them
    a = moved[0]
    mem = dataclasses.replace(a.members[0], state=("faulty",))
    failed = dataclasses.replace(a, members=(mem, *a.members[1:]))
    third = dataclasses.replace(
        second, arrays=tuple(failed if x.name == a.name else x for x in second.arrays)
    )
    live = live_labels(second, third)
    assert live is not None
    rebuilt = {s.ref.key: s.label for s in build_tree_spec(third)}
    keys = {f"member:{a.name}:{mem.device}", f"memberof:{mem.device}>{a.name}"}
    assert keys <= set(live)
    assert all(live[k] == rebuilt[k] for k in keys if k in rebuilt)
    assert any(k in rebuilt for k in keys)


async def test_a_relabelled_line_draws_as_tree_draws_it_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A syncing array's line, drawn again each second with its guides kept
    (``StorageTree._render_line``), is the strip ``Tree._render_line`` draws from nothing: with
    the cursor on it, off it, and under the mouse, at every sample."""
    from textual.widgets import Tree

    clock = SimClock.manual()
    backend = SimulatedBackend.big(disks=12, arrays=4, syncing=2, clock=clock)
    probed = backend.probe()
    app = TreeApp()
    async with app.run_test(size=(100, 50)) as pilot:
        tree = app.query_one(StorageTree)
        tree.update_machine(probed)
        await pilot.pause()
        syncing = [a.name for a in probed.arrays if a.sync is not None and a.sync.active]
        keys = [dev_key(n) for n in syncing]
        drawn = kept = 0
        passes: list[int] = []
        real = Tree._render_line

        def counted(self: Tree[Any], *args: Any) -> Any:
            passes.append(1)
            return real(self, *args)

        monkeypatch.setattr(Tree, "_render_line", counted)
        for i in range(8):
            clock.advance(7.0)
            tree.update_machine(merge_live(probed, backend.sample()))
            if i == 3:
                tree.go_to(keys[0])  # the cursor onto the line
            if i == 5:
                node = tree.node_for(keys[1])
                assert node is not None
                tree.hover_line = node.line  # the mouse over the other
            await pilot.pause()
            for key in keys:
                node = tree.node_for(key)
                assert node is not None
                y, width, style = node.line, tree.size.width, tree.rich_style
                whole_passes = len(passes)
                ours = tree._render_line(y, 0, width, style)
                kept += len(passes) == whole_passes
                tree._line_cache.clear()  # Tree's own pass, from nothing
                whole = real(tree, y, 0, width, style)
                assert list(ours) == list(whole), (i, key)
                assert ours.text.rstrip().endswith(str(tree.label_for(key)).rstrip()[-8:])
                drawn += 1
        assert drawn == 16 and kept >= 12  # most lines took the short way
