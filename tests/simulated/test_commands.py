"""run() changes the state like the real programs; bad argv gives a message, never an exception."""

from __future__ import annotations

import pytest

from backends.simulated import SimulatedBackend

CREATE10 = ["mdadm", "--create", "/dev/md/127", "--level=10", "--raid-devices=4", "--chunk=32",
            "--layout=n2", "--bitmap=none", "--metadata=1.2", "--name=127", "--run",
            "/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1"]  # fmt: skip


def ok(b: SimulatedBackend, argv: list[str], stdin: str | None = None) -> str:
    r = b.run(argv, stdin=stdin)
    assert r.returncode == 0, (argv, r.stdout, r.stderr)
    return r.stdout + r.stderr


def test_wizard_path_create_lvm_ext4(make) -> None:
    b = make("blank")
    ok(b, CREATE10)
    a = b.probe().array("md127")
    assert a is not None
    assert (a.level, a.layout, a.chunk_bytes, a.bitmap, a.raid_disks) == (
        "raid10",
        "n2",
        32768,
        None,
        4,
    )
    assert a.array_name is not None and a.array_name.endswith(":127")
    assert a.sync is not None and a.sync.action == "resync" and a.sync.done_sectors == 0
    b.clock.advance(5)
    assert b.probe().array("md127").sync.done_sectors > 0  # type: ignore[union-attr]
    assert "ARRAY /dev/md/127 metadata=1.2 name=demo:127" in ok(b, ["mdadm", "--detail", "--scan"])
    ok(b, ["pvcreate", "/dev/md127"])
    ok(b, ["vgcreate", "vg0", "/dev/md127"])
    ok(b, ["lvcreate", "-L", "100G", "-n", "data", "vg0"])
    m = b.probe()
    lv = m.lv("vg0", "data")
    assert (
        lv is not None and lv.size_bytes == 100 << 30 and lv.kernel_name in m.children_of("md127")
    )
    assert m.vg("vg0") is not None and m.pv("md127") is not None
    ok(b, ["mkfs.ext4", "-E", "stride=8,stripe_width=16", "/dev/vg0/data"])
    fs = b.probe().filesystem(lv.kernel_name or "")
    assert fs is not None and (fs.fstype, fs.stride, fs.stripe_width) == ("ext4", 8, 16)
    out = ok(b, ["tune2fs", "-l", "/dev/vg0/data"])
    assert "RAID stride:              8\n" in out and "RAID stripe width:        16\n" in out
    ok(b, ["tune2fs", "-E", "stride=16,stripe_width=32", "/dev/mapper/vg0-data"])
    assert "RAID stride:              16\n" in ok(b, ["tune2fs", "-l", "/dev/vg0/data"])
    # the rest of the VG, as XFS with su/sw
    ok(b, ["lvcreate", "-l", "100%FREE", "-n", "scratch", "vg0"])
    ok(b, ["mkfs.xfs", "-d", "su=32k,sw=2", "/dev/vg0/scratch"])
    info = ok(b, ["xfs_info", "/dev/vg0/scratch"])
    assert "sunit=8    swidth=16 blks" in info
    assert b.run(["lvcreate", "-L", "1G", "-n", "more", "vg0"]).returncode == 5


def test_mkfs_detects_geometry_without_options(make) -> None:
    b = make("blank")
    ok(b, CREATE10)
    ok(b, ["mkfs.ext4", "/dev/md127"])
    fs = b.probe().filesystem("md127")
    assert fs is not None and (fs.stride, fs.stripe_width) == (8, 16)
    r = b.run(["mkfs.ext4", "/dev/md127"])
    assert r.returncode == 1 and "Proceed anyway" in r.stdout


def test_raid5_create_recovers_onto_last_device(make) -> None:
    b = make("blank")
    ok(b, ["mdadm", "--create", "/dev/md0", "--level=5", "--raid-devices=4", "--run",
           "/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1"])  # fmt: skip
    a = b.probe().array("md0")
    assert a is not None and a.sync is not None
    assert a.sync.action == "recover" and a.sync.targets == ("nvme3n1",)
    assert a.bitmap == "internal"  # mdadm's default on a large array
    assert "[4/3] [UUU_]" in (b.probe().mdstat or "")


