"""Pilot tests of the main screen on the hand-built fake backend."""

from __future__ import annotations

import pytest
from textual.widgets import Log, Static, TabbedContent

from app.session import SessionView
from app.ui.app import RaidmanApp
from app.ui.screens import main as main_screen
from tests.ui.fake_backend import FakeBackend, build_machine
from tests.ui.helpers import plain, wait_for, wait_ready
from widgets.header_banner import HeaderBanner, NotesBar
from widgets.storage_tree import StorageTree
from widgets.tree_spec import NodeRef

SIZE = (120, 40)


def _app(backend: FakeBackend | None = None, **kw: float) -> RaidmanApp:
    kw.setdefault("probe_interval", 0)
    kw.setdefault("sample_interval", 0)
    return RaidmanApp(backend or FakeBackend(), **kw)  # type: ignore[arg-type]


def _detail_text(app: RaidmanApp) -> str:
    return plain(app.main.query_one("#detail-body", Static))


def _header(app: RaidmanApp) -> str:
    return plain(app.main.query_one(HeaderBanner))


async def test_arrow_keys_move_and_detail_follows() -> None:
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        tree = app.storage_tree
        assert tree.has_focus
        # the cursor starts on the syncing array: what the admin came for
        await wait_for(pilot, lambda: app.selected is not None and app.selected.key == "dev:md127")
        app.go_to("nvme0n1")
        await pilot.pause()
        assert app.selected is not None and app.selected.key == "dev:nvme0n1"
        assert "Samsung SSD 850 EVO 500GB" in _detail_text(app)
        assert "465.8 GiB (500,107,862,016 B)" in _detail_text(app)
        await pilot.press("down")
        assert app.selected is not None and app.selected.key == "dev:nvme0n1p1"
        detail = _detail_text(app)
        assert "start sector" in detail and "2,048 sectors (1.0 MiB)" in detail
        assert "member of md127" in detail


async def test_jump_member_to_array_and_back() -> None:
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.go_to("nvme0n1")
        await pilot.pause()
        await pilot.press("down", "down")
        assert app.selected is not None and app.selected.key == "memberof:nvme0n1p1>md127"
        await pilot.press("g")
        await wait_for(pilot, lambda: app.selected is not None and app.selected.key == "dev:md127")
        detail = _detail_text(app)
        assert "raid10" in detail and "members" in detail and "resync" in detail
        # the array's first member link jumps back with enter
        await pilot.press("down")
        assert app.selected is not None and app.selected.key == "member:md127:nvme0n1p1"
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: app.selected is not None and app.selected.key == "dev:nvme0n1p1"
        )


async def test_jump_reopens_collapsed_section() -> None:
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        tree = app.storage_tree
        arrays = tree.node_for("section:arrays")
        assert arrays is not None
        arrays.collapse()
        await pilot.pause()
        assert app.go_to("md127")
        await wait_for(pilot, lambda: app.selected is not None and app.selected.key == "dev:md127")
        assert arrays.is_expanded


async def test_command_palette_go_to() -> None:
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"go to vg0")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.selected is not None and app.selected.key == "vg:vg0")
        assert "volume group vg0" in _detail_text(app)


async def test_banner_for_syncing_then_degraded() -> None:
    backend = FakeBackend()
    app = _app(backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        header = _header(app)
        assert "SYNCING" in header and "md127 resync 16.3%" in header
        assert "DEGRADED" not in header
        backend.machine = build_machine(degraded=True)
        backend.set_sync(None)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.probe_count == 2)
        header = _header(app)
        assert "DEGRADED" in header and "md127 (raid10, 1 missing)" in header
        assert "SYNCING" not in header
        node = app.storage_tree.node_for("dev:md127")
        assert node is not None and "[UUU_]" in str(node.label)


async def test_cursor_starts_on_degraded_array_first() -> None:
    from dataclasses import replace

    from app.model import MdArray, MdMember

    m = build_machine()
    broken = MdArray(
        "md5", "raid1", raid_disks=2, degraded=1, members=(MdMember("sda", 0, ("in_sync",)),)
    )
    app = _app(FakeBackend(machine=replace(m, arrays=(*m.arrays, broken))))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: app.selected is not None and app.selected.key == "dev:md5")


