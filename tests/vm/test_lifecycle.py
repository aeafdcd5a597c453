"""Issue 26's Done-when on a real kernel (items 3 and 4).

(a) prepare -> create -> mkfs -> mount with fstab -> stop -> assemble -> delete (-> wipe of each
disk), each a ``raidman plan`` saved and run with ``raidman apply``, leaves the four NVMe disks as
they started (no signatures, no partitions), every step in the audit log; the fstab line is by
UUID with nofail and ``findmnt --verify`` passes on the file raidman wrote. The unmount before
the stop is the test's own (stop is refused while mounted: asserted). /etc in the guest is a
tmpfs-backed overlay (tests/vm/etc_mdadm.py): the test's /etc/fstab is the guest's own.

(b) after ``mdadm --fail``/``--remove`` of a member and 16 MiB written to the array, ``raidman
report --json`` shows the member's superblock (mdadm --examine --export and the plain text, as
mdadm prints them here) with its events behind the array's.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.parsers.mdadm_superblock import parse_superblock
from app.plans.ops.system_files import backup_name
from tests.vm.etc_mdadm import guest_mount_of
from tests.vm.machine import VM
from tests.vm.scenarios import FAST_KIB, create_array

pytestmark = pytest.mark.vm
STATE = "/tmp/raidman-lifecycle"
# below /mnt, where a plan may mount (ops.storage.mountpoint_problem: never in /tmp); the
# guest's / is the host's, read-only, so the test puts a tmpfs on /mnt for the mount point
MNT = "/mnt/raidman-lifecycle/data"
FSTAB_START = "# raidman VM test: the guest's own fstab\n"
SAVED = "/tmp/raidman-lifecycle-fstab.orig"


def _env(vm: VM) -> dict[str, str]:
    vm.sh(f"rm -rf {STATE} && mkdir -p {STATE} && chmod 700 {STATE}")
    return {"RAIDMAN_STATE_DIR": STATE}


def _plan(vm: VM, env: dict[str, str], name: str, *args: str) -> dict[str, Any]:
    res, code = vm.call_result("app.cli:main", ["plan", *args, "--json"], env=env)
    assert res.ok and code in (0, None), res
    path = f"{STATE}/{name}.json"
    vm.write(path, res.stdout)
    vm.sh(f"chmod 600 {path}")
    plan: dict[str, Any] = json.loads(res.stdout)
    plan["_path"] = path
    return plan


def _apply(vm: VM, env: dict[str, str], plan: dict[str, Any]) -> None:
    argv = ["apply", plan["_path"], "--yes"]
    if plan.get("target"):
        argv += ["--confirm", plan["target"]]
    forced = sorted({w["code"] for w in plan["preflight"]["warnings"]})
    if forced:
        argv += ["--force", *forced]
    res, code = vm.call_result("app.cli:main", argv, env=env, timeout=600)
    assert code == 0, res


def _disks_now(vm: VM, disks: list[str]) -> dict[str, tuple[str, list[str]]]:
    """Each disk's signatures (wipefs --no-act) and partitions (sysfs), as the kernel sees them."""
    out = {}
    for d in disks:
        sig = vm.run(["wipefs", "--no-act", "--json", f"/dev/{d}"], check=True).stdout.strip()
        parts = sorted(p.rsplit("/", 1)[-1] for p in vm.glob(f"/sys/block/{d}/{d}p*"))
        out[d] = (sig, parts)
    return out