def test_fail_remove_add_recovery_and_bitmap_readd(make) -> None:
    b = make("raid6-wd")
    b.run(["tee", "/sys/block/md0/md/stripe_cache_size"], stdin="8192\n")
    b.clock.advance(24 * 3600)
    ok(b, ["mdadm", "/dev/md0", "--fail", "/dev/sda1"])
    a = b.probe().array("md0")
    assert a is not None and a.degraded == 1 and a.member("sda1").role == "faulty"  # type: ignore[union-attr]
    busy = b.run(["mdadm", "/dev/md0", "--remove", "/dev/sdc1"])
    assert busy.returncode == 1 and "busy" in busy.stderr
    ok(b, ["mdadm", "/dev/md0", "--remove", "/dev/sda1"])
    assert b.probe().array("md0").member("sda1") is None  # type: ignore[union-attr]
    b.clock.advance(600)
    # with a bitmap, a re-add only rebuilds what changed while it was away
    out = ok(b, ["mdadm", "/dev/md0", "--re-add", "/dev/sda1"])
    assert "re-added" in out
    s = b.probe().array("md0").sync  # type: ignore[union-attr]
    assert s is not None and s.action == "recover" and s.targets == ("sda1",)
    assert s.total_sectors is not None and s.total_sectors < 976561152 * 2 // 50
    b.clock.advance(3600)
    assert b.probe().array("md0").degraded == 0  # type: ignore[union-attr]


def test_readd_without_bitmap_is_refused_add_is_full_rebuild(make) -> None:
    b = make("raid5-cable")
    b.clock.advance(6 * 3600)
    ok(b, ["mdadm", "/dev/md127", "--fail", "/dev/sdb1", "--remove", "/dev/sdb1"])
    r = b.run(["mdadm", "/dev/md127", "--re-add", "/dev/sdb1"])
    assert r.returncode == 1 and "not possible" in r.stderr
    ok(b, ["mdadm", "/dev/md127", "--add", "/dev/sdb1"])
    s = b.probe().array("md127").sync  # type: ignore[union-attr]
    assert s is not None and s.action == "recover" and s.total_sectors == 449218560 * 2
    assert "sdb1[5]" in (b.probe().mdstat or "")


def test_second_failure_on_degraded_raid5_is_refused(make) -> None:
    b = make("raid5-cable")
    r = b.run(["mdadm", "/dev/md127", "--fail", "/dev/sda1"])
    assert r.returncode == 1 and "faulty failed" in r.stderr
    assert b.probe().array("md127").member("sda1").role == "in_sync"  # type: ignore[union-attr]


def test_replace_with(make) -> None:
    b = make("raid6-wd")
    b.clock.advance(2 * 24 * 3600)
    ok(b, ["mdadm", "/dev/md0", "--remove", "/dev/sdb1"])
    ok(b, ["mdadm", "/dev/md0", "--add", "/dev/sdb1"])  # now a plain spare
    ok(b, ["mdadm", "/dev/md0", "--replace", "/dev/sdc1", "--with", "/dev/sdb1"])
    a = b.probe().array("md0")
    assert a is not None and a.degraded == 0
    assert a.member("sdb1").role == "replacement"  # type: ignore[union-attr]
    assert a.sync is not None and a.sync.targets == ("sdb1",)
    b.clock.advance(2 * 24 * 3600)
    a = b.probe().array("md0")
    assert a is not None and a.member("sdc1").role == "faulty"  # type: ignore[union-attr]
    assert a.member("sdb1").role == "in_sync"  # type: ignore[union-attr]


def test_grow_reshapes(make) -> None:
    b = make("blank")
    ok(b, ["mdadm", "--create", "/dev/md0", "--level=5", "--raid-devices=3", "--bitmap=none",
           "--run", "/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1"])  # fmt: skip
    b.clock.advance(6 * 3600)
    size3 = b.probe().array("md0").size_bytes  # type: ignore[union-attr]
    r = b.run(["mdadm", "--grow", "/dev/md0", "--raid-devices=4"])
    assert r.returncode == 1 and "--add" in r.stderr
    ok(b, ["mdadm", "/dev/md0", "--add", "/dev/nvme3n1"])
    ok(b, ["mdadm", "--grow", "/dev/md0", "--raid-devices=4", "--backup-file=/root/md0.bak"])
    a = b.probe().array("md0")
    assert a is not None and a.sync is not None and a.sync.action == "reshape"
    assert "reshape =" in (b.probe().mdstat or "")
    b.clock.advance(24 * 3600)
    a = b.probe().array("md0")
    assert a is not None and a.sync is None and a.raid_disks == 4
    assert a.size_bytes is not None and size3 is not None and a.size_bytes == size3 * 3 // 2


def test_stop_zero_superblock_wipefs(make) -> None:
    b = make("blank")
    ok(b, CREATE10)
    assert "linux_raid_member" in ok(b, ["wipefs", "--no-act", "/dev/nvme0n1"])
    assert b.run(["wipefs", "-a", "/dev/nvme0n1"]).returncode == 1  # in use
    ok(b, ["pvcreate", "/dev/md127"])
    r = b.run(["mdadm", "--stop", "/dev/md127"])
    assert r.returncode == 1 and "exclusive access" in r.stderr
    b.state.pvs.clear()  # (no pvremove in the simulation)
    b.state.touch()
    ok(b, ["mdadm", "--stop", "/dev/md127"])
    assert b.probe().arrays == ()
    assert "linux_raid_member" in ok(b, ["wipefs", "-n", "/dev/nvme1n1"])
    ok(b, ["mdadm", "--zero-superblock", "/dev/nvme1n1"])
    assert b.run(["mdadm", "--zero-superblock", "/dev/nvme1n1"]).returncode == 1
    assert "bytes were erased" in ok(b, ["wipefs", "-a", "/dev/nvme0n1"])
    assert ok(b, ["wipefs", "--no-act", "/dev/nvme0n1"]) == ""


