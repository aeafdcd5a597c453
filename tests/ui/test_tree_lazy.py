"""StorageTree on a big machine: disks start collapsed and their children are added as tree
nodes only when needed (expanded, ``go_to``, a link, the command palette)."""

from __future__ import annotations

from dataclasses import replace

from app.ui.app import RaidmanApp
from backends.simulated import SimClock, SimulatedBackend
from backends.simulated.scenario_parts import add_partition
from tests.ui.fake_backend import FakeBackend
from tests.ui.helpers import wait_for, wait_ready
from widgets.storage_tree import StorageTree

SIZE = (120, 40)
SPARE = "sdo"  # a disk of big(400, 100) that no array uses (the raid1 arrays take 2 of 4)


def _big_app() -> RaidmanApp:
    backend = SimulatedBackend.big(disks=400, arrays=100, clock=SimClock.manual())
    st = backend.state
    st.disks[SPARE].partition_table = "gpt"
    add_partition(st, SPARE, 1, 2048, 2**21)
    add_partition(st, SPARE, 2, 2048 + 2**21, 2**21)
    st.touch()
    return RaidmanApp(backend, probe_interval=0, sample_interval=0)


def _selected(app: RaidmanApp) -> str | None:
    return app.selected.key if app.selected is not None else None


async def test_big_machine_starts_with_disks_collapsed() -> None:
    app = _big_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        tree = app.storage_tree
        assert app.machine is not None and len(app.machine.disks) == 400
        for section in ("section:disks", "section:arrays"):
            node = tree.node_for(section)
            assert node is not None and node.is_expanded
        sda = tree.node_for("dev:sda")
        assert sda is not None and sda.allow_expand and not sda.is_expanded
        assert not sda.children  # its children are pending, not TreeNodes
        assert "memberof:sda>md0" in tree.keys
        assert tree.node_for("memberof:sda>md0") is None
        assert tree.node_for("dev:sdo1") is None
        # arrays stay visible with their members
        md0 = tree.node_for("dev:md0")
        assert md0 is not None and md0.is_expanded
        assert tree.node_for("member:md0:sda") is not None
        # the cursor starts on the first syncing array, as on small machines
        await wait_for(pilot, lambda: _selected(app) == "dev:md0")


async def test_expanding_a_disk_adds_its_children() -> None:
    app = _big_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        tree = app.storage_tree
        assert app.go_to("sda")
        await wait_for(pilot, lambda: _selected(app) == "dev:sda")
        await pilot.press("space")
        await wait_for(pilot, lambda: tree.node_for("memberof:sda>md0") is not None)
        sda = tree.node_for("dev:sda")
        link = tree.node_for("memberof:sda>md0")
        assert sda is not None and sda.is_expanded and link is not None
        assert link.parent is sda and str(link.label).startswith("→ md0 slot 0")
        await pilot.press("down")
        assert _selected(app) == "memberof:sda>md0"
        # collapsing and expanding again does not add the children twice
        await pilot.press("up", "space")
        await pilot.pause()
        assert not sda.is_expanded
        await pilot.press("space")
        await pilot.pause()
        assert sda.is_expanded and len(sda.children) == 1
        # the link jumps to its array
        await pilot.press("down", "g")
        await wait_for(pilot, lambda: _selected(app) == "dev:md0")


async def test_go_to_a_pending_partition() -> None:
    app = _big_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        tree = app.storage_tree
        assert tree.node_for("dev:sdo2") is None
        assert app.go_to("sdo2")
        await wait_for(pilot, lambda: _selected(app) == "dev:sdo2")
        disk = tree.node_for(f"dev:{SPARE}")
        node = tree.node_for("dev:sdo2")
        assert disk is not None and disk.is_expanded
        assert node is not None and node.parent is disk
        assert [c.data.key for c in disk.children if c.data] == ["dev:sdo1", "dev:sdo2"]
        assert str(node.label).startswith("sdo2")
        assert not app.go_to("sdzzz9")


