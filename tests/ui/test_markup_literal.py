"""Machine data is never read as markup (issue 29, item 3): a device named ``sd[a]`` and a
model, filesystem label and mount point ``[bold]x`` show literally, brackets and all, in the
tree, Details, Findings and the plan preview. Read as markup, ``sd[a]`` loses its ``[a]`` (an
unknown style, dropped) and ``[bold]x`` becomes a bold ``x``.

The checks read the screen as the terminal shows it (the compositor's strips), not a widget's
content: markup is parsed where the text is rendered."""

from __future__ import annotations

import re

import pytest

from app.plans.builders.members import build_remove
from app.plans.geometry import PlanError
from app.ui.app import RaidmanApp
from backends.simulated.backend import SimulatedBackend
from backends.simulated.clock import SimClock
from backends.simulated.records import SimArray, SimFS, SimMember
from backends.simulated.scenarios import (
    GPT_RAID,
    add_array,
    add_partition,
    finalize,
    new_state,
    wd_red,
)
from tests.ui.helpers import screen_lines, wait_for, wait_ready

NAMES = ("sd[a]", "sdb", "sdc", "sdd")
MARKUP = "[bold]x"
SIZE = (200, 50)


def bracket_backend() -> SimulatedBackend:
    """RAID-5 md0 of four disks: ``sd[a]``'s member faulty and its partition misaligned (a
    finding names it), ``sdb``'s model and md0's filesystem label and mount point ``[bold]x``."""
    clock = SimClock.manual()
    st = new_state("box", clock.now())
    comp_kib = 100 * 1024 * 1024
    for i, dn in enumerate(NAMES):
        st.disks[dn] = wd_red(dn, f"WD-X{i}", 1000)
        st.disks[dn].ptuuid = st.new_uuid(dn)
        start = 63 if dn == "sd[a]" else 2048  # misaligned on a 4K disk: a finding names it
        add_partition(st, dn, 1, start, comp_kib * 2 + 262144, GPT_RAID, "Linux RAID")
    st.disks["sdb"].model = MARKUP
    mem = [SimMember("sd[a]1", 0, None, {"faulty"})]
    mem += [SimMember(f"{d}1", i, i, {"in_sync"}) for i, d in enumerate(NAMES[1:], 1)]
    add_array(
        st,
        SimArray(
            name="md0",
            level="raid5",
            raid_disks=4,
            members=mem,
            component_kib=comp_kib,
            layout="left-symmetric",
            array_name="box:0",
        ),
    )
    st.filesystems["md0"] = SimFS(
        "md0",
        "ext4",
        st.new_uuid("fs"),
        3 * comp_kib * 1024,
        label=MARKUP,
        mountpoints=(f"/srv/{MARKUP}",),
        used_bytes=1 << 30,
    )
    return SimulatedBackend(finalize(st), clock, "brackets")


def shown(app: RaidmanApp) -> str:
    return "\n".join(screen_lines(app))


async def test_brackets_in_machine_data_show_literally() -> None:
    app = RaidmanApp(bracket_backend(), sample_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        tree = shown(app)
        assert "sd[a]1" in tree  # the partition and the member under md0
        assert f"/srv/{MARKUP}" in tree  # the filesystem under md0
        assert app.go_to("sdb")
        await pilot.pause()
        assert MARKUP in shown(app)  # sdb's model, in its tree line and in Details
        assert app.go_to("sd[a]")
        await pilot.pause()
        details = screen_lines(app)
        assert any("sd[a]" in line and "/dev/sd[a]" in line for line in details), "Details' title"
        assert app.go_to("md0")
        await pilot.pause()
        assert any("sd[a]1" in line and "faulty" in line for line in screen_lines(app)), (
            "md0's members table in Details"
        )
        await wait_for(pilot, lambda: any(f.device.startswith("sd[a]") for f in app.findings), 10)
        app.main.action_show_tab("findings")
        finding = next(f for f in app.findings if f.device.startswith("sd[a]"))
        await pilot.pause()
        row = next(line for line in screen_lines(app) if finding.title[:30] in line)
        assert finding.device in row.split(finding.title[:30])[0], "the table's device cell"

        # a name that is no kernel device name never becomes a step (app/plans/ops): the plan
        # is refused, and the reason names it as it is
        with pytest.raises(PlanError, match=re.escape("'/dev/sd[a]1' is not a device path")):
            build_remove(app.machine, "md0", "sd[a]1")  # type: ignore[arg-type]
