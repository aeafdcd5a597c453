"""Wizards → preview → executor → audit log, driven with Textual's Pilot INSIDE the guest (the TUI
needs the real kernel): tests/vm/guest_wizards.py runs ``RaidmanApp(LinuxBackend())`` headless in
a fork of the guest agent and returns what the screens showed and what ran; these tests compare
that with the kernel (sysfs, mdadm, tune2fs, wipefs/blkid, /sys/block/X/stat).

Every scenario keeps its own audit log: ``RAIDMAN_STATE_DIR`` = a fresh dir under the guest's /tmp
(tmpfs; the guest's root file system is the host's, read-only).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from tests.vm.kernel import lvm_report, read_md, sectors_written
from tests.vm.machine import VM
from tests.vm.scenarios import FAST_KIB, create_array, hold_sync

pytestmark = pytest.mark.vm

GW = "tests.vm.guest_wizards"
_preloaded: set[int] = set()


def _guest(vm: VM, func: str, *args: Any, **kwargs: Any) -> Any:
    """``tests.vm.guest_wizards:func`` in the guest (Textual pre-loaded once per VM)."""
    if id(vm) not in _preloaded:
        t0 = time.monotonic()
        failed = vm.preload(GW, "app.ui.app")
        assert not failed, failed
        _preloaded.add(id(vm))
        vm.note(
            f"timing: guest preload of the TUI (textual, app.ui.app): {time.monotonic() - t0:.1f} s"
        )
    t0 = time.monotonic()
    value = vm.call(f"{GW}:{func}", *args, timeout=600, **kwargs)
    vm.note(f"timing: TUI {func}({', '.join(map(str, args[1:3]))}): {time.monotonic() - t0:.1f} s")
    return value


def _state_dir(vm: VM, name: str, owner: str = "root") -> str:
    """A state directory as raidman accepts one: its user's own, mode 0700 (a world-writable
    one is refused, and the audit log with it: nothing would run)."""
    d = f"/tmp/raidman-wizards/{name}"
    vm.sh(
        f"mkdir -p /tmp/raidman-wizards && chmod 755 /tmp/raidman-wizards && rm -rf {d} && "
        f"mkdir -p {d} && chmod 700 {d} && chown {owner}:{owner} {d}"
    )
    return d


def _ran(audit: list[dict[str, Any]]) -> list[list[str]]:
    """What ran, from the audit log's "executed" entries (a piped step's producer first)."""
    out: list[list[str]] = []
    for e in audit:
        if e["event"] == "executed":
            if e.get("stdin_from"):
                out.append(e["stdin_from"])
            out.append(e["argv"])
    return out


def _previewed(preview: dict[str, Any]) -> list[list[str]]:
    """The commands the preview showed, in the order they run (a piped step's producer first)."""
    out: list[list[str]] = []
    for s in preview["steps"]:
        if s["stdin_from"]:
            out.append(s["stdin_from"])
        out.append(s["argv"])
    return out


def _disk_state(vm: VM, disks: list[str]) -> dict[str, Any]:
    """What a disk holds as the tools see it, plus the kernel's count of sectors written to it."""
    out: dict[str, Any] = {"written": sectors_written(vm, *disks)}
    for d in disks:
        w = vm.run(["wipefs", "--no-act", f"/dev/{d}"])
        b = vm.run(["blkid", "-p", "-o", "export", f"/dev/{d}"])
        out[d] = (w.returncode, w.stdout, b.returncode, b.stdout)
    return out


def _etc_is_writable_overlay(vm: VM) -> bool:
    """Whether /etc (or /etc/mdadm) is a guest-private writable mount (never write the host's)."""
    for line in vm.read("/proc/mounts").splitlines():
        f = line.split()
        if len(f) >= 4 and f[1] in ("/etc", "/etc/mdadm") and f[2] in ("tmpfs", "overlay"):
            return "rw" in f[3].split(",")
    return False


# ---------------------------------------------------------------------------------------------
def test_create_raid10_lvm_ext4_through_the_tui(blank_vm: VM) -> None:
    """Four blank NVMe disks → create-array wizard (RAID-10 n2, 32 KiB, no bitmap, name 127, LVM,
    ext4) → preview → typed name → Run. Audit log == preview; the kernel has what was asked."""
    vm = blank_vm
    disks = vm.disks(4)
    vm.set_speed_limits(FAST_KIB, FAST_KIB)  # let the initial resync finish quickly
    state = _state_dir(vm, "create")
    conf = _etc_is_writable_overlay(vm)
    if not conf:
        vm.note(
            "wizards: /etc is the host's read-only root in the guest: the create test leaves "
            "the mdadm.conf option off (and the initramfs one always: minutes under TCG)"
        )
    r = _guest(vm, "create_array", state, disks, confirm="127", conf=conf)

    p = r["preview"]
    assert set(disks) <= set(r["offered_devices"])
    assert p["refused"] == [] and p["warning_codes"] == [], (p["refused"], p["warnings"])
    # destructive: Run stays disabled until the target's name is typed
    assert p["destructive"] and p["needs_confirm"] and p["target"].endswith("127")
    assert p["run_disabled"] and "to confirm" in (p["why_not"] or "")
    assert r["run_disabled_before_run"] is False
    create = p["steps"][0]["argv"]
    assert create[:3] == ["mdadm", "--create", "/dev/md/127"]
    for opt in ("--level=10", "--raid-devices=4", "--layout=n2", "--bitmap=none", "--name=127"):
        assert opt in create, (opt, create)
    assert [a for a in create if a.startswith("/dev/nvme")] == [f"/dev/{d}" for d in disks]
    tools = [s["argv"][0] for s in p["steps"]]
    assert tools[-4:] == ["pvcreate", "vgcreate", "lvcreate", "mkfs.ext4"], tools
    # every previewed command line is on screen, numbered
    for i, s in enumerate(p["steps"], 1):
        assert f"{i}" in p["plan_text"] and s["argv"][0] in p["plan_text"]

    # what ran == what was previewed, in order, all exit 0, as root
    audit = r["audit"]
    assert _ran(audit) == _previewed(p)
    done = [e for e in audit if e["event"] == "executed"]
    assert [e["exit_code"] for e in done] == [0] * len(done)
    # each step: a "started" entry before it ran, an "executed" one after
    assert [e["event"] for e in audit] == ["started", "executed"] * len(done)
    assert {e["user"] for e in audit} == {"root"}
    assert r["statuses"] == ["ok"] * len(p["steps"])
    assert r["report"]["ok"] and "ran successfully" in r["status_line"]
    assert r["screen_after"] == "MainScreen"  # the wizard closed with the report

    # the kernel: md127 raid10, 32 KiB chunk, near-2 (layout 0x102 = 258), no bitmap
    k = read_md(vm, "md127")
    assert k.level == "raid10"
    assert k.num("chunk_size") == 32768
    assert k.num("layout") == 258
    assert k.get("bitmap/location") in (None, "none")
    assert set(k.members) == set(disks) and k.num("raid_disks") == 4
    assert vm.run(["readlink", "-f", "/dev/md/127"]).stdout.strip() == "/dev/md127"
    lvm = lvm_report(vm)
    assert [(pv["pv_name"], pv["vg_name"]) for pv in lvm["pv"]] == [("/dev/md127", "vg127")]
    assert [(lv["vg_name"], lv["lv_name"]) for lv in lvm["lv"]] == [("vg127", "data")]
    t = vm.run(["tune2fs", "-l", "/dev/vg127/data"], check=True).stdout
    assert re.search(r"^RAID stride:\s+8$", t, re.M), t
    assert re.search(r"^RAID stripe width:\s+16$", t, re.M), t
    assert re.search(r"^Block size:\s+4096$", t, re.M), t
    # and the TUI's re-probe after the run shows the new array
    assert any(a["name"] == "md127" and a["level"] == "raid10" for a in r["arrays_after"])
    if conf:
        text = vm.read("/etc/mdadm/mdadm.conf")
        assert re.search(r"^ARRAY /dev/md/127 .*name=\S*127", text, re.M), text
    secs = vm.wait_idle("md127", timeout=300)
    vm.note(f"timing: RAID-10 4x256 MiB initial resync finished {secs:.1f} s after the TUI run")


# ---------------------------------------------------------------------------------------------
def test_fail_remove_readd_member_through_the_tui(blank_vm: VM) -> None:
    """RAID-10 without a bitmap: fail → remove → re-add through the member wizard. mdadm refuses
    ``--re-add`` without a bitmap, so the wizard's re-add of the device that dropped out plans
    ``--add`` and says why (a full recovery writing the whole member); destructive, so the
    device's name is typed; its old md superblock is md127's own, so nothing is forced. The kernel recovers onto
    that member and finishes (degraded 0)."""
    vm = blank_vm
    disks = vm.disks(4)
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    create_array(vm, "md127", "raid10", disks, chunk_kib=32, layout="n2", bitmap="none")
    vm.wait_idle("md127", timeout=300)
    victim = disks[1]
    state = _state_dir(vm, "members")
    hold_sync(vm)  # the recovery the last step starts is held until the test has seen it
    fail, remove, readd = _guest(
        vm,
        "member_actions",
        state,
        "md127",
        [
            {"action": "fail", "device": victim, "confirm": "md127"},
            {"action": "remove", "device": victim},
            {"action": "re-add", "device": victim, "field": "new", "confirm": victim,
             "force": True},
        ],
    )  # fmt: skip
    # each step drove the field its action shows: the member Select (fail, remove), the device
    # picker of devices outside the array (a re-add of the device that dropped out)
    assert f"{victim}" in [c.split()[0] for c in fail["member_choices"]]
    assert fail["picker"] is None and remove["picker"] is None
    assert readd["picker"]["picked"] == [victim], readd["picker"]
    assert readd["picker"]["rows"][victim]["disabled"] is False
    # while they are in the array the other disks are greyed out in the picker as members
    for d in disks:
        if d != victim:
            assert "member of md127" in readd["picker"]["rows"][d]["label"]
            assert readd["picker"]["rows"][d]["disabled"]
    for r in (fail, remove, readd):
        vm.note(f"timing: TUI member step {r['preview']['steps'][0]['argv'][2]}: {r['seconds']} s")
    audit = readd["audit"]  # the whole session's log
    assert _ran(audit) == [_previewed(r["preview"])[0] for r in (fail, remove, readd)], audit

    # fail: the array's name is typed (issue 22: its partner in the n2 pair is then the only
    # copy), the loss of redundancy is said
    p = fail["preview"]
    assert fail["cursor_on_array"] and fail["preselected_array"] == "md127"
    assert [s["argv"][2:] for s in p["steps"]] == [["--fail", f"/dev/{victim}"]]
    assert p["needs_confirm"] and any("loses redundancy" in w for w in p["warnings"])
    (red,) = p["consequences"]["redundancy"]
    assert (red["now"], red["during"], red["after"]) == (1, 0, 0)
    assert red["lost_if"] == [disks[0]]  # slot 0: the other copy of slot 1's chunks
    assert fail["statuses"] == ["ok"]
    assert "faulty" in (fail["kernel"]["members"][victim] or "")
    assert fail["kernel"]["degraded"] == "1"

    # remove: the device leaves the array
    p = remove["preview"]
    assert [s["argv"][2:] for s in p["steps"]] == [["--remove", f"/dev/{victim}"]]
    assert remove["statuses"] == ["ok"]
    assert victim not in remove["kernel"]["members"] and remove["kernel"]["degraded"] == "1"
    assert any(a["degraded"] == 1 and victim not in a["members"] for a in remove["arrays_after"])

    # re-add without a bitmap: --add, with the reason and the cost; destructive → typed name; the
    # only signature on it is md127's own superblock (same array UUID, issue 22): nothing to force
    p = readd["preview"]
    assert [s["argv"][2:] for s in p["steps"]] == [["--add", f"/dev/{victim}"]]
    assert any("no write-intent bitmap" in w for w in p["warnings"]), p["warnings"]
    assert p["needs_confirm"] and p["refused"] == []
    assert "signatures" not in p["warning_codes"], p
    assert readd["statuses"] == ["ok"], readd.get("details")
    assert audit[-1]["forced"] == p["warning_codes"]
    assert victim in readd["kernel"]["members"]

    # the kernel recovers onto the victim, then the array is whole again
    vm.wait_action("md127", ["recover"], timeout=30)
    k = read_md(vm, "md127")
    assert victim in k.members and "in_sync" not in k.members[victim].state
    assert k.degraded == 1
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    secs = vm.wait_idle("md127", timeout=300)
    vm.note(f"timing: full recovery onto {victim} (256 MiB member): {secs:.1f} s")
    k = read_md(vm, "md127")
    assert k.degraded == 0 and k.in_sync() == set(disks)
    assert k.get("last_sync_action") == "recovery"


# ---------------------------------------------------------------------------------------------
def test_preflight_refuses_mounted_device_and_running_member(blank_vm: VM) -> None:
    """A mounted ext4 and a member of a running array: the device picker greys them out with the
    reason and does not take them (space on their line), so no plan can be made with them; ticked
    behind the picker's back, the preview refuses them, Run stays disabled, pressing it runs
    nothing (audit log empty, the disks unchanged as wipefs/blkid/sysfs see them)."""
    vm = blank_vm
    member, other_member, mounted, blank = vm.disks(4)
    create_array(vm, "md0", "raid1", [member, other_member], bitmap="none")
    vm.sh(
        f"mkfs.ext4 -q -F /dev/{mounted} && mkdir -p /tmp/wz-mnt && mount /dev/{mounted} /tmp/wz-mnt"
    )
    try:
        state = _state_dir(vm, "refuse")
        devs = [mounted, member, blank]
        before = _disk_state(vm, devs)
        r = _guest(
            vm, "create_array", state, devs, level="1", name="120", fs="none", lvm=False,
            confirm="120", force=True, bypass_picker=True,
        )  # fmt: skip
        after = _disk_state(vm, devs)
    finally:
        vm.run(["umount", "/tmp/wz-mnt"])
    rows = r["picker"]
    assert rows[mounted]["disabled"] and "mounted on /tmp/wz-mnt" in rows[mounted]["label"], rows
    assert rows[member]["disabled"] and "member of md0" in rows[member]["label"], rows
    assert not rows[blank]["disabled"] and "✗" not in rows[blank]["label"], rows
    # space on the greyed-out lines ticks nothing: only the blank disk, too few for a RAID-1
    assert r["picked"] == [blank]
    assert "RAID-1 needs at least 2 devices" in r["keys_wizard_error"], r["keys_wizard_error"]
    p = r["preview"]
    refused = "\n".join(p["refused"])
    assert re.search(rf"REFUSED {mounted}: .*mounted on /tmp/wz-mnt", refused), refused
    assert re.search(rf"REFUSED {member}: .*md0", refused), refused
    assert blank not in refused
    assert r["run_disabled_before_run"] and r["why_not_before_run"] == "pre-flight refuses a device"
    assert r["report"] is None and r["statuses"] == ["pending"] * len(p["steps"])
    assert r["audit"] == []
    # wipefs/blkid see the same on all three; the kernel wrote nothing to the member and the blank
    # disk (the mounted ext4 writes by itself: its lazy inode-table init and journal)
    for d in devs:
        assert after[d] == before[d], d
    for d in (member, blank):
        assert after["written"][d] == before["written"][d], d
    k = read_md(vm, "md0")  # the running array is untouched
    assert set(k.members) == {member, other_member} and k.degraded == 0
    assert vm.glob("/sys/block/md12*") == []


# ---------------------------------------------------------------------------------------------
def test_dry_run_and_non_root_execute_nothing(blank_vm: VM) -> None:
    """``raidman plan create-array --json`` → ``raidman apply --dry-run`` and a non-root
    ``raidman apply``: nothing runs (no executed audit entries, the disks unchanged)."""
    vm = blank_vm
    disks = vm.disks(4)
    state = _state_dir(vm, "cli")
    env = {"RAIDMAN_STATE_DIR": state}
    res, code = vm.call_result(
        "app.cli:main",
        ["plan", "create-array", "--level", "10", "--devices", ",".join(disks), "--chunk", "32K",
         "--layout", "n2", "--bitmap", "none", "--name", "127", "--json"],
        env=env,
    )  # fmt: skip
    assert res.ok and code in (0, None), res
    plan = json.loads(res.stdout)
    assert plan["steps"][0]["argv"][:3] == ["mdadm", "--create", "/dev/md/127"]
    path = f"{state}/plan.json"
    res_plan = res.stdout
    vm.write(path, res.stdout)
    vm.sh(f"chmod 644 {path}")
    before = _disk_state(vm, disks)

    res, code = vm.call_result("app.cli:main", ["apply", path, "--dry-run"], env=env)
    assert code == 0, res  # a dry run that passed its checks succeeds (issue 16)
    assert "dry run" in res.stdout and "mdadm --create /dev/md/127" in res.stdout

    # non-root: the agent's fork drops to nobody (uid/gid 65534, no groups) and runs the CLI
    # with a state directory of its own (root's is 0700); (a fresh `setpriv ... python` cannot:
    # the venv's interpreter lives under /root)
    nobody = _state_dir(vm, "cli-nobody", owner="65534")
    npath = f"{nobody}/plan.json"
    vm.write(npath, res_plan)
    vm.sh(f"chmod 644 {npath}")
    plain = _guest(vm, "cli_as_nobody", nobody, ["apply", npath, "--confirm", "127"])
    assert plain["euid"] == 65534 and plain["rc"] == 3, plain  # refused, never 0/1
    forced = _guest(
        vm,
        "cli_as_nobody",
        nobody,
        ["apply", npath, "--confirm", "127", "--force", "wipefs", "signatures"],
    )
    assert forced["rc"] == 3, forced
    assert "read-only: not root" in forced["stderr"], forced
    after = _disk_state(vm, disks)
    assert after == before
    assert vm.glob("/sys/block/md*") == []
    entries = [
        json.loads(x)
        for d in (state, nobody)
        for x in (vm.try_read(f"{d}/audit.log") or "").splitlines()
        if x
    ]
    assert [e for e in entries if e["event"] == "executed"] == []
    assert any(e["event"] == "refused" and "not root" in e["reason"] for e in entries), entries


# ---------------------------------------------------------------------------------------------
def test_failing_step_stops_the_plan(blank_vm: VM) -> None:
    """mdadm --create given a 32 KiB partition: step 1 fails with mdadm's stderr on screen, the
    rest (LVM, mkfs) is marked not run and never ran; no array exists."""
    vm = blank_vm
    small_disk, big = vm.disks(2)
    vm.sh(f"parted -s /dev/{small_disk} mklabel gpt unit s mkpart tiny 2048 2111 && udevadm settle")
    tiny = f"{small_disk}p1"
    assert vm.read(f"/sys/class/block/{tiny}/size").strip() == "64"
    state = _state_dir(vm, "failing")
    r = _guest(
        vm, "create_array", state, [tiny, big], level="1", name="125", fs="ext4", lvm=True,
        vg="vg125", confirm="125", force=True,
    )  # fmt: skip
    p = r["preview"]
    n = len(p["steps"])
    assert n >= 5 and p["refused"] == [], p
    rep = r["report"]
    first = rep["outcomes"][0]
    vm.note(
        f"wizards: mdadm --create with a 32 KiB member: exit {first['exit_code']}: {first['stderr'].strip()}"
    )
    assert first["status"] == "failed" and first["exit_code"] not in (0, None), rep
    assert r["statuses"] == ["failed"] + ["not-run"] * (n - 1)
    stderr = first["stderr"].strip()
    assert stderr and stderr.splitlines()[0] in r["details"][0]
    assert stderr.splitlines()[0] in r["plan_text_after"]
    assert f"step 1 of {n} failed" in r["status_line"] and f"{n - 1} not run" in r["status_line"]
    # only the failing step ran
    assert _ran(r["audit"]) == [p["steps"][0]["argv"]]
    executed = [e for e in r["audit"] if e["event"] == "executed"]  # "started" comes first
    assert executed[0]["exit_code"] == first["exit_code"]
    assert vm.glob("/sys/block/md*") == []
    assert vm.run(["vgs", "vg125"]).returncode != 0
