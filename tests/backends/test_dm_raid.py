"""The Linux probe's LVM RAID reads (backends/linux/dm_raid.py) on outputs captured in the VM
(tests/parsers/samples/lvm_raid): images from `lvs -a`, health from `dmsetup status`, failures
as notes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from app.backend import CommandResult
from app.model.devices import ProbeNote
from app.parsers.lvm import parse_fullreport
from backends.linux.dm_raid import DMSETUP_RAID_ARGV, LVS_SUB_ARGV, with_raid_details

SAMPLES = Path(__file__).parents[1] / "parsers" / "samples" / "lvm_raid"


class _Runs:
    def __init__(self, answers: dict[tuple[str, ...], CommandResult]) -> None:
        self.answers = answers
        self.ran: list[tuple[str, ...]] = []

    def run(
        self, argv: Sequence[str], stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        self.ran.append(tuple(argv))
        return self.answers.get(tuple(argv), CommandResult(tuple(argv), 127))


def _fullreport_lvs():  # type: ignore[no-untyped-def]
    return parse_fullreport((SAMPLES / "b_r1_syncing.fullreport.json").read_text()).lvs


def test_images_and_health_are_read_once_each() -> None:
    src = _Runs(
        {
            LVS_SUB_ARGV: CommandResult(
                LVS_SUB_ARGV, 0, (SAMPLES / "b_r1_syncing.lvs.json").read_text()
            ),
            DMSETUP_RAID_ARGV: CommandResult(
                DMSETUP_RAID_ARGV, 0, (SAMPLES / "b_r1_syncing.dmstatus").read_text()
            ),
        }
    )
    notes: list[ProbeNote] = []
    (lv,) = with_raid_details(src, _fullreport_lvs(), notes, lambda d: d.upper())  # type: ignore[arg-type]
    assert src.ran == [LVS_SUB_ARGV, DMSETUP_RAID_ARGV] and notes == []
    assert lv.raid is not None and lv.raid.dm is not None
    assert [(i.pvs, i.health) for i in lv.raid.images] == [(("NVME0N1",), "a"), (("NVME1N1",), "a")]
    assert (lv.raid.dm.done_sectors, lv.raid.dm.total_sectors) == (25600, 131072)


def test_no_raid_lv_runs_nothing() -> None:
    src = _Runs({})
    lvs = tuple(lv for lv in _fullreport_lvs() if lv.raid is None)
    assert with_raid_details(src, lvs, [], str) == lvs and src.ran == []  # type: ignore[arg-type]


def test_failures_are_notes_and_the_lv_stays() -> None:
    src = _Runs(
        {
            LVS_SUB_ARGV: CommandResult(LVS_SUB_ARGV, 5, "", "  Volume group locked\n"),
            DMSETUP_RAID_ARGV: CommandResult(DMSETUP_RAID_ARGV, 0, "vgr-r1: 0 1 raid raid1 2 Z\n"),
        }
    )
    notes: list[ProbeNote] = []
    (lv,) = with_raid_details(src, _fullreport_lvs(), notes, str)  # type: ignore[arg-type]
    assert lv.raid is not None and lv.raid.images == () and lv.raid.dm is None
    assert [n.message.split(":")[0] for n in notes] == [
        "lvs -a failed (exit 5)",
        "cannot read dmsetup status",
    ]
    assert "Volume group locked" in notes[0].message
