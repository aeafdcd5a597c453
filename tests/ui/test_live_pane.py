"""Issue 26 in the TUI: the Live tab (key l) shows the selected array's and its members' I/O
from the session's samples (busiest first below) and the kernel lines naming the selection;
the Wear tab shows a disk's whole SMART table and its self-test log. Simulated raid6-wd: sdb
failed (medium error at LBA 1234567890), md0 rebuilds onto sdf1."""

from __future__ import annotations

from textual.widgets import Static

from app.ui.app import RaidmanApp
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import plain, wait_for, wait_ready


async def test_live_tab_io_and_kernel_log_follow_the_selection() -> None:
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid6-wd", clock=clock)
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0.05)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_ready(pilot)
        app.go_to("md0")
        await pilot.press("l")
        body = app.main.query_one("#io-body", Static)
        for _ in range(3):  # the session samples at each tick; the clock moves a second
            clock.advance(1)
            await pilot.pause(0.2)
        await wait_for(pilot, lambda: "sdf1" in plain(body, 200), timeout=10)
        text = plain(body, 200)
        rows = text.splitlines()
        member_rows = [r.split()[0] for r in rows[2:8]]
        assert member_rows == ["sdf1", "sda1", "sde1", "sdd1", "sdc1", "sdb1"]  # by slot
        sdf1 = next(r for r in rows if r.split()[:1] == ["sdf1"])
        assert "24.4M/s" in sdf1  # the rebuild writes onto the spare
        # issue 39: busy disks show their utilisation and latency (util was 0 % at 49 IOPS),
        # from the simulator's disk model: 24.4 MiB/s of a WD Red's 146 MiB/s, 512 KiB requests
        _name, _read, _write, iops, util, wait = sdf1.split()[:6]
        assert int(iops) > 0 and 10 <= int(util.rstrip("%")) <= 25 and 2.0 <= float(wait) <= 5.0
        busiest = rows[rows.index(next(r for r in rows if r.startswith("busiest"))) + 1 :]
        # idle after the busy ones: the failed disk, and md0 itself (a rebuild is md's own
        # I/O: md0's counters, now shown, stay at 0)
        names = [r.split()[0] for r in busiest if r.strip()]
        assert set(names[-2:]) == {"md0", "sdb"}, busiest
        md0 = next(r for r in busiest if r.split()[0] == "md0")
        assert "no counter" not in md0 and md0.split()[4] == "0%"

        log = app.main.query_one("#klog-body", Static)
        await wait_for(pilot, lambda: "Disk failure on sdb1" in plain(log, 200), timeout=10)
        shown = plain(log, 200)
        assert "md: recovery of RAID array md0" in shown
        assert "I/O error, dev sdb" not in shown  # sdb's own line is not md0's
        app.go_to("sdb")
        await wait_for(pilot, lambda: "I/O error, dev sdb" in plain(log, 200), timeout=10)


async def test_wear_tab_shows_the_table_and_the_failed_self_test() -> None:
    backend = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0.05)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: "sdb" in app.hostview.smart_seen, timeout=10)
        app.go_to("sdb")
        await pilot.press("w")
        smart = app.main.query_one("#wear-smart", Static)
        await wait_for(pilot, lambda: "Reallocated_Sector_Ct" in plain(smart, 200), timeout=10)
        text = plain(smart, 200)
        assert "last self-test (Short offline) FAILED at LBA 1234567890" in text
        row = next(r for r in text.splitlines() if "Reallocated_Sector_Ct" in r)
        assert row.split()[-1] == "FAILING"
        assert "Error log: 1 entry" in text


async def test_hidden_live_tab_costs_a_sample_one_append_and_catches_up_when_shown(
    monkeypatch: object,
) -> None:
    """Issue 44: hidden, the Live tab neither renders its rows on a cursor move (1,200 rows on
    big, each jump) nor keeps every device's sparkline each second; shown, each device's
    history is what it would have kept: its rates over the samples it was handed."""
    import pytest

    import widgets.io_pane as io_pane
    from widgets.io_pane import IoPane

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    drawn: list[str | None] = []
    real = io_pane.io_text

    def counted(*args: object, **kw: object) -> object:
        drawn.append(args[3] if len(args) > 3 else None)  # type: ignore[arg-type]
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(io_pane, "io_text", counted)
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid6-wd", clock=clock)
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0.05)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_ready(pilot)
        pane = app.main.query_one(IoPane)
        by_sample: dict[int, float] = {}  # what each sample handed out for sdf1

        def handed(v: object) -> None:
            rates = getattr(v, "rates", {})
            if "sdf1" in rates:
                by_sample[v.sample_count] = rates["sdf1"].total_bytes_s  # type: ignore[attr-defined]

        app.watch(app, "view", handed)
        for _ in range(4):
            clock.advance(1)
            await pilot.pause(0.2)
        app.go_to("md0")
        app.go_to("sdb")
        await pilot.pause(0.1)
        assert drawn == []  # hidden: nothing drawn, not even on the cursor's moves
        await pilot.press("l")
        await wait_for(pilot, lambda: bool(drawn), timeout=10)
        seen = [by_sample[k] for k in sorted(by_sample)]
        assert len(seen) >= 2
        assert list(pane._catch_up()["sdf1"])[-len(seen) :] == seen
