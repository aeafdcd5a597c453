"""The Details pane of a raid LV: its health in lvm's words, each image with its PVs and
dm-raid's state, the sync (progress; the speed and ETA are `report`'s, from two looks), the
last check's mismatches and the recovery rates."""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from app.format import human_bytes, percent, speed
from app.model.devices import LogicalVolume
from app.model.lvm_raid import DEVICE_HEALTH
from app.sync.dm_raid import raid_sync

_STYLE = {"A": "green", "a": "yellow", "D": "bold red"}


def raid_detail(lv: LogicalVolume) -> list[RenderableType]:
    raid = lv.raid
    if raid is None:
        return []
    out: list[RenderableType] = [Text(f"RAID ({lv.segtype})", "bold underline")]
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    words = raid.health_words
    grid.add_row("health", Text(words or "fine", "bold red" if raid.partial else ""))
    s = raid_sync(lv)
    if s is not None:
        done = (s.done_sectors or 0) * 512
        total = (s.total_sectors or 0) * 512
        grid.add_row(
            "sync",
            Text(
                f"{s.action} {percent(s.fraction)} ({human_bytes(done)} of {human_bytes(total)}"
                " per image); speed and ETA: raidman report",
                "yellow",
            ),
        )
    elif raid.sync_percent is not None:
        grid.add_row("in sync", Text(f"{raid.sync_percent:.2f}%"))
    if raid.mismatches is not None:
        grid.add_row("mismatches", Text(f"{raid.mismatches} sectors (last check or repair)"))
    if raid.integrity_mismatches is not None:
        grid.add_row("integrity mismatches", Text(str(raid.integrity_mismatches)))
    grid.add_row(
        "recovery rate",
        Text(
            f"min {speed(raid.min_rate_kib_s) if raid.min_rate_kib_s else 'not set'}, "
            f"max {speed(raid.max_rate_kib_s) if raid.max_rate_kib_s else 'not set'} per device"
        ),
    )
    out.append(grid)
    images = Table(show_edge=False, box=None, padding=(0, 1))
    for col in ("image", "PVs", "state"):
        images.add_column(col, style="bold" if col == "image" else "")
    for i in raid.images:
        state = DEVICE_HEALTH.get(i.health or "", "failed" if i.failed else "not read")
        images.add_row(
            str(i.index),
            Text(", ".join(i.pvs) or "—"),  # Text: "[unknown]" is no markup
            Text(state, _STYLE.get(i.health or "", "")),
        )
    out.append(images)
    return out