async def test_command_palette_reaches_a_pending_partition() -> None:
    app = _big_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert app.storage_tree.node_for("dev:sdo1") is None
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"go to sdo1")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: _selected(app) == "dev:sdo1")


async def test_badges_on_pending_nodes_appear_when_materialised() -> None:
    app = _big_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        tree = app.storage_tree
        tree.set_badges({"sdo1": "error", "md0": "warning"})
        md0 = tree.node_for("dev:md0")
        assert md0 is not None and str(md0.label).startswith("▲ md0")
        assert tree.node_for("dev:sdo1") is None
        label = tree.label_for("dev:sdo1")
        assert label is not None and label.plain.startswith("✖ sdo1")
        # the audit runs again while both partitions are still pending
        tree.set_badges({"sdo2": "advice", "md0": "warning"})
        assert tree.node_for("dev:sdo1") is None and tree.node_for("dev:sdo2") is None
        assert tree.go_to("sdo1")
        await wait_for(pilot, lambda: _selected(app) == "dev:sdo1")
        sdo1, sdo2 = tree.node_for("dev:sdo1"), tree.node_for("dev:sdo2")
        assert sdo1 is not None and str(sdo1.label).startswith("sdo1")
        assert sdo2 is not None and str(sdo2.label).startswith("● sdo2")
        # and a badge set once materialised is drawn at once
        tree.set_badges({"sdo1": "warning"})
        assert str(sdo1.label).startswith("▲ sdo1") and str(sdo2.label).startswith("sdo2")
        assert str(md0.label).startswith("md0")


async def test_live_relabel_reaches_pending_nodes() -> None:
    app = _big_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        tree = app.storage_tree
        machine = app.machine
        assert machine is not None and tree.node_for("dev:sdo1") is None
        parts = tuple(
            replace(p, type_name="Linux RAID") if p.name == "sdo1" else p
            for p in machine.partitions
        )
        keys = tree.keys
        tree.update_machine(replace(machine, partitions=parts))  # same shape: relabel in place
        assert tree.keys == keys and tree.node_for("dev:sdo1") is None
        assert tree.go_to("sdo1")
        await pilot.pause()
        node = tree.node_for("dev:sdo1")
        assert node is not None and str(node.label).endswith("Linux RAID")


async def test_rebuild_keeps_expanded_disks_and_pending_state() -> None:
    app = _big_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        tree = app.storage_tree
        assert tree.go_to("sdo1")  # opens sdo
        await pilot.pause()
        sdb = tree.node_for("dev:sdb")
        assert sdb is not None
        sdb.expand()
        await pilot.pause()
        machine = app.machine
        assert machine is not None
        # a structural change: sdo2 vanished
        tree.update_machine(
            replace(
                machine,
                partitions=tuple(p for p in machine.partitions if p.name != "sdo2"),
                edges=tuple(e for e in machine.edges if "sdo2" not in e),
            )
        )
        await pilot.pause()
        assert "dev:sdo2" not in tree.keys
        for key in ("dev:sdo", "dev:sdb"):
            node = tree.node_for(key)
            assert node is not None and node.is_expanded, key
        assert tree.node_for("dev:sdo1") is not None
        assert tree.node_for("memberof:sdb>md0") is not None
        sdc = tree.node_for("dev:sdc")
        assert sdc is not None and not sdc.is_expanded and not sdc.children
        await wait_for(pilot, lambda: _selected(app) == "dev:sdo1")  # the cursor stayed


async def test_small_machine_is_fully_materialised() -> None:
    app = RaidmanApp(FakeBackend(), probe_interval=0, sample_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        tree = app.main.query_one(StorageTree)
        assert tree.keys
        for key in tree.keys:
            node = tree.node_for(key)
            assert node is not None, key
            assert not node.allow_expand or node.is_expanded, key