async def test_calm_machine_has_no_banner() -> None:
    backend = FakeBackend()
    backend.set_sync(None)
    app = _app(backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert "SYNCING" not in _header(app) and "DEGRADED" not in _header(app)


async def test_read_only_reason_and_notes_are_shown() -> None:
    app = _app(FakeBackend(read_only="not root (uid 1000)"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert "read-only: not root (uid 1000)" in _header(app)
        notes = app.main.query_one(NotesBar)
        assert notes.display
        assert "smartctl: smartctl not found: SMART unavailable" in plain(notes)


async def test_root_backend_has_no_read_only_notice() -> None:
    app = _app(FakeBackend(read_only=None))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert "read-only" not in _header(app)


async def test_probe_error_becomes_notification() -> None:
    app = _app(FakeBackend(fail_probe="lsblk: permission denied"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(app._notifications))
        messages = [n.message for n in app._notifications]
        assert any("probe failed: lsblk: permission denied" in m for m in messages)
        assert app.machine is None and app.is_running


async def test_sample_error_becomes_notification() -> None:
    app = _app(FakeBackend(fail_sample="sysfs vanished"), sample_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: bool(app._notifications))
        assert any("sysfs vanished" in n.message for n in app._notifications)
        assert app.is_running


async def test_live_sample_moves_percent_without_probe() -> None:
    backend = FakeBackend()
    app = _app(backend, sample_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.go_to("md127")
        await pilot.pause()
        probes = backend.probes
        total = 976508928 * 2
        # the kernel moves on; only sample() sees it (the probe would still say 16.3%)
        live_machine = build_machine(done_sectors=total // 2)
        probed = backend.machine
        backend.machine = live_machine
        await wait_for(pilot, lambda: "50.0%" in _header(app))
        node = app.storage_tree.node_for("dev:md127")
        assert node is not None and "resync 50.0%" in str(node.label)
        assert "50.0%" in _detail_text(app)
        assert backend.probes == probes
        assert app.probed is probed or app.probed == probed


async def test_rebuild_keeps_cursor_and_collapsed_nodes() -> None:
    backend = FakeBackend()
    app = _app(backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        tree = app.storage_tree
        disk = tree.node_for("dev:nvme1n1")
        assert disk is not None
        disk.collapse()
        app.go_to("vg0")
        await pilot.pause()
        # a structural change: the USB disk vanished
        from dataclasses import replace

        backend.machine = replace(backend.machine, disks=backend.machine.disks[:4])
        await pilot.press("r")
        await wait_for(pilot, lambda: "dev:sda" not in tree.keys)
        await pilot.pause()
        assert app.selected is not None and app.selected.key == "vg:vg0"
        node = tree.node_for("dev:nvme1n1")
        assert node is not None and not node.is_expanded
        other = tree.node_for("dev:nvme2n1")
        assert other is not None and other.is_expanded


async def test_badges_are_drawn() -> None:
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        tree = app.main.query_one(StorageTree)
        tree.set_badges({"sda": "error", "md127": "warning"})
        sda = tree.node_for("dev:sda")
        md = tree.node_for("dev:md127")
        link = tree.node_for("memberof:nvme0n1p1>md127")
        assert sda is not None and str(sda.label).startswith("✖ sda")
        assert md is not None and str(md.label).startswith("▲ md127")
        assert link is not None and not str(link.label).startswith("▲")


async def test_mdstat_tab() -> None:
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await pilot.press("m")
        await pilot.pause()
        assert app.main.query_one(TabbedContent).active == "mdstat"
        body = app.main.query_one("#mdstat-body", Log)
        assert "resync = 16.3%" in "\n".join(body.lines)


class Listener(Static):
    """A pane as another engineer would add it through DETAIL_PANES."""

    def __init__(self) -> None:
        super().__init__("", id="listener")
        self.hosts: list[str] = []
        self.lives = 0
        self.selections: list[str | None] = []

    def on_mount(self) -> None:
        self.watch(self.app, "view", self._view)
        self.watch(self.app, "selected", self._selected)

    def _view(self, view: SessionView) -> None:
        if view.machine is not None and view.machine.host not in self.hosts:
            self.hosts.append(view.machine.host)
        if view.live is not None:
            self.lives += 1

    def _selected(self, ref: NodeRef | None) -> None:
        self.selections.append(ref.key if ref else None)


async def test_extra_pane_binds_to_the_app_state(monkeypatch: pytest.MonkeyPatch) -> None:
    panes = [*main_screen.DETAIL_PANES, ("Listen", "listen", Listener)]
    monkeypatch.setattr(main_screen, "DETAIL_PANES", panes)
    app = _app(sample_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        listener = app.main.query_one(Listener)
        await wait_for(pilot, lambda: "evo" in listener.hosts and listener.lives > 0)
        app.go_to("nvme0n1")
        await pilot.pause()
        await pilot.press("down")
        await wait_for(pilot, lambda: "dev:nvme0n1p1" in listener.selections)
        assert "Listen" in plain_tabs(app)


def plain_tabs(app: RaidmanApp) -> str:
    from textual.widgets import Tab

    return " ".join(str(t.label) for t in app.main.query(Tab))