def test_prepare_create_mount_stop_assemble_delete_leaves_the_disks_as_they_started(
    blank_vm: VM,
) -> None:
    vm = blank_vm
    fstab_before = vm.try_read("/etc/fstab")
    # virtme-ng mounts a file over /etc/fstab: a rename onto a mount point is EBUSY, so the
    # test takes it away (and puts it back afterwards) to have the plain file a host has
    bound = guest_mount_of(vm, "/etc/fstab")[0] == "/etc/fstab"
    while guest_mount_of(vm, "/etc/fstab")[0] == "/etc/fstab":
        vm.run(["umount", "/etc/fstab"], check=True)
    _mnt, fstype, _opts = guest_mount_of(vm, "/etc/fstab")
    if fstype not in ("overlay", "tmpfs"):
        pytest.fail(f"/etc in the guest is {fstype}: writing /etc/fstab would reach the host")
    vm.write("/etc/fstab", FSTAB_START)
    if guest_mount_of(vm, "/mnt")[0] != "/mnt":
        vm.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m,mode=755", "raidman-mnt", "/mnt"], check=True
        )
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    disks = vm.disks(4)
    parts = [f"{d}p1" for d in disks]
    start = _disks_now(vm, disks)
    env = _env(vm)
    try:
        with vm.timed("prepare"):
            _apply(vm, env, _plan(vm, env, "prepare", "prepare", "--devices", ",".join(disks)))
        for d in disks:
            assert vm.read(f"/sys/block/{d}/{d}p1/start").strip() == "2048"  # 1 MiB
        create = _plan(
            vm, env, "create", "create-array", "--level", "10", "--devices", ",".join(parts),
            "--name", "127", "--bitmap", "none",
        )  # fmt: skip
        with vm.timed("create"):
            _apply(vm, env, create)
        vm.wait_idle("md127", timeout=600)
        _apply(vm, env, _plan(vm, env, "mkfs", "filesystem", "--array", "md127", "--fs", "ext4"))
        mount = _plan(
            vm, env, "mount", "mount", "--device", "md127", "--mountpoint", MNT, "--fstab"
        )
        _apply(vm, env, mount)
        uuid = vm.run(["blkid", "-s", "UUID", "-o", "value", "/dev/md127"], check=True).stdout
        fstab = vm.read("/etc/fstab")
        (line,) = [ln for ln in fstab.splitlines() if ln.startswith("UUID=")]
        vm.note(f"fstab line: {line}")
        assert line.startswith(f"UUID={uuid.strip()} {MNT} ext4 ")
        assert "nofail" in line.split()[3].split(",")
        assert vm.read(backup_name("/etc/fstab", FSTAB_START)) == FSTAB_START
        assert vm.try_read("/etc/fstab.raidman-new") is None  # the copy is not left behind
        verify = vm.run(["findmnt", "--verify", "--tab-file", "/etc/fstab"])
        vm.note(f"findmnt --verify: rc {verify.returncode}: {verify.stdout.strip()[-200:]}")
        assert verify.returncode == 0, verify
        assert MNT in vm.read("/proc/mounts")

        res, code = vm.call_result("app.cli:main", ["plan", "stop", "--array", "md127"], env=env)
        assert code == 3 and f"mounted on {MNT}" in res.stderr, res  # refused while mounted
        vm.run(["umount", MNT], check=True)
        report = vm.report()
        (md,) = [a for a in report["arrays"] if a["name"] == "md127"]
        array_uuid = md["uuid"]
        assert all(m["superblock"]["events_behind"] == 0 for m in md["members"])
        _apply(vm, env, _plan(vm, env, "stop", "stop", "--array", "md127"))
        assert "md127" not in vm.read("/proc/mdstat")
        strays = vm.report()["stray_superblocks"]
        assert [sorted(d["device"] for d in s["devices"]) for s in strays] == [sorted(parts)]
        _apply(vm, env, _plan(vm, env, "assemble", "assemble", "--array", array_uuid))
        assert "md127 : active" in vm.read("/proc/mdstat")  # auto-read-only until written
        _apply(vm, env, _plan(vm, env, "delete", "delete", "--array", "md127"))
        assert "md127" not in vm.read("/proc/mdstat")
        for d in disks:
            _apply(vm, env, _plan(vm, env, f"wipe-{d}", "wipe", "--device", d))
        assert _disks_now(vm, disks) == start
        entries = [json.loads(x) for x in vm.read(f"{STATE}/audit.log").splitlines()]
        ran = [e for e in entries if e.get("event") == "executed"]
        # prepare 4 + create 1 (+ nothing else asked) + mkfs 1 + mount 8 (mkdir, mount, cmp,
        # backup, copy, tee, findmnt, mv) + stop 1 + assemble 1 + delete 9 + wipe 4
        assert len(ran) == 4 + 1 + 1 + 8 + 1 + 1 + 9 + 4, [e.get("argv") for e in ran]
        assert all(e.get("exit_code") == 0 for e in ran)
        assert not [e for e in entries if e.get("event") == "refused"]
    finally:
        vm.run(["umount", MNT])
        if fstab_before is None:
            vm.run(["rm", "-f", "/etc/fstab"])
        else:
            vm.write("/etc/fstab", fstab_before)
        if bound and fstab_before is not None:
            vm.write(SAVED, fstab_before)
            vm.run(["mount", "--bind", SAVED, "/etc/fstab"], check=True)
        vm.sh("rm -f /etc/fstab.raidman-backup-* /etc/fstab.raidman-new")
        if guest_mount_of(vm, "/mnt")[0] == "/mnt":
            vm.run(["umount", "/mnt"])


def test_a_removed_member_shows_its_events_behind_the_array(blank_vm: VM) -> None:
    vm = blank_vm
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    disks = vm.disks(4)
    create_array(
        vm, "md0", "raid10", disks, layout="n2", chunk_kib=64, size_kib=128 * 1024,
        bitmap="internal", extra=["--assume-clean"],
    )  # fmt: skip
    vm.wait_idle("md0", timeout=120)
    out = disks[2]
    vm.run(["mdadm", "/dev/md0", "--fail", f"/dev/{out}"], check=True)
    vm.run(["mdadm", "/dev/md0", "--remove", f"/dev/{out}"], check=True)
    vm.run(
        ["dd", "if=/dev/urandom", "of=/dev/md0", "bs=1M", "count=16", "oflag=direct",
         "status=none"],
        check=True,
    )  # fmt: skip
    export = vm.run(["mdadm", "--examine", "--export", f"/dev/{out}"], check=True).stdout
    plain = vm.run(["mdadm", "--examine", f"/dev/{out}"], check=True).stdout
    vm.note(f"mdadm --examine --export {out}: {export.strip()!r}")
    sb = parse_superblock(out, export, plain)  # the parser on mdadm's own output here
    assert sb.events is not None and sb.update_time is not None and sb.array_uuid
    report = vm.report()
    (md,) = [a for a in report["arrays"] if a["name"] == "md0"]
    members = {m["device"]: m["superblock"] for m in md["members"]}
    assert out not in members
    (outside,) = md["outside"]
    events = {d: s["events"] for d, s in members.items()}
    vm.note(
        f"events: array {outside['array_events']}, members {events}, "
        f"{out} (removed) {outside['events']}: {outside['events_behind']} behind"
    )
    assert outside["device"] == out and outside["events"] == sb.events
    assert outside["array_events"] == max(events.values())
    assert outside["events_behind"] > 0
    assert all(s["events_behind"] == 0 for s in members.values())
    assert outside["bitmap"] is not None and outside["device_role"].startswith("Active device")
