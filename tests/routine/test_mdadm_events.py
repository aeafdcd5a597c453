"""mdadm's event names as ``raidman monitor`` sends them (issue 27 item 4; mdadm's Monitor.c
check_array decides them the same way from one poll to the next) on the simulated machine:
SpareActive when a rebuilt spare is in sync, FailSpare when the member being rebuilt fails,
Fail + DegradedArray for an in-sync member, NewArray / DeviceDisappeared when an array is
created and stopped."""

from __future__ import annotations

from pathlib import Path

from tests.routine.rig import Rig


def _md0_recovery(rig: Rig) -> tuple[str, ...]:
    a = rig.b.probe().array("md0")
    assert a is not None and a.sync is not None and a.sync.action == "recover"
    return a.sync.targets


def test_spare_active_when_the_rebuild_ends(tmp_path: Path) -> None:
    rig = Rig(tmp_path, "raid6-wd")  # md0 degraded, rebuilding slot 0 onto the spare sdf1
    assert _md0_recovery(rig) == ("sdf1",)
    rig.tick()
    (deg,) = rig.delivered("DegradedArray")  # the first look: degraded, as mdadm says at start
    assert deg["RAIDMAN_ARRAY"] == "/dev/md0"
    rig.run(30 * 3600, step=300, until=lambda: bool(rig.said("SpareActive")))
    (env,) = rig.delivered("SpareActive")
    assert (env["RAIDMAN_ARRAY"], env["RAIDMAN_COMPONENT"]) == ("/dev/md0", "/dev/sdf1")
    assert [e["RAIDMAN_ACTION"] for e in rig.delivered("RebuildFinished")] == ["recover"]
    assert rig.said("Fail") == [] and rig.said("FailSpare") == []
    rig.close()


def test_fail_spare_while_it_is_rebuilt_and_fail_of_an_in_sync_member(tmp_path: Path) -> None:
    rig = Rig(tmp_path, "raid6-wd")
    rig.tick()
    rig.run(600, step=30)
    r = rig.b.run(["mdadm", "/dev/md0", "--fail", "/dev/sdf1"])
    assert r.returncode == 0, r.stderr
    rig.run(30, step=5, until=lambda: bool(rig.said("FailSpare")))
    (env,) = rig.delivered("FailSpare")
    assert (env["RAIDMAN_ARRAY"], env["RAIDMAN_COMPONENT"]) == ("/dev/md0", "/dev/sdf1")
    assert "while it was being rebuilt" in env["RAIDMAN_DETAIL"]
    assert rig.said("Fail") == [] and rig.said("SpareActive") == []

    r = rig.b.run(["mdadm", "/dev/md0", "--fail", "/dev/sdc1"])
    assert r.returncode == 0, r.stderr
    rig.run(30, step=5, until=lambda: len(rig.said("DegradedArray")) == 2)
    (fail,) = rig.delivered("Fail")
    assert fail["RAIDMAN_COMPONENT"] == "/dev/sdc1"
    argv = [c[0] for c in rig.sent.calls if c[1]["RAIDMAN_EVENT"] in ("Fail", "DegradedArray")]
    assert (Rig.PROGRAM, "Fail", "/dev/md0", "/dev/sdc1") in argv
    assert (Rig.PROGRAM, "DegradedArray", "/dev/md0") in argv  # no component: mdadm's argv
    assert rig.delivered("DegradedArray", 2)[-1]["RAIDMAN_DEGRADED"] == "2"
    rig.close()


def test_new_array_and_device_disappeared(tmp_path: Path) -> None:
    rig = Rig(tmp_path, "blank")  # four blank NVMe disks
    rig.tick()
    r = rig.b.run(
        ["mdadm", "--create", "/dev/md0", "--run", "--level=1", "--raid-devices=2",
         "/dev/nvme0n1", "/dev/nvme1n1"]
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rig.run(30, step=5, until=lambda: bool(rig.said("NewArray")))
    (new,) = rig.delivered("NewArray")
    assert new["RAIDMAN_ARRAY"] == "/dev/md0" and "raid1" in new["RAIDMAN_DETAIL"]
    assert rig.said("DegradedArray") == []
    r = rig.b.run(["mdadm", "--stop", "/dev/md0"])
    assert r.returncode == 0, r.stderr
    rig.run(30, step=5, until=lambda: bool(rig.said("DeviceDisappeared")))
    (gone,) = rig.delivered("DeviceDisappeared")
    assert gone["RAIDMAN_ARRAY"] == "/dev/md0"
    # its initial resync ran from the first look: no RebuildStarted, as in mdadm's Monitor.c
    # check_array (a new array's percent starts RESYNC_UNKNOWN), and stopped before its end
    assert rig.said("RebuildStarted") == [] and rig.said("RebuildFinished") == []
    rig.close()
