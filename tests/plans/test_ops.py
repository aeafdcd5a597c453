"""Typed operations (app/plans/ops): every kind renders an argv that decodes back into the same
operation, and the decoder is the one reader of a plan file's argv — what it does not decode is
refused with the step and the reason. Issue 36's "a test per operation kind"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.plans import ops
from app.plans.ops.base import Op
from app.plans.ops.system_files import DROPIN, PERSIST, backup_name
from app.plans.plan import Plan, PlanFileError, Step, StepRefused, parse_plan_bytes

UUID = "3aaf6c4e:4e6fe9d5:9bb0d6a3:2f6c1d0e"
FSTAB_OLD = "# fstab\n"
FSTAB_NEW = FSTAB_OLD + "UUID=0a1b2c3d-0000-4000-8000-00000000abcd /srv/data ext4 nofail 0 2\n"
SPEED = PERSIST["speed-limits"]

EVERY_KIND: list[Op] = [
    ops.CreateArray(
        "/dev/md/127",
        "10",
        ("/dev/sda1", "/dev/sdb1", "/dev/sdc1", "/dev/sdd1"),
        ("/dev/sde1",),
        chunk="32K",
        layout="n2",
        bitmap="internal",
        metadata="1.2",
        name="127",
        run=True,
    ),
    ops.CreateArray(
        "/dev/md120",
        "5",
        ("/dev/sda", "/dev/sdb", "/dev/sdc"),
        chunk="512K",
        bitmap="none",
        metadata="1.2",
        run=True,
        assume_clean=True,
        run_first=True,
    ),
    ops.AddMember("/dev/md127", "/dev/sdf1"),
    ops.AddMember("/dev/md/127", "/dev/sdf1", spare=True),
    ops.FailMember("/dev/md127", "/dev/sda1"),
    ops.RemoveMember("/dev/md127", "/dev/sda1"),
    ops.ReAddMember("/dev/md127", "/dev/sda1"),
    ops.ReplaceMember("/dev/md127", "/dev/sda1", "/dev/sdf1"),
    ops.GrowDevices("/dev/md127", 5),
    ops.GrowDevices("/dev/md127", 5, "/root/md127-grow.backup"),
    ops.SetBitmap("/dev/md127", "none"),
    ops.SetBitmap("/dev/md127", "/var/md127_intent", 65536),
    ops.TestAlerts(),
    ops.StopArray("/dev/md/127"),
    ops.Assemble(),
    ops.Assemble("/dev/md/data", UUID),
    ops.ZeroSuperblock(("/dev/sda1",)),
    ops.ZeroSuperblock(("/dev/sda", "/dev/sdb")),
    ops.SetSyncAction("md127", "frozen"),
    ops.SetArraySpeed("md127", "min", 200000),
    ops.SetArraySpeed("md127", "max", None),
    ops.SetStripeCache("md127", 8192),
    ops.SetSyncMin("md127", 123456),
    ops.SetSystemSpeed("max", 500000),
    ops.SetScheduler("sda", "mq-deadline"),
    ops.PartitionDisk("/dev/sdb", 90),
    ops.Wipe("/dev/sdb1"),
    ops.Discard("/dev/nvme0n1"),
    ops.Discard("/dev/md120"),
    ops.MakeExt4("/dev/md/127", 4096, 8, 16, "data"),
    ops.MakeExt4("/dev/vg0/data"),
    ops.MakeXfs("/dev/md127", "32k", 2, 4, "data"),
    ops.MakeXfs("/dev/md127"),
    ops.TuneExt4Stride("/dev/mapper/vg0-data", 8, 16),
    ops.PvCreate("/dev/md/127", "64K"),
    ops.VgCreate("vg0", "/dev/md/127"),
    ops.LvCreate("vg0", "data", extents="100%FREE"),
    ops.LvCreate("vg0", "data", size="10G"),
    ops.LvSyncAction("vgr", "r1", "check"),
    ops.LvSyncAction("vgr", "r1", "repair"),
    ops.LvRepair("vgr", "r1"),
    ops.LvRepair("vgr", "r1", ("/dev/nvme2n1", "/dev/nvme3n1")),
    ops.LvRecoveryRate("vgr", "r1", max_kib_s=512),
    ops.LvRecoveryRate("vgr", "r1", 0, 0),
    ops.LvRecoveryRate("vgr", "r1", min_kib_s=1000),
    ops.LvReplace("vgr", "r1", "/dev/nvme1n1"),
    ops.LvReplace("vgr", "r1", "/dev/nvme1n1", ("/dev/nvme2n1",)),
    ops.Fio("/dev/md120", "randwrite", "64k", 4, "8M"),
    ops.Fio("/dev/md120", "write", "1m", 4, "256M", 60),
    ops.SmartTest("/dev/sda", "long"),
    ops.MakeMountPoint("/srv/data"),
    ops.Mount("/dev/vg0/data", "/srv/data", "defaults,noatime"),
    ops.CompareFile("/etc/fstab", FSTAB_OLD),
    ops.BackupFile("/etc/fstab", backup_name("/etc/fstab", FSTAB_OLD)),
    ops.CopyFile("/etc/mdadm/mdadm.conf"),
    ops.WriteFile("/etc/fstab.raidman-new", FSTAB_NEW),
    ops.WriteFile(SPEED.temp, "dev.raid.speed_limit_max = 500000\n"),
    ops.WriteFile(DROPIN, "[Service]\nEnvironment=RAIDMAN_CHECK_EVERY=monthly\n"
                  "Environment=RAIDMAN_CHECK_WINDOW=6h\n"),
    ops.VerifyFstab(),
    ops.ReplaceFile("/etc/fstab"),
    ops.OverwriteFile("/etc/fstab"),
    ops.OverwriteFile("/etc/mdadm.conf"),
    ops.RemoveCopy("/etc/fstab"),
    ops.RemoveCopy("/etc/mdadm/mdadm.conf"),
    ops.ReplaceFile(SPEED.path, force=True),
    ops.RemoveFile(SPEED.path),
    ops.MakeDropinDir(),
    ops.AppendConfLine("/etc/mdadm/mdadm.conf", f"ARRAY /dev/md/127 metadata=1.2 UUID={UUID}"),
    ops.AppendConfLine("/etc/mdadm.conf", "MAILADDR root"),
    ops.AppendArrayFromDetail("/etc/mdadm/mdadm.conf", "/dev/md/127"),
    ops.Systemd("enable", "fstrim.timer"),
    ops.Systemd("daemon-reload"),
    ops.Systemd("try-restart", "raidman-monitor.service"),
    ops.UpdateInitramfs("update-initramfs"),
    ops.UpdateInitramfs("dracut"),
    # issue 40: qualify, locate, retire
    ops.SmartReport("/dev/nvme0n1"),
    ops.CaptiveSelfTest("/dev/sdg", "long"),
    ops.NvmeSelfTest("/dev/nvme0n1", "short"),
    ops.NvmeSelfTest("/dev/nvme0n1", "long"),
    ops.SurfaceTest("/dev/nvme0n1", 0, 100 << 20),
    ops.SurfaceTest("/dev/sdg", 3 << 30, 1 << 20),
    ops.LocateBlink("/dev/sdb", 30, 64),
    ops.EnclosureLed("0:0:2:0", "Slot 03", "locate", True),
    ops.EnclosureLed("0:0:2:0", "3", "fault", False),
    ops.Ledctl("/dev/sdb", True),
    ops.Ledctl("/dev/sdb", False),
    ops.NvmeSanitize("/dev/nvme0n1", "crypto"),
    ops.NvmeSanitize("/dev/nvme0n1", "block"),
    ops.NvmeSanitizeLog("/dev/nvme0n1"),
    ops.NvmeFormat("/dev/nvme0n1", "user-data"),
    ops.NvmeFormat("/dev/nvme0n1", "crypto"),
    ops.HdparmSetPassword("/dev/sdb"),
    ops.HdparmErase("/dev/sdb", False),
    ops.HdparmErase("/dev/sdb", True),
    ops.HdparmIdentify("/dev/sdb"),
    ops.SgSanitize("/dev/sdb", "block"),
    ops.SgSanitize("/dev/sdb", "crypto"),
    ops.SgRequests("/dev/sdb"),
    ops.SecureDiscard("/dev/sdb"),
]  # fmt: skip


def test_every_operation_class_is_covered() -> None:
    kinds = {type(op) for op in EVERY_KIND}
    every = {getattr(ops, n) for n in ops.__all__} - {ops.Op, ops.OpError, ops.decode}
    assert every <= kinds, sorted(c.__name__ for c in every - kinds)


@pytest.mark.parametrize("op", EVERY_KIND, ids=lambda op: f"{op.KIND}:{' '.join(op.argv())}")
def test_rendered_argv_decodes_into_the_same_operation(op: Op) -> None:
    back = ops.decode(op.argv(), op.stdin(), op.stdin_from())
    assert back == op and type(back) is type(op)
    assert back.argv() == op.argv()  # the spelling too (CreateArray's option order)


@pytest.mark.parametrize("op", EVERY_KIND, ids=lambda op: op.KIND)
def test_a_step_survives_its_plan_file(op: Op) -> None:
    plan = Plan("t", (Step(op, "why"),), kind="sync-limits")
    back = Plan.from_json(json.loads(json.dumps(plan.to_json())))
    assert back.steps == plan.steps and back.digest == plan.digest


HOSTILE = {
    "a shell": (("sh", "-c", "rm -rf /"), None, None),
    "a program by path": (("/tmp/mdadm", "/dev/md0", "--fail", "/dev/sda"), None, None),
    "an mdadm option never planned": (("mdadm", "--create", "/dev/md0", "--level=1", "--force",
                                       "--raid-devices=2", "/dev/sda", "/dev/sdb"), None, None),
    "create options reordered": (("mdadm", "--create", "/dev/md0", "--raid-devices=2",
                                  "--level=1", "/dev/sda", "/dev/sdb"), None, None),
    "two managed devices": (("mdadm", "/dev/md0", "--fail", "/dev/sda", "--remove", "/dev/sda"),
                            None, None),
    "a path out of /dev": (("mdadm", "/dev/md0", "--add", "/dev/../etc/passwd"), None, None),
    "tee to /etc/shadow": (("tee", "/etc/shadow"), "root::0:0\n", None),
    "tee over /etc/fstab": (("tee", "/etc/fstab"), "/dev/sda1 / ext4 defaults 0 1\n", None),
    "cp a file into fstab": (("cp", "/tmp/x", "/etc/fstab"), None, None),
    "cp the copy into shadow": (("cp", "/etc/fstab.raidman-new", "/etc/shadow"), None, None),
    "an md attribute never written": (("tee", "/sys/block/md0/md/array_state"), "inactive\n", None),
    "two values": (("tee", "/sys/block/md0/md/sync_action"), "idle\ncheck\n", None),
    "sysctl elsewhere": (("sysctl", "-w", "kernel.core_pattern=|/tmp/x"), None, None),
    "stdin to mdadm": (("mdadm", "/dev/md0", "--fail", "/dev/sda"), "y\n", None),
    "a pipe from cat": (("tee", "-a", "/etc/mdadm/mdadm.conf"), None, ("cat", "/etc/shadow")),
    "mount over /home": (("mount", "-o", "defaults", "/dev/md0", "/home"), None, None),
    "mount on /root/x": (("mount", "-o", "defaults", "/dev/md0", "/root/x"), None, None),
    "a label with ESC": (("mkfs.ext4", "-b", "4096", "-L", "a\x1b]0;x", "/dev/md0"), None, None),
    "fio elsewhere": (("fio", "--name=raidman", "--filename=/etc/passwd", "--direct=1",
                       "--ioengine=psync", "--rw=write", "--bs=4k", "--numjobs=1", "--size=8M",
                       "--group_reporting", "--output-format=json"), None, None),
    "a surface test without verify": (("fio", "--name=raidman-qualify", "--filename=/dev/sdb",
                                       "--offset=0", "--size=1048576", "--rw=write", "--bs=1M",
                                       "--direct=1", "--ioengine=psync",
                                       "--output-format=json"), None, None),
    "a zone that is no zone": (("fio", "--name=raidman-qualify", "--filename=/dev/sdb",
                                "--offset=5", "--size=1048576", "--rw=write", "--bs=1M",
                                "--direct=1", "--ioengine=psync", "--verify=crc32c",
                                "--do_verify=1", "--output-format=json"), None, None),
    "a locate that writes": (("fio", "--name=raidman-locate", "--filename=/dev/sdb", "--rw=write",
                              "--bs=1M", "--direct=1", "--ioengine=psync", "--time_based",
                              "--runtime=30", "--thinktime=500000", "--thinktime_blocks=64",
                              "--output-format=json"), None, None),
    "an LED elsewhere in sysfs": (("tee", "/sys/class/enclosure/../../power/state"), "1\n", None),
    "an LED set to 255": (("tee", "/sys/class/enclosure/0:0:2:0/3/fault"), "255\n", None),
    "a namespace of another shape": (("nvme", "format", "/dev/nvme0", "--ses=1", "--force"),
                                     None, None),
    "an ATA password of the file's": (("hdparm", "--user-master", "u", "--security-erase",
                                       "hunter2", "/dev/sdb"), None, None),
    "ledctl on every disk": (("ledctl", "locate=/dev/sd[a-z]"), None, None),
    "an LV sync action never planned": (("lvchange", "--syncaction", "idle", "vgr/r1"), None, None),
    "an lvchange of another kind": (("lvchange", "--activate", "n", "vgr/r1"), None, None),
    "an LV name with a dash first": (("lvchange", "--syncaction", "check", "vgr/-r1"), None, None),
    "an LV name of a path": (("lvchange", "--syncaction", "check", "vgr/r1/../x"), None, None),
    "a repair without --yes": (("lvconvert", "--repair", "vgr/r1"), None, None),
    "a repair onto a file": (("lvconvert", "--yes", "--repair", "vgr/r1", "/etc/passwd"), None,
                             None),
    "lvconvert of another kind": (("lvconvert", "--yes", "--merge", "vgr/snap"), None, None),
    "a rate in MiB": (("lvchange", "--maxrecoveryrate", "1M", "vgr/r1"), None, None),
    "a negative rate": (("lvchange", "--maxrecoveryrate", "-5K", "vgr/r1"), None, None),
    "the max before the min": (
        ("lvchange", "--maxrecoveryrate", "5K", "--minrecoveryrate", "1K", "vgr/r1"), None, None,
    ),
    "one rate twice": (
        ("lvchange", "--maxrecoveryrate", "5K", "--maxrecoveryrate", "1K", "vgr/r1"), None, None,
    ),
    "a rate without its LV": (("lvchange", "--maxrecoveryrate", "5K"), None, None),
    "a replace without --yes": (("lvconvert", "--replace", "/dev/nvme1n1", "vgr/r1"), None, None),
    "a replace of a file": (("lvconvert", "--yes", "--replace", "/etc/passwd", "vgr/r1"), None,
                            None),
    "a replace onto its own PV": (
        ("lvconvert", "--yes", "--replace", "/dev/nvme1n1", "vgr/r1", "/dev/nvme1n1"), None, None,
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_plan_file_is_refused_with_its_step_and_reason(case: str, tmp_path: Path) -> None:
    argv, stdin, producer = HOSTILE[case]
    good = {"argv": ["sysctl", "-w", "dev.raid.speed_limit_max=5000"], "why": "ok"}
    bad: dict[str, object] = {"argv": list(argv), "why": "w"}
    if stdin is not None:
        bad["stdin"] = stdin
    if producer is not None:
        bad["stdin_from"] = list(producer)
    data = json.dumps({"title": "t", "kind": "sync-limits", "steps": [good, bad]}).encode()
    with pytest.raises(PlanFileError) as e:  # StepRefused, or a control character in the JSON
        parse_plan_bytes(data)
    msg = str(e.value)
    assert msg.startswith("step 2") and len(msg) > len("step 2: ") and "\x1b" not in msg
    assert isinstance(e.value, StepRefused) or "control character" in msg


def test_an_operation_checks_its_fields_whoever_makes_it() -> None:
    """A builder cannot make what a plan file may not hold: the checks are the operation's."""
    with pytest.raises(ops.OpError):
        ops.SetStripeCache("md127", 16)
    with pytest.raises(ops.OpError):
        ops.Mount("/dev/md0", "/home", "defaults")
    with pytest.raises(ops.OpError):
        ops.SetSystemSpeed("max", 0)
    with pytest.raises(ops.OpError):
        ops.AppendConfLine("/etc/mdadm/mdadm.conf", "PROGRAM /tmp/x")
    with pytest.raises(ops.OpError):
        ops.BackupFile("/etc/fstab", "/etc/fstab.raidman-backup")  # one name for every edit


def test_only_the_decoder_reads_an_argv_by_position() -> None:
    """Issue 36: at most 2 modules of app/plans + app/commands index an argv by position (the
    decoder; operations render theirs without reading one back)."""
    import re

    root = Path(__file__).resolve().parents[2]
    indexing = re.compile(r"\bargv(\(\))?\[|\bsteps?\.argv\[|\b(a|rest)\[[0-9:]")
    files = [*(root / "app" / "plans").rglob("*.py"), *(root / "app" / "commands").glob("*.py")]
    readers = sorted(str(p.relative_to(root)) for p in files if indexing.search(p.read_text()))
    assert readers == ["app/plans/ops/decode.py"], readers
