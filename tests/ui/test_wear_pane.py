"""WearPane in a tiny App, fed from a real SnapshotStore filled through its public API with the
source article's numbers: sdd's Total_LBAs_Written went 603,302,987 -> 3,763,859,973 during a
"recover" of md0 (and Wear_Leveling_Count dropped one point); the other members barely moved."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import Static

from app.model.devices import Disk, MdArray, MdMember
from app.model.smart import SmartAttribute, SmartReading
from app.monitor import counters_of
from app.wear.delta import array_wear
from app.wear.plot import load_disk_history
from app.wear.records import SyncMember
from app.wear.snapshots import SnapshotStore
from widgets.wear_pane import WearPane

CAP = 500_107_862_016  # Samsung 850 EVO 500GB
T0 = 1_714_560_000.0
SYNC_START = T0 + 3600
SYNC_END = SYNC_START + 2280  # 38 minutes
BEFORE, AFTER = 603_302_987, 3_763_859_973
OTHERS = {"sda": "S2R-A", "sdb": "S2R-B", "sdc": "S2R-C"}


def reading(
    disk: str, serial: str, lbas: int, wlc: int, *, model: str = "Samsung SSD 850 EVO 500GB"
) -> SmartReading:
    return SmartReading(
        device=disk,
        available=True,
        protocol="ATA",
        model=model,
        serial=serial,
        health="PASSED",
        temperature_c=33,
        power_on_hours=12_345,
        capacity_bytes=CAP,
        attributes=(
            SmartAttribute(9, "Power_On_Hours", 97, 97, 0, 12_345),
            SmartAttribute(177, "Wear_Leveling_Count", wlc, wlc, 0, 40),
            SmartAttribute(241, "Total_LBAs_Written", 99, 99, 0, lbas),
        ),
    )


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SnapshotStore]:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))
    s = SnapshotStore.open()
    assert s.path == tmp_path / "state.db"
    # an older check: reads only, a few MB written
    chk = s.start_sync("md0", "check", [SyncMember("sdd", "sdd", "S2R-D")], T0 - 7200)
    s.record_snapshot(
        "S2R-D",
        "sdd",
        counters_of(reading("sdd", "S2R-D", 603_290_000, 99)),
        ts=T0 - 7200,
        reason="sync-start",
        sync_id=chk,
    )
    s.record_snapshot(
        "S2R-D",
        "sdd",
        counters_of(reading("sdd", "S2R-D", 603_300_000, 99)),
        ts=T0 - 3600,
        reason="sync-end",
        sync_id=chk,
    )
    s.end_sync(chk, T0 - 3600)
    # the recover onto sdd
    members = [SyncMember("sdd", "sdd", "S2R-D")] + [
        SyncMember(d, d, ser) for d, ser in OTHERS.items()
    ]
    sid = s.start_sync("md0", "recover", members, SYNC_START)
    s.record_snapshot("S2R-D", "sdd", counters_of(reading("sdd", "S2R-D", 603_302_987, 99)), ts=T0)
    for ts, lbas, wlc, why in (
        (SYNC_START, BEFORE, 99, "sync-start"),
        (SYNC_END, AFTER, 98, "sync-end"),
    ):
        s.record_snapshot(
            "S2R-D",
            "sdd",
            counters_of(reading("sdd", "S2R-D", lbas, wlc)),
            ts=ts,
            reason=why,
            sync_id=sid,
        )
    for i, (d, ser) in enumerate(OTHERS.items()):
        base = 1_000_000_000 + i
        for ts, lbas, why in (
            (SYNC_START, base, "sync-start"),
            (SYNC_END, base + 40_000, "sync-end"),
        ):
            s.record_snapshot(
                ser,
                d,
                counters_of(reading(d, ser, lbas, 99)),
                ts=ts,
                reason=why,
                sync_id=sid,
            )
    s.end_sync(sid, SYNC_END)
    s.record_snapshot(
        "S2R-D",
        "sdd",
        counters_of(reading("sdd", "S2R-D", AFTER + 1000, 98)),
        ts=SYNC_END + 3 * 3600,
    )
    yield s
    s.close()


class PaneApp(App[None]):
    def compose(self) -> ComposeResult:
        yield WearPane(id="wear")


def text_of(pane: WearPane, id_: str) -> str:
    w = pane.query_one(f"#{id_}", Static)
    c = w.content
    return c.plain if isinstance(c, Text) else str(c)


def styles_of(pane: WearPane, id_: str, needle: str) -> set[str]:
    """The styles of the spans that cover the line containing ``needle``."""
    c = pane.query_one(f"#{id_}", Static).content
    assert isinstance(c, Text)
    start = c.plain.index(needle)
    end = start + len(needle)
    return {str(s.style) for s in c.spans if s.start <= start and s.end >= end}


def visible(pane: WearPane) -> set[str]:
    return {w.id or "" for w in pane.query(Static) if w.display}


SDD = Disk("sdd", CAP, model="Samsung SSD 850 EVO 500GB", serial="S2R-D", transport="sata")
MD0 = MdArray(
    "md0",
    "raid5",
    raid_disks=4,
    members=tuple(MdMember(d, i, ("in_sync",)) for i, d in enumerate(["sda", "sdb", "sdc", "sdd"])),
)
REBUILD_LINE = "this rebuild wrote 1.5 TiB to sdd = 3.2 × its capacity, 1 wear point"


def hm(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%H:%M")


async def test_disk_view_shows_smart_plot_and_the_rebuild(store: SnapshotStore) -> None:
    history, wear = load_disk_history(store, "S2R-D", ["md0"])
    assert len(history) == 6 and len(wear) == 2
    app = PaneApp()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(WearPane)
        assert visible(pane) == {"wear-empty"}
        pane.show_disk(SDD, reading("sdd", "S2R-D", AFTER + 1000, 98), history, wear)
        await pilot.pause()
        assert {"wear-smart", "wear-plot", "wear-legend"} <= visible(pane)
        assert "wear-syncs" not in visible(pane)

        smart = text_of(pane, "wear-smart")
        assert "health        PASSED" in smart
        assert "temperature   33 °C" in smart
        assert "12,345 h" in smart
        # (3,763,859,973 + 1000) LBAs × 512 B = 1.927 TB
        assert "bytes written 1.93 TB (1.8 TiB) · 241 Total_LBAs_Written × 512 B" in smart
        assert "raw 3,763,860,973" in smart
        assert (
            "wear used     2 % of rated life · the drive's own estimate: 177 Wear_Leveling_Count (normalized 98)"
            in smart
        )

        title = text_of(pane, "wear-plot-title")
        total = (AFTER + 1000 - 603_290_000) * 512
        assert title.startswith("Bytes written over time  +1.62 TB")
        assert "6 snapshots" in title
        assert pane.plot is not None and pane.plot.total == total

        plot_lines = text_of(pane, "wear-plot").splitlines()
        assert len(plot_lines) == 6  # 4 rows, marks, time axis
        assert all(len(line) <= 78 for line in plot_lines)  # fits the 80-column screen
        marks = plot_lines[4]
        check_col, recover_col = marks.index("▲"), marks.index("◆")
        assert check_col < recover_col
        # the jump happens during the recover: flat before it, full at the top after
        assert set(plot_lines[0][:recover_col]) == {" "}
        assert plot_lines[0][-1] == "█"

        legend = text_of(pane, "wear-legend")
        assert "◆ recover md0 " in legend
        assert f"{hm(SYNC_START)}–{hm(SYNC_END)} (38m 00s) · finished" in legend
        assert REBUILD_LINE in legend
        assert "▲ check md0" in legend
        assert "to sda" not in legend  # only this disk's share
        assert "red" in styles_of(pane, "wear-legend", REBUILD_LINE)


async def test_array_view_lists_syncs_newest_first_with_each_member(
    store: SnapshotStore,
) -> None:
    app = PaneApp()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(WearPane)
        pane.show_array(MD0, array_wear(store, "md0"))
        await pilot.pause()
        assert visible(pane) == {"wear-title", "wear-syncs"}
        assert text_of(pane, "wear-title").startswith("Wear · md0  (raid5, 4 members)")
        body = text_of(pane, "wear-syncs")
        assert body.startswith("2 recorded syncs, newest first")
        assert body.index("recover md0") < body.index("check md0")
        assert REBUILD_LINE in body
        # the others barely moved: 40,000 LBAs = 19.5 MiB, no colour
        for d in OTHERS:
            line = f"this rebuild wrote 19.5 MiB to {d} = 0.0 × its capacity"
            assert line in body
            assert not {"red", "yellow"} & styles_of(pane, "wear-syncs", line)
        assert "red" in styles_of(pane, "wear-syncs", REBUILD_LINE)
        # the check: (603,300,000 - 603,290,000) × 512 = 4.9 MiB
        assert "this check wrote 4.9 MiB to sdd = 0.0 × its capacity" in body

        pane.show_array(MdArray("md1", "raid1"), [])
        await pilot.pause()
        assert "No sync of md1 recorded yet" in text_of(pane, "wear-syncs")


async def test_half_a_capacity_is_yellow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))
    s = SnapshotStore.open()
    sid = s.start_sync("md2", "resync", [SyncMember("sde", "sde", "X")], T0)
    half = CAP // 2 // 512 + 1000  # a little over half the disk, in LBAs
    for ts, lbas, why in ((T0, 0, "sync-start"), (T0 + 600, half, "sync-end")):
        s.record_snapshot(
            "X", "sde", counters_of(reading("sde", "X", lbas, 99)), ts=ts, reason=why, sync_id=sid
        )
    s.end_sync(sid, T0 + 600)
    app = PaneApp()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(WearPane)
        pane.show_array(MdArray("md2", "raid1"), array_wear(s, "md2"))
        await pilot.pause()
        line = "this resync wrote 232.9 GiB to sde = 0.5 × its capacity"
        assert line in text_of(pane, "wear-syncs")
        assert "yellow" in styles_of(pane, "wear-syncs", line)
    s.close()


@pytest.mark.parametrize(
    ("disk", "reason", "expect"),
    [
        (
            Disk("sdx", 1 << 40, transport="usb"),
            "USB bridge (JMicron JMS578) does not pass SMART through (try -d sat)",
            "SMART unavailable: USB bridge (JMicron JMS578) does not pass SMART through",
        ),
        (
            Disk("vda", 1 << 34, transport="virtio"),
            "no SMART: Unable to detect device type (virtual, loop or bridged device)",
            "virtio disk: the hypervisor does not pass SMART through",
        ),
        (
            Disk("sdb", 1 << 40, transport="sata"),
            "smartctl not installed (apt install smartmontools)",
            "SMART unavailable: smartctl not installed (apt install smartmontools)",
        ),
    ],
)
async def test_unavailable_smart_says_why(disk: Disk, reason: str, expect: str) -> None:
    app = PaneApp()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(WearPane)
        pane.show_disk(disk, SmartReading(disk.name, False, reason=reason, exit_status=2), [], [])
        await pilot.pause()
        smart = text_of(pane, "wear-smart")
        assert smart.startswith("SMART unavailable: ")
        assert expect in smart
        assert "bit 1 (2): device open failed" in smart
        assert "health" not in smart
        assert "Not enough history for a plot yet: 0 snapshot(s)" in text_of(pane, "wear-plot")
        assert "No sync recorded" in text_of(pane, "wear-legend")


async def test_error_bits_on_an_answering_disk_and_unknown_unit() -> None:
    r = SmartReading(
        "sdc",
        True,
        reason="some SMART command failed (exit status 196)",
        model="SomeSSD",
        health="PASSED",
        attributes=(SmartAttribute(241, "Host_Writes", 100, 100, 0, 4242),),
        exit_status=4 | 64 | 128,
    )
    app = PaneApp()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(WearPane)
        pane.show_disk(Disk("sdc", CAP, transport="sata"), r, [], [])
        await pilot.pause()
        smart = text_of(pane, "wear-smart")
        assert "raw 4,242 · 241 Host_Writes (unit unknown: raw value, not converted)" in smart
        assert "wear used     not reported by this disk" in smart
        assert "smartctl: some SMART command failed (exit status 196)" in smart
        assert "bit 2 (4)" in smart and "bit 6 (64)" in smart
        assert "red" in styles_of(
            pane, "wear-smart", "bit 7 (128): the self-test log contains errors"
        )


async def test_show_nothing_and_not_read_yet() -> None:
    app = PaneApp()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(WearPane)
        pane.show_disk(SDD, None, [], [])
        await pilot.pause()
        assert text_of(pane, "wear-smart") == "SMART not read yet."
        pane.show_nothing("Partitions have no wear of their own: select the disk sdd.")
        await pilot.pause()
        assert visible(pane) == {"wear-empty"}
        assert pane.plot is None
        assert text_of(pane, "wear-empty").startswith("Partitions have no wear")


async def test_plot_follows_the_pane_width(store: SnapshotStore) -> None:
    history, wear = load_disk_history(store, "S2R-D", ["md0"])
    app = PaneApp()
    async with app.run_test(size=(120, 30)) as pilot:
        pane = app.query_one(WearPane)
        pane.show_disk(SDD, reading("sdd", "S2R-D", AFTER, 98), history, wear)
        await pilot.pause()
        assert pane.plot is not None
        wide = pane.plot.width
        assert 100 <= wide <= 118
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        assert pane.plot is not None and pane.plot.width < wide and pane.plot.width <= 78


def test_smart_text_shows_rated_tbw_used_where_the_model_is_known() -> None:
    """850 EVO 500 GB: Samsung's warranty table rates it 150 TBW (app.model.endurance)."""
    from widgets.wear_pane import smart_text

    disk = Disk(name="sdb", size_bytes=500 * 10**9, model="Samsung SSD 850 EVO 500GB")
    worn = SmartReading(
        "sdb",
        True,
        model="Samsung SSD 850 EVO 500GB",
        health="PASSED",
        attributes=(SmartAttribute(241, "Total_LBAs_Written", 99, 99, 0, 412 * 10**12 // 512),),
    )
    text = smart_text(disk, worn).plain
    assert (
        "rated TBW     412 TB written of 150 TBW rated = 275 % · host writes over the maker's rating for Samsung 850 EVO 500 GB"
        in text
    )
    unknown = SmartReading("sdb", True, model="Samsung SSD 840 Series", attributes=worn.attributes)
    assert "rated TBW" not in smart_text(disk, unknown).plain


async def test_array_view_shows_the_forecast_and_each_partition_members_own_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22 (items 4, 5): the forecast made as the sync began beside what happened; per
    member the kernel's count of the partition itself (× its size), SMART's of its whole disk."""
    from app.model.sync_model import MemberWrite, SyncForecast
    from app.wear.forecast import RecordedForecast

    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))
    s = SnapshotStore.open()
    mib = 1 << 20
    sid = s.start_sync(
        "md1", "recover", [SyncMember("sdd1", "sdd", "X")], T0,
        kernel_start={"sdd1": 0, "sdd": 0}, capacities={"sdd1": 256 * mib, "sdd": CAP},
    )  # fmt: skip
    s.set_kernel_writes(
        sid, {"sdd1": 0, "sdd": 0}, {"sdd1": 255 * mib, "sdd": 300 * mib},
        {"sdd1": 256 * mib, "sdd": CAP},
    )  # fmt: skip
    fc = SyncForecast(
        array="md1", action="recover", speed_kib_s=68, speed_why="md's limit",
        duration_s_low=3900.0, duration_s_high=3900.0,
        members=(MemberWrite("sdd1", 256 * mib, 256 * mib, 256 * mib),),
    )  # fmt: skip
    s.set_sync_forecast(sid, RecordedForecast.of(fc))
    s.end_sync(sid, T0 + 3720)
    app = PaneApp()
    async with app.run_test(size=(120, 24)) as pilot:
        pane = app.query_one(WearPane)
        pane.show_array(MdArray("md1", "raid1"), array_wear(s, "md1"))
        await pilot.pause()
        body = text_of(pane, "wear-syncs")
        assert "forecast 1h 05m / 256.0 MiB · took 1h 02m / 255.0 MiB" in body
        assert "kernel counter: this rebuild wrote 255.0 MiB to sdd1 = 1.00 × its size" in body
        assert "to sdd (whole disk, all its partitions)" in body
        # the disk's view: its member's own count beside the disk's SMART figure
        pane.show_disk(Disk("sdd", CAP, serial="X"), None, [], array_wear(s, "md1"))
        await pilot.pause()
        legend = text_of(pane, "wear-legend")
        assert "kernel counter: this rebuild wrote 255.0 MiB to sdd1 = 1.00 × its size" in legend
    s.close()


async def test_disk_without_a_write_counter_says_it_has_none() -> None:
    """Snapshots were taken, none with a write counter: no plot will ever come, and the pane
    says why instead of "not enough history yet"."""
    from app.wear.records import Snapshot

    app = PaneApp()
    history = [Snapshot(i, 1000.0 * i, "S1", "sdx", "periodic", None, {}) for i in range(3)]
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(WearPane)
        pane.show_disk(Disk("sdx", 1 << 40, serial="S1"), None, history, [])
        await pilot.pause()
        plot = text_of(pane, "wear-plot")
        assert "reports no write counter" in plot and "Not enough history" not in plot


def test_two_wear_figures_say_their_source_and_which_counts() -> None:
    """ "64 % of rated life" (the drive's wear attribute) beside "85 % of TBW" (host writes
    over the maker's rating): each says where it comes from, and which one raidman uses."""
    from widgets.wear_pane import smart_text

    disk = Disk("sda", 500 * 10**9, model="Samsung SSD 850 EVO 500GB")
    r = SmartReading(
        "sda",
        True,
        model="Samsung SSD 850 EVO 500GB",
        health="PASSED",
        attributes=(
            SmartAttribute(177, "Wear_Leveling_Count", 36, 36, 0, 1000),
            SmartAttribute(241, "Total_LBAs_Written", 99, 99, 0, 1275 * 10**11 // 512),
        ),
    )
    text = " ".join(smart_text(disk, r).plain.split())
    assert "64 % of rated life · the drive's own estimate: 177 Wear_Leveling_Count" in text
    assert "= 85 % · host writes over the maker's rating" in text
    assert "two sources disagree: raidman's endurance figure (metrics, records) is 85 %" in text
