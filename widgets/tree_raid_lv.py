"""A raid LV in the tree: the label's sync and health parts, and one node per image with its
PVs linked (app.model.lvm_raid). The tree's speed-free view: dm-raid has no sync_speed, so the
tree shows progress and health, ``report`` the speed and ETA (two looks)."""

from __future__ import annotations

from rich.text import Text

from app.format import percent
from app.model.devices import LogicalVolume
from app.model.lvm_raid import DEVICE_HEALTH, RaidImage
from app.sync.dm_raid import raid_sync

_HEALTH_STYLE = {"A": "green", "a": "yellow", "D": "bold red"}
# lvm's health words as the tree's line has room for them (at 80x24 "mismatches exist" was
# cut to "mismatches exi"); Details and report say lvm's own words
_SHORT_HEALTH = {"mismatches exist": "mismatches"}


def raid_label_parts(lv: LogicalVolume, t: Text) -> None:
    """Append the raid LV's running sync ("resync 19.5%") and health ("partial") to ``t``."""
    raid = lv.raid
    if raid is None:
        return
    s = raid_sync(lv)
    if s is not None:
        t.append(f"  {s.action} {percent(s.fraction)}", "yellow")
    elif raid.sync_percent is not None and raid.sync_percent < 100.0 and raid.dm is None:
        t.append(f"  synced {raid.sync_percent:.1f}%", "yellow")
    words = raid.health_words
    words = _SHORT_HEALTH.get(words or "", words)
    if words:
        t.append(f"  {words}", "bold red" if raid.partial or raid.failed_images else "yellow")


def image_label(image: RaidImage, pv_present: bool) -> Text:
    """ "◦ image 1  nvme1n1  failed" """
    t = Text(f"◦ image {image.index}  ", "bright_black")
    pvs = ", ".join(image.pvs) or "no PV"
    t.append(pvs, "bold" if pv_present else "bold red")
    state = DEVICE_HEALTH.get(image.health or "")
    if image.failed and state is None:
        state = "failed"
    if state is not None:
        t.append(f"  {state}", _HEALTH_STYLE.get(image.health or "D", ""))
    return t
