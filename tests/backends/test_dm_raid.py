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


class _Sampled(_Runs):
    def __init__(
        self, answers: dict[tuple[str, ...], CommandResult], files: dict[str, str]
    ) -> None:
        super().__init__(answers)
        self.files = files

    def read_text(self, path: str) -> str | None:
        return self.files.get(path)


def test_the_sample_holds_each_raid_lvs_sync_with_its_images_io_as_speed() -> None:
    from app.model.live import DiskIO
    from backends.linux.dm_raid import SYSTEM_MIN, RaidLvSampler
    from tests.lvm_raid_machine import raid_machine

    status = (SAMPLES / "b_r1_syncing.dmstatus").read_text()
    src = _Sampled(
        {DMSETUP_RAID_ARGV: CommandResult(DMSETUP_RAID_ARGV, 0, status)}, {SYSTEM_MIN: "50\n"}
    )
    sampler = RaidLvSampler()
    assert sampler.read(src) is None and src.ran == []  # no probe yet: nothing run
    assert sampler.sample(None, 0.0, ()) == ()
    sampler.probed(raid_machine("b_r1_syncing").lvs)
    io0 = (DiskIO("dm-1", 0, 0), DiskIO("dm-3", 0, 0))
    (first,) = sampler.sample(sampler.read(src), 10.0, io0)  # type: ignore[arg-type]
    assert first.name == "vgr/r1" and first.level == "raid1" and first.degraded == 0
    assert first.sync is not None and first.sync.action == "resync"
    assert (first.sync.done_sectors, first.sync.total_sectors) == (25600, 131072)
    assert first.sync.speed_kib_s is None  # one look: no speed
    assert first.sync.min_speed_kib_s == 50  # no --minrecoveryrate: md's own min
    assert first.member_states == (("r1_rimage_0", ()), ("r1_rimage_1", ()))  # "aa"
    # a second later rimage_0 (dm-1) read 512 KiB, rimage_1 (dm-3) wrote 512 KiB
    io1 = (DiskIO("dm-1", 512 * 1024, 0), DiskIO("dm-3", 0, 512 * 1024))
    (second,) = sampler.sample(sampler.read(src), 11.0, io1)  # type: ignore[arg-type]
    assert second.sync is not None and second.sync.speed_kib_s == 512
    assert src.ran == [DMSETUP_RAID_ARGV, DMSETUP_RAID_ARGV]


def test_a_failed_dmsetup_gives_no_lv_and_no_error() -> None:
    from backends.linux.dm_raid import RaidLvSampler
    from tests.lvm_raid_machine import raid_machine

    src = _Sampled({DMSETUP_RAID_ARGV: CommandResult(DMSETUP_RAID_ARGV, 1, "", "no\n")}, {})
    sampler = RaidLvSampler()
    sampler.probed(raid_machine("b_r1_syncing").lvs)
    assert sampler.read(src) is None  # type: ignore[arg-type]
    assert sampler.sample(None, 1.0, ()) == ()


def test_over_ssh_dmsetup_status_keeps_the_samples_batch() -> None:
    from backends.linux.dm_raid import SYSTEM_MIN
    from backends.linux.ssh import SAMPLE_FILES, changes_nothing

    assert changes_nothing(DMSETUP_RAID_ARGV)  # a read: the batch's answers still hold
    assert not changes_nothing(("dmsetup", "remove", "vgr-r1"))
    assert SYSTEM_MIN in SAMPLE_FILES  # read before dmsetup, from the sample's one round trip


def test_the_samples_disk_counters_are_read_after_the_lvs_status() -> None:
    # a look that sees an LV's sync ended must count all it wrote: its counters read after
    # dm-raid said so (VM: a resync released to full speed ended between a diskstats read and
    # a dmsetup run under TCG; its record had 28.8 of 54.7 MiB), as an md array's are
    from app.model.live import DiskIO
    from backends.linux import LinuxBackend
    from backends.linux.dm_raid import SYSTEM_MIN
    from tests.lvm_raid_machine import raid_machine

    status = (SAMPLES / "b_r1_syncing.dmstatus").read_text()

    class Order(_Sampled):
        def listdir(self, path: str) -> list[str]:
            return []

        def disk_io(self) -> tuple[DiskIO, ...]:
            self.ran.append(("diskstats",))
            return ()

        def now(self) -> float:
            return 1.0

        def take_notes(self) -> tuple[ProbeNote, ...]:
            return ()

    src = Order(
        {DMSETUP_RAID_ARGV: CommandResult(DMSETUP_RAID_ARGV, 0, status)}, {SYSTEM_MIN: "50"}
    )
    be = LinuxBackend(src)  # type: ignore[arg-type]
    be._raid_lvs.probed(raid_machine("b_r1_syncing").lvs)
    (lv,) = be.sample().lvs
    assert lv.name == "vgr/r1"
    assert src.ran == [DMSETUP_RAID_ARGV, ("diskstats",)]
