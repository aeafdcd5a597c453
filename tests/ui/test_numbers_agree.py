"""Numbers on one screen agree (issue 24 item 8): the Details of an array during a check and
its sync block show one mismatch_cnt; a partition's last sector is inclusive as fdisk prints
End; the card's limit is the array's own sync_speed_max once set; `report` calls an IMSM
container by what it is and lists members in slot order."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from app.cli import main
from app.model.devices import Partition
from app.sync.limits import sync_limits
from app.sync.tracker import SyncTracker
from backends.simulated import SimClock, SimulatedBackend
from widgets.device_detail import array_view, partition_view


def _text(renderable: object, width: int = 120) -> str:
    console = Console(file=StringIO(), width=width, color_system=None, record=True)
    console.print(renderable)
    return console.export_text()


def test_details_mismatch_cnt_is_one_number_during_a_check() -> None:
    clock = SimClock.manual()
    be = SimulatedBackend.from_scenario("imsm", clock=clock)
    be.run(("tee", "/sys/block/md126/md/sync_action"), stdin="check\n")
    clock.advance(30)
    m = be.probe()
    a = m.array("md126")
    assert a is not None and a.sync is not None
    text = _text(array_view(m, a))
    values = {line.split()[-1] for line in text.splitlines() if "mismatch_cnt" in line}
    assert values == {"0"}, text


def test_partition_last_sector_is_inclusive() -> None:
    # fdisk: Start 2048, Sectors 1048576 → End 1050623
    p = Partition("sda1", "sda", number=1, size_bytes=1048576 * 512, start_sector=2048)
    assert p.last_sector == 1050623
    from app.model.devices import Machine

    text = _text(partition_view(Machine(host="h", kernel="k"), p))
    assert "last sector 1,050,623" in text and "end sector" not in text


def test_card_limit_follows_the_arrays_own_sync_speed_max() -> None:
    clock = SimClock.manual()
    be = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    tr = SyncTracker()
    tr.update(be.sample())
    assert be.run(("tee", "/sys/block/md127/md/sync_speed_max"), stdin="300000\n").returncode == 0
    clock.advance(1)
    tr.update(be.sample())
    (v,) = tr.views()
    assert v.max_speed_kib_s == 300000
    lim = sync_limits(v, be.probe().array("md127"), None)
    assert "… 293.0 MiB/s (md127's own)" in lim.limits_text()  # 300,000 KiB/s, the array's own


def test_report_container_and_slot_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))
    assert main(["report", "--demo", "imsm", "--no-smart", "--no-audit"]) == 0
    out = capsys.readouterr().out
    head = next(line for line in out.splitlines() if line.lstrip().startswith("md127"))
    assert "inactive" not in head and "external:imsm" in head and "holds md126, md125" in head
    lines = out.splitlines()
    i = lines.index(head)
    assert [ln.split()[2] for ln in lines[i + 1 : i + 3]] == ["sda", "sdb"]
    assert all("container member" in ln for ln in lines[i + 1 : i + 3])


async def test_mdstat_tab_follows_the_samples() -> None:
    """The banner follows the 1 Hz sample; the mdstat tab showed the last probe's text (every
    10 s) and lagged it: while the tab is shown it is read again at each sample."""
    import re

    from textual.widgets import Log

    from app.format import percent
    from app.ui.app import RaidmanApp
    from tests.ui.helpers import wait_for, wait_ready
    from widgets.header_banner import HeaderBanner

    clock = SimClock.manual()
    app = RaidmanApp(
        SimulatedBackend.from_scenario("raid10-evo", clock=clock),
        probe_interval=0,
        sample_interval=0,
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        app.show_tab("mdstat")
        await pilot.pause()
        clock.advance(60)  # ~+2 % of the resync, no probe meanwhile
        n = app.sample_count
        app.refresh_sample()
        await wait_for(pilot, lambda: app.sample_count > n)
        a = app.machine.array("md127") if app.machine else None
        assert a is not None and a.sync is not None
        banner = percent(a.sync.fraction)
        assert banner in app.main.query_one(HeaderBanner).shown_text

        def shown() -> str:
            return "\n".join(str(x) for x in app.main.query_one("#mdstat-body", Log).lines)

        # mdstat's position (curr_resync) runs a little ahead of sync_completed's, which the
        # banner shows: one tenth apart at most, not the probe interval's 2 %
        await wait_for(pilot, lambda: bool(re.search(r"=\s*([\d.]+)%", shown())))
        await pilot.pause(0.2)
        m = re.search(r"=\s*([\d.]+)%", shown())
        assert m is not None, shown()
        assert abs(float(m.group(1)) - float(banner.rstrip("%"))) < 0.11, (shown(), banner)
