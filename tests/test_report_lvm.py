"""`report` on an LVM RAID LV (app/report_lvm.py, app/sync/dm_raid.py): the probe's look and a
second one give the speed and ETA (dm-raid has no sync_speed), in the arrays' sync shape. The
two looks are the VM's own, ~4 s apart (tests/parsers/samples/lvm_raid a_ and b_)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from app.backend import CommandResult
from app.model.devices import Machine, VolumeGroup
from app.model.live import DiskIO, LiveSample
from app.parsers.lvm import parse_lvs
from app.parsers.lvm_raid import DMSETUP_RAID_ARGV, attach_status, parse_raid_status
from app.report import full_report_text, lv_to_json, machine_to_json
from app.report_lvm import raid_syncs
from app.sync.dm_raid import progress_kib_s, raid_sync
from tests.ui.fake_backend import FakeBackend, build_machine

SAMPLES = Path(__file__).parent / "parsers" / "samples" / "lvm_raid"


def _machine(look: str) -> Machine:
    lvs = parse_lvs((SAMPLES / f"{look}.lvs.json").read_text()).lvs
    lvs = attach_status(lvs, parse_raid_status((SAMPLES / f"{look}.dmstatus").read_text()))
    vg = VolumeGroup("vgr", 4 * 264241152, 0, 4 * 1024 * 1024)
    return replace(build_machine(), vgs=(vg,), lvs=lvs, taken_at=1000.0)


@dataclass
class _Backend(FakeBackend):
    second: str = "b_r1_syncing"
    runs: int = 0
    system_min: str | None = "1000\n"

    def read_text(self, path: str) -> str | None:
        return self.system_min if path == "/proc/sys/dev/raid/speed_limit_min" else None

    def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        if tuple(argv) != DMSETUP_RAID_ARGV:
            return super().run(argv, stdin=stdin, timeout=timeout)
        self.runs += 1
        return CommandResult(tuple(argv), 0, (SAMPLES / f"{self.second}.dmstatus").read_text())


def test_speed_is_the_ratio_moved_between_two_looks() -> None:
    a = _machine("a_r1_syncing").lvs[0].raid
    b = _machine("b_r1_syncing").lvs[0].raid
    assert a is not None and b is not None
    # 25600 - 12288 sectors = 6656 KiB in 4 s
    assert progress_kib_s(a.dm, b.dm, 4.0) == 1664
    assert progress_kib_s(b.dm, a.dm, 4.0) is None  # backwards: another sync
    assert progress_kib_s(a.dm, b.dm, 0.0) is None


def test_report_json_has_the_sync_with_speed_and_eta() -> None:
    m = _machine("a_r1_syncing")
    backend = _Backend(machine=m, clock=1004.0)
    syncs = raid_syncs(backend, m, sleep=lambda s: None)
    assert list(syncs) == ["vgr-r1"] and backend.runs == 1
    lv = next(lv for lv in m.lvs if lv.name == "r1")
    j = lv_to_json(lv, syncs["vgr-r1"])
    assert j["sync"]["action"] == "resync"
    assert (j["sync"]["done_sectors"], j["sync"]["total_sectors"]) == (12288, 131072)
    assert j["sync"]["speed_kib_s"] == 1664 and j["sync"]["max_speed_kib_s"] == 256
    assert j["sync"]["min_speed_kib_s"] == 1000  # no --minrecoveryrate: the system's
    # (131072 - 12288) sectors / 2 / 1664 KiB/s = 35.7 s: THE eta of SyncStatus
    assert j["sync"]["eta_s"] == 36
    # --maxrecoveryrate 256 did not hold it at 256: md throttles only above speed_limit_min
    # (md.c md_do_sync: currspeed > speed_min(mddev) first), 1000 KiB/s here; the limits
    # still hold it (at the min): at its ceiling
    assert j["sync"]["at_ceiling"] is True
    assert [i["pvs"] for i in j["raid"]["images"]] == [["nvme0n1"], ["nvme1n1"]]
    assert machine_to_json(m)["lvm"]["lvs"][0]["sync"]["speed_kib_s"] is None  # one look


def test_no_second_look_when_nothing_syncs() -> None:
    m = _machine("e_r1_checked")
    backend = _Backend(machine=m, second="e_r1_checked")
    assert raid_syncs(backend, m, sleep=lambda s: None) == {} and backend.runs == 0
    r1 = next(lv for lv in m.lvs if lv.name == "r1")
    assert raid_sync(r1) is None and lv_to_json(r1)["sync"] is None


def test_report_text_names_the_failed_image_and_health() -> None:
    m = _machine("f_pv_lost")
    text = full_report_text(_Backend(machine=m), m, smart=False, findings=False)
    assert "      health: partial" in text
    assert "      image 1  [unknown]  failed" in text
    assert "      image 0  nvme0n1  in sync" in text
    assert "      mismatches: 512 sectors (last check or repair)" in text


def test_a_min_far_above_the_speed_means_the_disks_hold_it() -> None:
    m = _machine("a_r1_syncing")
    backend = _Backend(machine=m, clock=1004.0, system_min="100000\n")
    syncs = raid_syncs(backend, m, lambda s: None)
    # 1664 KiB/s under a min in force of 100,000: md never throttles it, the disks hold it
    assert lv_to_json(m.lvs[0], syncs["vgr-r1"])["sync"]["at_ceiling"] is False


@dataclass
class _IoBackend(_Backend):
    """Each sample: image 1 (dm-3) written 512 KiB more, image 0 (dm-1) read as much."""

    looks: int = 0

    def sample(self) -> LiveSample:
        self.looks += 1
        n = self.looks * 512 * 1024
        io = (DiskIO("dm-1", n, 0), DiskIO("dm-3", 0, n), DiskIO("nvme0n1", 9 * n, 9 * n))
        self.clock += 1.0
        return LiveSample(taken_at=self.clock, arrays=(), disk_io=io)


def test_the_speed_is_the_busiest_images_io_not_the_ratios_step() -> None:
    """The ratio is md's curr_resync_completed: it moves by 1/16 of the device at a time (md.c
    md_do_sync), so two looks a second apart mostly see it unmoved (the VM: 0 KiB/s shown at
    512 KiB/s). The images' dm devices count every request: image 1 written 512 KiB in 1 s."""
    m = _machine("a_r1_syncing")
    (lv,) = [x for x in m.lvs if x.name == "r1"]
    assert lv.raid is not None and [i.kernel_name for i in lv.raid.images] == ["dm-1", "dm-3"]
    backend = _IoBackend(machine=m, clock=1000.0, second="a_r1_syncing")  # ratio unmoved
    syncs = raid_syncs(backend, m, sleep=lambda s: None)
    assert syncs["vgr-r1"].speed_kib_s == 512 and syncs["vgr-r1"].eta_s is not None
    # without the images' counters, an unmoved ratio says nothing: no speed, no ETA
    still = raid_syncs(_Backend(machine=m, second="a_r1_syncing"), m, sleep=lambda s: None)
    assert still["vgr-r1"].speed_kib_s is None and still["vgr-r1"].eta_s is None
