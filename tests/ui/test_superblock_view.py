"""Issue 26 item 3 in the detail pane: the member table shows each member's events against the
array's when one is behind; a removed member still carrying the superblock and a stray array are
named (the simulator's ``retire`` scenario: sdb1 removed 2 h ago, sdc1 from an old array)."""

from __future__ import annotations

from io import StringIO

from rich.console import Console, RenderableType

from app.plans.superblocks import read_superblocks
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock
from widgets.device_detail import render_ref
from widgets.tree_spec import NodeRef


def _text(r: RenderableType) -> str:
    console = Console(file=StringIO(), width=200, color_system=None, record=True)
    console.print(r)
    return console.export_text()


def test_a_member_behind_and_a_stray_are_shown() -> None:
    be = SimulatedBackend.from_scenario("retire", clock=SimClock.manual())
    m = be.probe()
    sbs = read_superblocks(m, be)
    text = _text(render_ref(m, NodeRef("dev:md0", "array", "md0"), superblocks=sbs))
    assert "superblock" in text and "events 244 (current)" in text
    assert "sdb1 carries md0's superblock, not in the array:" in text
    assert "events 232 (array 244: 12 behind) (was Active device 1)" in text
    arrays = _text(render_ref(m, NodeRef("section:Arrays", "section", "Arrays"), superblocks=sbs))
    assert "sdc1 carries a superblock of array" in arrays and "not assembled" in arrays
    assert "raidman plan assemble --array" in arrays


def test_no_column_while_every_member_is_current() -> None:
    be = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual())
    m = be.probe()
    sbs = read_superblocks(m, be)
    assert sbs.members  # read, all current
    (a,) = [x for x in m.arrays if not x.is_container]
    text = _text(render_ref(m, NodeRef(f"dev:{a.name}", "array", a.name), superblocks=sbs))
    assert "superblock" not in text
