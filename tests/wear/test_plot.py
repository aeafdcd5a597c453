"""app.wear.plot: bytes-written history -> plot columns and sync marks; counter and exit-bit text."""

from __future__ import annotations

from datetime import UTC

from app.model.smart_units import WriteCounter
from app.wear.plot import (
    BLOCKS,
    counter_text,
    exit_status_lines,
    share_level,
    span_text,
    write_plot,
)
from app.wear.records import Snapshot, SyncEvent, SyncMember

T0 = 1_714_560_000.0  # 2024-05-01 10:40:00 UTC
LBA = 512


def snap(i: int, ts: float, lbas: int | None, *, raw_only: bool = False) -> Snapshot:
    counters: dict[str, object] = {"raw": lbas}
    if not raw_only:
        counters["bytes_written"] = None if lbas is None else lbas * LBA
    return Snapshot(i, ts, "S1", "sdd", "periodic", None, counters)


def event(i: int, start: float, end: float | None, action: str = "recover") -> SyncEvent:
    return SyncEvent(
        i, "md0", action, start, end, "finished" if end else None, (SyncMember("sdd", "sdd", "S1"),)
    )


def test_rebuild_is_a_step_at_the_sync_and_marked_under_it() -> None:
    """The source article's member: 603,302,987 -> 3,763,859,973 LBAs during one recover."""
    history = [
        snap(1, T0, 603_000_000),
        snap(2, T0 + 3600, 603_302_987),  # sync start
        snap(3, T0 + 3600 + 2280, 3_763_859_973),  # sync end
        snap(4, T0 + 4 * 3600, 3_763_900_000),
    ]
    ev = event(7, T0 + 3600, T0 + 3600 + 2280)
    plot = write_plot(history, [ev], 48)
    assert plot is not None
    assert plot.width == 48 and len(plot.values) == 48
    assert plot.unit == "bytes" and plot.points == 4
    assert plot.total == (3_763_900_000 - 603_000_000) * LBA
    assert plot.values == tuple(sorted(plot.values))  # a lifetime counter only grows
    (mark,) = plot.marks
    # 48 columns over 4 h = 5 min each: the sync runs from 1 h (col 12) to 1 h 38 min (col 19)
    assert (mark.first_col, mark.last_col) == (12, 19)
    first, last = 12, 19
    # before the sync the disk had written ~155 MB; at the sync's end column the jump is there
    assert plot.values[first] == (603_302_987 - 603_000_000) * LBA
    assert plot.values[last] == (3_763_859_973 - 603_000_000) * LBA
    line = plot.marker_line()
    assert line.index("▲") == 12
    assert line[13:20] == "─" * 7 and line[20:] == ""

    rows = plot.rows(4)
    assert len(rows) == 4 and all(len(r) == 48 for r in rows)
    assert rows[0][-1] == BLOCKS[8]  # the peak fills the top row
    assert set(rows[-1][:12]) == {" "}  # 155 MB against 1.6 TB is below one eighth of a cell
    assert plot.axis_line(UTC).startswith("05-01 10:40") and plot.axis_line(UTC).endswith("14:40")
    assert len(plot.axis_line(UTC)) == 48
    assert mark.label(UTC) == "▲ recover md0 05-01 11:40–12:18"


def test_several_syncs_get_distinct_symbols_and_one_outside_the_history() -> None:
    history = [snap(1, T0, 0), snap(2, T0 + 1000, 10), snap(3, T0 + 2000, 20)]
    events = [
        event(2, T0 + 1500, None, "check"),  # running: to the end of the plot
        event(1, T0 + 100, T0 + 200, "resync"),
        event(3, T0 - 9000, T0 - 8000, "repair"),  # before the history
    ]
    plot = write_plot(history, events, 20)
    assert plot is not None
    by_action = {m.sync.action: m for m in plot.marks}
    # symbols follow start order: repair, resync, check
    assert [m.sync.action for m in plot.marks] == ["repair", "resync", "check"]
    assert by_action["repair"].first_col is None
    assert "outside the plotted time" in by_action["repair"].label(UTC)
    assert by_action["check"].last_col == 19
    assert by_action["check"].label(UTC).endswith("–now")
    line = plot.marker_line()
    assert line[by_action["resync"].first_col or 0] == by_action["resync"].symbol == "◆"
    assert line[by_action["check"].first_col or 0] == "●"
    assert "▲" not in line  # the repair is not drawn


def test_no_plot_without_two_timed_points_and_raw_fallback() -> None:
    assert write_plot([], [], 40) is None
    assert write_plot([snap(1, T0, 5)], [], 40) is None
    assert write_plot([snap(1, T0, 5), snap(2, T0, 9)], [], 40) is None  # same instant
    assert write_plot([snap(1, T0, None), snap(2, T0 + 60, None)], [], 40) is None
    raw = write_plot([snap(1, T0, 5, raw_only=True), snap(2, T0 + 60, 9, raw_only=True)], [], 10)
    assert raw is not None and raw.unit == "raw" and raw.total == 4


def test_counter_text_names_source_and_unit() -> None:
    assert (
        counter_text(WriteCounter(1024, 2, "241 Total_LBAs_Written", "LBA×512"))
        == "241 Total_LBAs_Written × 512 B"
    )
    assert (
        counter_text(WriteCounter(512_000, 1, "nvme:data_units_written", "512,000 B"))
        == "nvme:data_units_written × 512,000 B"
    )
    assert "unit unknown" in counter_text(WriteCounter(None, 7, "241 Host_Writes", "unknown"))


def test_exit_status_bits_and_share_levels() -> None:
    assert exit_status_lines(0) == [] and exit_status_lines(None) == []
    lines = exit_status_lines(4 | 64)
    assert len(lines) == 2
    assert lines[0].startswith("bit 2 (4):") and lines[1].startswith("bit 6 (64):")
    assert "DISK FAILING" in exit_status_lines(8)[0]
    assert [share_level(s) for s in (None, 0.01, 0.5, 0.99, 1.0, 3.2)] == [
        "muted",
        "ok",
        "warning",
        "warning",
        "error",
        "error",
    ]


def test_span_text_across_midnight() -> None:
    assert span_text(T0, T0 + 2280, UTC) == "05-01 10:40–11:18"
    late = 1_714_607_400.0  # 2024-05-01 23:50 UTC
    assert span_text(late, late + 3000, UTC) == "05-01 23:50–05-02 00:40"
