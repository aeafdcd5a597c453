"""The Details pane of a raid LV (widgets/raid_lv_detail.py) on the VM's captures: health,
images with their PVs and state, the sync, mismatches, rates — and no dataclass repr."""

from __future__ import annotations

from rich.console import Console

from tests.lvm_raid_machine import raid_machine
from widgets.device_detail import lv_view


def _text(look: str, name: str, **kw: object) -> str:
    m = raid_machine(look, **kw)  # type: ignore[arg-type]
    lv = next(lv for lv in m.lvs if lv.name == name)
    console = Console(width=100, record=True, color_system=None)
    console.print(lv_view(m, lv, width=100))
    return console.export_text()


def test_a_syncing_lv() -> None:
    text = _text("a_r1_syncing", "r1")
    assert "RaidLv(" not in text and "RAID (raid1)" in text
    assert "resync 9.4% (6.0 MiB of 64.0 MiB per image)" in text
    assert "min not set, max 256.0 KiB/s per device" in text
    assert "nvme0n1" in text and "not in sync" in text


def test_a_partial_lv_names_its_failed_image() -> None:
    text = _text("f_pv_lost", "r1", lost="nvme1n1")
    assert "partial" in text and "[unknown]" in text and "failed" in text
    assert "512 sectors (last check or repair)" in text