def test_sysctl_scheduler_and_misc(make) -> None:
    b = make("raid10-evo")
    # seed 000 had raised the limit to 500000 before its first reading
    assert ok(b, ["sysctl", "-n", "dev.raid.speed_limit_max"]) == "500000\n"
    ok(b, ["sysctl", "-w", "dev.raid.speed_limit_max=600000"])
    assert b.read_text("/proc/sys/dev/raid/speed_limit_max") == "600000\n"
    assert b.read_text("/sys/block/sda/queue/scheduler") == "[mq-deadline] kyber bfq none\n"
    ok(b, ["tee", "/sys/block/sda/queue/scheduler"], stdin="none\n")
    assert b.probe().disk("sda").scheduler == "none"  # type: ignore[union-attr]
    assert b.run(["tee", "/sys/block/sda/queue/scheduler"], stdin="cfq\n").returncode == 1
    assert ok(b, ["systemctl", "is-active", "fstrim.timer"]) == "active\n"
    ok(b, ["update-initramfs", "-u"])
    assert "md_chunk_alignment=1" in ok(b, ["lvm", "config", "devices/md_chunk_alignment"])
    assert '"model_name": "Samsung SSD 850 EVO 500GB"' in ok(
        b, ["smartctl", "-j", "-a", "/dev/sda"]
    )


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["frobnicate", "--all"],
        ["mdadm"],
        ["mdadm", "--create"],
        [
            "mdadm",
            "--create",
            "/dev/md/x",
            "--level=7",
            "--raid-devices=2",
            "/dev/nvme0n1",
            "/dev/nvme1n1",
        ],
        ["mdadm", "--create", "/dev/md/x", "--level=5", "--raid-devices=4", "/dev/nvme0n1"],
        [
            "mdadm",
            "--create",
            "/dev/md/x",
            "--level=1",
            "--raid-devices=2",
            "--chunk=abc",
            "/dev/nvme0n1",
            "/dev/nvme1n1",
        ],
        [
            "mdadm",
            "--create",
            "/dev/md/x",
            "--level=1",
            "--raid-devices=2",
            "/dev/nope",
            "/dev/nvme1n1",
        ],
        ["mdadm", "--bogus"],
        ["mdadm", "/dev/md99", "--fail", "/dev/nvme0n1"],
        ["mdadm", "--grow", "/dev/md99", "--raid-devices=x"],
        ["pvcreate"],
        ["vgcreate", "vg"],
        ["lvcreate", "-L", "1G", "-n", "x", "novg"],
        ["lvcreate", "-L"],
        ["mkfs.ext4", "-E", "stride=x", "/dev/nvme0n1"],
        ["mkfs.xfs", "-d", "su=32k", "/dev/nvme0n1"],
        ["tune2fs", "-l", "/dev/nvme0n1"],
        ["xfs_info", "/dev/nvme0n1"],
        ["tee", "/sys/block/nvme0n1/md/sync_action"],
        ["sysctl", "-w", "dev.raid.speed_limit_max=abc"],
        ["sysctl", "-n", "kernel.nope"],
        ["wipefs", "-a"],
        ["smartctl", "-a", "/dev/nope"],
    ],
)
def test_bad_argv_gives_nonzero_and_a_message(make, argv: list[str]) -> None:
    b = make("blank")
    r = b.run(argv)
    assert r.returncode != 0
    assert r.stderr.strip() or r.stdout.strip()
    assert b.probe().arrays == ()


def test_unknown_command_is_127(make) -> None:
    r = make("blank").run(["sgdisk", "-Z", "/dev/nvme0n1"])
    assert r.returncode == 127 and "not simulated" in r.stderr


def test_create_refuses_signatures_without_run_and_too_small(make) -> None:
    b = make("usb-bridge")
    r = b.run(["mdadm", "--create", "/dev/md/1", "--level=1", "--raid-devices=2",
               "/dev/sdh4", "/dev/sdh3"])  # fmt: skip
    assert r.returncode == 1
    b2 = make("blank")
    b2.state.disks["nvme3n1"].size_bytes = 1 << 20  # no room after the data offset
    b2.state.touch()
    r = b2.run(["mdadm", "--create", "/dev/md/1", "--level=1", "--raid-devices=2", "--run",
                "/dev/nvme0n1", "/dev/nvme3n1"])  # fmt: skip
    assert r.returncode == 1 and "too small" in r.stderr
