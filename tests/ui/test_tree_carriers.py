"""Issue 36 item 5, the tree: a disk or partition carrying the md superblock of an array it is no
active member of is never shown as free. ``retire``: sdb1 is md0's copy, failed and removed, 12
events behind; sdc1 the only carrier of ``oldhost:backup``, not assembled. The fact is the
superblocks' (``Superblocks.carriers``), the one the wizards' pickers refuse them with."""

from __future__ import annotations

from app.model import Machine
from app.model.superblock import Superblock
from app.plans.guards.eligibility import candidates
from app.plans.superblocks import StrayArray, Superblocks, read_superblocks
from app.ui.app import RaidmanApp
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import screen_lines, wait_for, wait_ready
from widgets.tree_spec import build_tree_spec


def _retire() -> tuple[SimulatedBackend, Machine]:
    be = SimulatedBackend.from_scenario("retire", clock=SimClock.manual())
    return be, be.probe()


def test_the_tree_names_what_a_carrier_carries() -> None:
    be, m = _retire()
    sbs = read_superblocks(m, be)
    labels = {s.ref.key: s.label.plain for s in build_tree_spec(m, None, sbs)}
    assert labels["dev:sdb1"].startswith("sdb1  400.1G  carries md0, 12 events behind")
    assert labels["dev:sdc1"].startswith("sdc1  400.1G  carries oldhost:backup, not assembled")
    assert "carries" not in labels["dev:sda1"]  # md0's active member
    assert "carries" not in labels["dev:sdd"]  # blank
    # before the audit's read, nothing is claimed either way
    bare = {s.ref.key: s.label.plain for s in build_tree_spec(m)}
    assert "carries" not in bare["dev:sdb1"] and "carries" not in bare["dev:sdc1"]


def test_the_tree_marks_exactly_what_the_pickers_refuse_as_a_carrier() -> None:
    be, m = _retire()
    sbs = read_superblocks(m, be)
    marked = {s.ref.name for s in build_tree_spec(m, None, sbs) if "carries" in s.label.plain}
    refused = {
        c.name
        for c in candidates(m, superblocks=sbs)
        if any("copy" in r or "not assembled" in r for r in c.reasons)
    }
    assert marked == refused == {"sdb1", "sdc1"}


def test_a_superblock_name_from_the_disk_is_shown_escaped() -> None:
    _, m = _retire()
    sb = Superblock(device="sdd", array_uuid="1" * 32, name="x\x1b[2Jy", events=5)
    sbs = Superblocks(strays=(StrayArray("1" * 32, "x\x1b[2Jy", "raid1", (sb,)),))
    (label,) = [s.label.plain for s in build_tree_spec(m, None, sbs) if s.ref.key == "dev:sdd"]
    assert "\x1b" not in label and "carries x" in label and "not assembled" in label


async def test_the_tui_tree_marks_retire_carriers_at_80x24() -> None:
    be = SimulatedBackend.from_scenario("retire", clock=SimClock.manual())
    app = RaidmanApp(be, probe_interval=0, sample_interval=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        tree = app.storage_tree

        def marked() -> bool:
            label = tree.label_for("dev:sdc1")
            return label is not None and "carries oldhost:backup" in label.plain

        await wait_for(pilot, marked)
        sdb1 = tree.label_for("dev:sdb1")
        assert sdb1 is not None and "carries md0, 12 events behind" in sdb1.plain
        screen = "\n".join(screen_lines(app))
        assert "sdb1 400.1G md0, 12 behind" in screen  # squeezed: the type goes first
        assert "sdc1 oldhost:backup, not assembled" in screen


def test_a_narrow_pane_keeps_the_carriers_array_and_state() -> None:
    """At 80x24 the tree has about 35 columns: the end was cut ("carries oldhost:backup,")."""
    from rich.text import Text

    from widgets.label_fit import squeeze_label

    stray = Text("sdc1  400.1G  carries oldhost:backup, not assembled  Linux RAID")
    assert squeeze_label(stray, 45).plain == "sdc1 400.1G oldhost:backup, not assembled"
    assert squeeze_label(stray, 35).plain == "sdc1 oldhost:backup, not assembled"
    copy = Text("sdb1  400.1G  carries md0, 12 events behind  Linux RAID")
    assert squeeze_label(copy, 42).plain == "sdb1 400.1G carries md0, 12 events behind"
    assert squeeze_label(copy, 35).plain == "sdb1 400.1G md0, 12 behind"
    plain = Text("sda1  400.1G  Linux RAID")  # no mark: as before
    assert squeeze_label(plain, 20).plain == "sda1 400.1G Linux RAID"
