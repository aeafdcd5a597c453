"""Pre-flight: refusals (mounted, swap, held, boot/root) and warnings (signatures, sizes, media, count)."""

from __future__ import annotations

import json
from dataclasses import replace

from app.backend import CommandResult
from app.model import Machine, MdMember, Partition, SyncStatus
from app.model.smart import SmartAttribute, SmartReading
from app.model.usage import MOUNTS, KernelUsage
from app.plans.builders.members import build_add, build_re_add
from app.plans.builders.replace import build_replace
from app.plans.guards.plan_devices import plan_problems
from app.plans.guards.preflight import Issue, check
from app.plans.plan import Plan, Step
from app.plans.render import preflight_for
from backends.replay import ReplayBackend
from tests.corpus import FIXTURES
from tests.plans.fakes import (
    GIB,
    FakeBackend,
    array_machine,
    blank_machine,
    nvme,
    with_usage,
)


def _codes(issues: tuple[Issue, ...]) -> list[tuple[str, str]]:
    return [(i.code, i.device) for i in issues]


def test_blank_nvme_disks_pass_clean() -> None:
    m = blank_machine()
    be = FakeBackend(m)
    pf = check(m, ["nvme0n1", "/dev/nvme1n1", "nvme2n1", "nvme3n1"], backend=be, level="raid10")
    assert pf.refusals == () and pf.warnings == ()
    assert be.argvs == [("wipefs", "--no-act", "--json", f"/dev/nvme{i}n1") for i in range(4)]


def test_root_boot_disk_and_its_used_partitions_are_refused() -> None:
    m = blank_machine()
    pf = check(m, ["sda", "sda2", "sda3"])
    refused = _codes(pf.refusals)
    assert ("boot", "sda") in refused
    assert ("mounted", "sda2") in refused  # "/" itself
    assert ("swap", "sda3") in refused
    # a used partition is refused for its own use, not for the disk it is on
    assert [c for c, d in refused if d in ("sda2", "sda3")] == ["mounted", "swap"]
    assert "system-disk" not in pf.warning_codes
    msgs = " | ".join(str(r) for r in pf.refusals)
    assert "sda: is the system disk (holds /, /boot/efi)" in msgs
    assert "its partition sda2 is mounted on /" in msgs
    assert not pf.allows(["signatures", "size-mismatch", "mixed-media", "too-few", "system-disk"])


def _with_free_partitions(m: Machine, *parts: tuple[str, str, int]) -> Machine:
    """``m`` plus free partitions (name, disk, number) of 100 GiB, the kernel's tables redone."""
    new = tuple(
        Partition(name=n, parent=d, number=k, start_sector=k * 2**30, size_bytes=100 * GIB)
        for n, d, k in parts
    )
    m = replace(
        m,
        disks=tuple(replace(d, partition_table=d.partition_table or "gpt") for d in m.disks),
        partitions=(*m.partitions, *new),
        edges=(*m.edges, *((d, n) for n, d, _ in parts)),
    )
    return with_usage(m)


def test_free_partition_of_the_system_disk_is_allowed_with_a_warning() -> None:
    """Article 000 (/work/shared/seeds/000_d5848e1cef7805d7.txt, "Schritt 3"): the md array is
    created from partitions of the same disks that hold the EFI partition
    (``mdadm --create ... /dev/sda2 /dev/sdb2 /dev/sdc2 /dev/sdd2``, sdb1 "EFI System"): a
    free partition next to the system is the common first setup, not a refusal."""
    m = blank_machine()
    swap_on = tuple(  # sda3 as active swap ("[SWAP]" in lsblk, listed in /proc/swaps)
        replace(f, mountpoints=("[SWAP]",)) if f.device == "sda3" else f for f in m.filesystems
    )
    m = _with_free_partitions(
        replace(m, filesystems=swap_on), ("sda4", "sda", 4), ("sdb1", "sdb", 1)
    )
    pf = check(m, ["sda4", "sdb1"], level="raid1")
    assert pf.refusals == ()
    assert [(w.code, w.device) for w in pf.warnings if w.code == "system-disk"] == [
        ("system-disk", "sda4")
    ]
    w = next(w for w in pf.warnings if w.code == "system-disk")
    assert w.brief == "sda also holds / (sda2), /boot/efi (sda1) and active swap (sda3)"
    assert str(w).startswith("sda4: is on the system disk: sda also holds / (sda2)")
    assert not pf.allows(["size-mismatch", "mixed-media"])  # the warning must be forced
    assert pf.allows(["system-disk", "size-mismatch", "mixed-media"])
    # the whole disk is still refused: a create over it would destroy the system
    whole = check(m, ["sda", "sdb1"], level="raid1")
    assert ("boot", "sda") in _codes(whole.refusals)


def test_system_disk_partition_from_the_kernel_tables_names_the_stack() -> None:
    """ "/" on md0 built from sda1 (the model knows nothing of it: kernel tables only): sda2 is
    free and allowed; the warning names what carries "/" on sda."""
    m = _with_free_partitions(blank_machine(), ("sdb1", "sdb", 1), ("sdb2", "sdb", 2))
    m = replace(
        m,
        usage=KernelUsage(
            mounts=(("md0", "/"),),
            swaps=(),
            holders=(("sdb1", "md0"),),
            partitions=(("sdb1", "sdb"), ("sdb2", "sdb")),
        ),
        filesystems=(),
    )
    pf = check(m, ["sdb2"])
    assert pf.refusals == ()
    assert [str(w) for w in pf.warnings if w.code == "system-disk"] == [
        "sdb2: is on the system disk: sdb also holds / (md0 on sdb1); a mistake in the "
        "partition number destroys the system"
    ]
    assert ("boot", "sdb") in _codes(check(m, ["sdb"]).refusals)
    assert ("held", "sdb1") in _codes(check(m, ["sdb1"]).refusals)


def test_mounted_array_and_members_and_pv_refused_with_reason() -> None:
    m = array_machine()
    pf = check(m, ["md126", "nvme1n1", "sdf", "md127"])
    refused = {(r.code, r.device): r.message for r in pf.refusals}
    assert refused[("mounted", "md126")] == "is mounted on /srv"
    assert refused[("held", "nvme1n1")] == "is a member of the md array md127"
    assert refused[("held", "sdf")] == "is a member of the md array md126"
    assert refused[("held", "md127")] == "is an LVM physical volume of volume group vg127"


def test_device_held_by_device_mapper_is_refused() -> None:
    m = blank_machine()
    m = replace(m, edges=(*m.edges, ("nvme0n1", "dm-0")))
    pf = check(m, ["nvme0n1"])
    assert _codes(pf.refusals) == [("held", "nvme0n1")]
    assert "dm-0" in pf.refusals[0].message


def test_unknown_device_refused() -> None:
    pf = check(blank_machine(), ["nvme9n1"])
    assert _codes(pf.refusals) == [("unknown", "nvme9n1")]


def test_existing_signatures_warned_from_wipefs_json() -> None:
    m = blank_machine()
    be = FakeBackend(m)
    out = json.dumps(
        {
            "signatures": [
                {
                    "device": "nvme1n1",
                    "offset": "0x438",
                    "type": "ext4",
                    "uuid": "x",
                    "label": "old",
                },
                {
                    "device": "nvme1n1",
                    "offset": "0x1000",
                    "type": "linux_raid_member",
                    "uuid": "y",
                    "label": "h:0",
                },
            ]
        }
    )

    def r(argv: tuple[str, ...], stdin: str | None) -> CommandResult | None:
        if argv[-1] == "/dev/nvme1n1":
            return CommandResult(argv, 0, out, "")
        return None

    be.responders.append(r)
    pf = check(m, ["nvme0n1", "nvme1n1"], backend=be)
    assert pf.refusals == ()
    assert _codes(pf.warnings) == [("signatures", "nvme1n1")]
    assert "ext4 label 'old' at 0x438" in pf.warnings[0].message
    assert "linux_raid_member" in pf.warnings[0].message
    assert not pf.allows([]) and pf.allows(["signatures"])


def test_wipefs_missing_is_a_warning_not_a_crash() -> None:
    m = blank_machine()
    be = FakeBackend(m)
    be.fail_when("wipefs", 127)
    pf = check(m, ["nvme0n1"], backend=be)
    assert _codes(pf.warnings) == [("wipefs", "nvme0n1")]
    assert "not found" in pf.warnings[0].message


def test_size_mismatch_reports_lost_bytes() -> None:
    m = blank_machine()
    m = replace(
        m, disks=(nvme("nvme0n1"), nvme("nvme1n1", 1200 * GIB), nvme("nvme2n1", 1100 * GIB))
    )
    pf = check(m, ["nvme0n1", "nvme1n1", "nvme2n1"], level="raid5")
    (w,) = pf.warnings
    assert w.code == "size-mismatch"
    assert f"{300 * GIB} bytes" in w.message and "300 GiB" in w.message


def test_mixed_rotational_and_ssd_warned() -> None:
    m = blank_machine()
    pf = check(m, ["nvme0n1", "sdb"], level="raid1", check_sizes=False)
    assert [w.code for w in pf.warnings] == ["mixed-media"]


def test_device_count_below_mdadm_minimum_is_refused_above_it_too_few_warns() -> None:
    """mdadm Create.c: "at least 4 raid-devices needed for level 6", "at least 2 raid-devices
    needed for level 4 or 5"; mdadm.c: 1 device needs --force; raid10.c: copies > raid_disks is
    an unsupported layout."""
    m = blank_machine()
    two = ["nvme0n1", "nvme1n1"]
    three = [*two, "nvme2n1"]
    pf = check(m, three, level="6")
    assert [(r.code, r.message) for r in pf.refusals] == [
        ("device-count", "raid6 needs at least 4 devices (mdadm refuses fewer), 3 given")
    ]
    assert [w.code for w in pf.warnings] == []
    assert [r.code for r in check(m, ["nvme0n1"], level="raid1").refusals] == ["device-count"]
    assert [r.code for r in check(m, ["nvme0n1"], level="raid5").refusals] == ["device-count"]
    n3 = check(m, two, level="10", layout="n3")
    assert [r.code for r in n3.refusals] == ["device-count"]
    assert "layout n3 keeps 3 copies" in n3.refusals[0].message
    assert check(m, two, level="10", layout="n2").refusals == ()
    r5 = check(m, two, level="raid5")  # mdadm accepts it: a forcible warning
    assert r5.refusals == () and [w.code for w in r5.warnings] == ["too-few"]
    assert check(m, three, level="raid5").warnings == ()
    assert check(m, [*three, "nvme3n1"], level="raid6").refusals == ()


# ---- in use from the kernel's own tables (Machine.usage) ----------------------------------------

DEVHOST = FIXTURES / "preflight" / "devhost-root-on-vda"


def test_devhost_capture_root_disk_refused_though_blkid_was_denied() -> None:
    """Issue 11's machine (tests/fixtures/preflight/devhost-root-on-vda/README): lsblk has no
    FSTYPE for vda; mountinfo's 254:0 → vda says it holds "/" (and, since issue 24, its ext4
    comes from mountinfo's type)."""
    m = ReplayBackend(DEVHOST).probe()
    fs = m.filesystem("vda")
    assert fs is not None and (fs.fstype, fs.mountpoints) == ("ext4", ("/",))
    assert m.usage is not None and m.usage.unread == ()
    pf = check(m, ["vda", "zram0"], level="raid1")
    refused = {(r.code, r.device): r.message for r in pf.refusals}
    assert refused[("mounted", "vda")] == "is mounted on /"
    assert refused[("boot", "vda")] == "is the system disk (holds /)"
    assert refused[("empty", "zram0")] == "has no capacity (0 bytes)"


def test_old_capture_without_swaps_or_holders_refuses_as_not_recorded() -> None:
    m = ReplayBackend(FIXTURES / "captures" / "raid5-raid10-clean").probe()
    pf = check(m, ["nvme0n1"])
    msgs = [r.message for r in pf.refusals if r.code == "unchecked"]
    assert any("/proc/swaps not recorded in this capture" in s for s in msgs), pf.refusals
    assert any(s.startswith("cannot check its holders: ") for s in msgs)


def test_machine_without_kernel_tables_is_refused_not_passed() -> None:
    m = replace(blank_machine(), usage=None)
    pf = check(m, ["nvme0n1"])
    assert _codes(pf.refusals) == [("unchecked", "nvme0n1")]
    assert "mounts, swaps and holders were not read" in pf.refusals[0].message


def test_unreadable_mountinfo_refuses_every_device() -> None:
    m = blank_machine()
    assert m.usage is not None
    m = replace(
        m, usage=replace(m.usage, unread=((MOUNTS, "/proc/self/mountinfo: permission denied"),))
    )
    pf = check(m, ["nvme0n1", "nvme1n1"])
    assert [str(r) for r in pf.refusals] == [
        "nvme0n1: cannot check its mounts: /proc/self/mountinfo: permission denied",
        "nvme1n1: cannot check its mounts: /proc/self/mountinfo: permission denied",
    ]


def test_kernel_mount_and_holder_chain_without_any_model_filesystem() -> None:
    """nvme0n1p1 → md5 → dm-7 mounted on /srv, known only from the kernel's tables (no lsblk
    FSTYPE, no md or LVM in the model): the disk and its partition are refused, with the path."""
    m = blank_machine()
    m = replace(
        m,
        usage=KernelUsage(
            mounts=(("dm-7", "/srv"), ("sda2", "/")),
            swaps=(("nvme2n1", "/dev/nvme2n1"),),
            holders=(("nvme0n1p1", "md5"), ("md5", "dm-7")),
            partitions=(("nvme0n1p1", "nvme0n1"), ("sda2", "sda")),
        ),
    )
    pf = check(m, ["nvme0n1", "nvme2n1", "sda"])
    msgs = [str(r) for r in pf.refusals]
    assert "nvme0n1: its partition nvme0n1p1 is held by md5" in msgs
    assert "nvme0n1: its partition nvme0n1p1 holds md5 → dm-7, mounted on /srv" in msgs
    assert "nvme2n1: is active swap" in msgs
    assert "nvme2n1: is the system disk (holds active swap)" in msgs
    assert "sda: is the system disk (holds /, /boot/efi)" in msgs


# ---- SMART, size, sector size, sync-busy ----------------------------------------------------------


def _failed(disk: str) -> SmartReading:
    return SmartReading(device=disk, available=True, health="FAILED")


def test_smart_failed_refused_as_new_member_counts_warned() -> None:
    m = blank_machine()
    smart = {
        "nvme0n1": _failed("nvme0n1"),
        "nvme1n1": SmartReading(
            device="nvme1n1",
            available=True,
            health="PASSED",
            attributes=(
                SmartAttribute(id=197, name="Current_Pending_Sector", raw=3),
                SmartAttribute(id=199, name="UDMA_CRC_Error_Count", raw=12),
            ),
        ),
    }
    pf = check(m, ["nvme0n1", "nvme1n1"], level="raid1", smart=smart)
    assert [(r.code, r.device) for r in pf.refusals] == [("smart-failed", "nvme0n1")]
    assert [(w.code, w.message) for w in pf.warnings] == [
        ("smart", "SMART shows 3 pending sectors, 12 UDMA CRC errors")
    ]


def test_smart_failed_replacement_and_re_add_targets_refused_via_the_backend() -> None:
    m = array_machine(degraded_member="nvme3n1")
    be = FakeBackend(
        m, smart_readings={"nvme4n1": _failed("nvme4n1"), "nvme3n1": _failed("nvme3n1")}
    )
    add = build_add(m, "md127", "nvme4n1")
    pf = preflight_for(add, m, be)
    assert ("smart-failed", "nvme4n1") in _codes(pf.refusals)
    # a spare that is already in the array: --replace writes onto it, so SMART is checked
    spare_in = replace(
        m,
        arrays=(
            replace(
                m.arrays[0],
                members=(
                    *m.arrays[0].members,
                    MdMember(device="nvme4n1", slot=None, state=("spare",)),
                ),
            ),
            m.arrays[1],
        ),
    )
    rep = build_replace(spare_in, "md127", "nvme0n1", "nvme4n1")
    assert _codes(preflight_for(rep, spare_in, be).refusals) == [("smart-failed", "nvme4n1")]


def test_device_smaller_than_the_members_of_the_array_is_refused() -> None:
    m = array_machine(degraded_member="nvme3n1")
    arr = m.arrays[0]
    members = tuple(
        replace(mm, size_kib=900 * 1024 * 1024, data_offset_sectors=2048 * 128)
        for mm in arr.members
    )
    small = replace(m.disks[4], size_bytes=800 * GIB)
    m = replace(
        m,
        arrays=(replace(arr, members=members), m.arrays[1]),
        disks=(*m.disks[:4], small, *m.disks[5:]),
    )
    pf = preflight_for(build_add(m, "md127", "nvme4n1"), m, None)
    (r,) = [r for r in pf.refusals if r.code == "too-small"]
    need = 128 * 1024**2 + 900 * GIB
    assert r.message == f"is 800 GiB; each member of md127 needs 900.1 GiB ({need} bytes)"
    big = replace(small, size_bytes=need)
    m2 = replace(m, disks=(*m.disks[:4], big, *m.disks[5:]))
    assert preflight_for(build_add(m2, "md127", "nvme4n1"), m2, None).refusals == ()


def test_members_with_different_sector_sizes_warned() -> None:
    m = blank_machine()
    d0 = replace(m.disks[0], logical_sector=4096, physical_sector=4096)
    m = replace(m, disks=(d0, *m.disks[1:]))
    pf = check(m, ["nvme0n1", "nvme1n1"], level="raid1")
    (w,) = [w for w in pf.warnings if w.code == "sector-size"]
    assert "nvme0n1 4096/4096, nvme1n1 512/512" in w.message


def test_grow_during_a_sync_is_refused_as_busy_and_the_bitmap_fix_waits() -> None:
    m = array_machine(bitmap=None)
    syncing = replace(
        m.arrays[0], sync=SyncStatus(action="recover", done_sectors=1, total_sectors=4)
    )
    m = replace(m, arrays=(syncing, m.arrays[1]))
    plan = Plan(
        "add bitmap",
        (Step.decode(("mdadm", "--grow", "/dev/md127", "--bitmap=internal"), "add a bitmap"),),
        target="md127",
        kind="audit-md-bitmap",
    )
    pf = preflight_for(plan, m, None)
    assert [(r.code, r.device) for r in pf.refusals] == [("busy", "md127")]
    assert "is running a recover (25% done): md answers EBUSY" in pf.refusals[0].message
    assert "run it after the recover ends" in pf.refusals[0].message
    idle = replace(m, arrays=(replace(syncing, sync=SyncStatus(action="idle")), m.arrays[1]))
    assert preflight_for(plan, idle, None).refusals == ()


def test_smart_failed_re_add_target_refused() -> None:
    m = array_machine(bitmap="internal", degraded_member="nvme3n1")
    be = FakeBackend(m, smart_readings={"nvme3n1": _failed("nvme3n1")})
    pf = preflight_for(build_re_add(m, "md127", "nvme3n1"), m, be)
    assert _codes(pf.refusals) == [("smart-failed", "nvme3n1")]
    assert be.smart_asked == ["nvme3n1"]
    healthy = FakeBackend(m)
    assert preflight_for(build_re_add(m, "md127", "nvme3n1"), m, healthy).refusals == ()


def _member_faulty(m: Machine, dev: str) -> Machine:
    a = m.arrays[0]
    members = tuple(
        replace(x, state=("faulty",), slot=None) if x.device == dev else x for x in a.members
    )
    return replace(m, arrays=(replace(a, members=members, degraded=1), m.arrays[1]))


def test_re_add_as_add_of_a_member_the_plan_removes_is_checked_for_health_not_emptiness() -> None:
    """Issue 16 point 5: fail + remove + add of the same member in one plan. The member is in
    use by this very array until the plan takes it out: pre-flight must not refuse it as held,
    but a SMART-FAILED member is still refused."""
    m = array_machine(bitmap=None)
    plan = build_re_add(m, "md127", "nvme2n1")
    assert [s.argv[2] for s in plan.steps] == ["--fail", "--remove", "--add"]
    assert plan_problems(plan, m) == []
    assert preflight_for(plan, m, FakeBackend(m)).refusals == ()
    be = FakeBackend(m, smart_readings={"nvme2n1": _failed("nvme2n1")})
    assert _codes(preflight_for(plan, m, be).refusals) == [("smart-failed", "nvme2n1")]


def test_a_remove_then_add_of_a_device_that_is_no_member_is_still_checked() -> None:
    """A tampered plan cannot launder a device through --remove: sdc is in md126, not md127."""
    m = array_machine()
    plan = Plan(
        "re-add",
        (
            Step.decode(("mdadm", "/dev/md127", "--remove", "/dev/sdc"), "x"),
            Step.decode(("mdadm", "/dev/md127", "--add", "/dev/sdc"), "x", destructive=True),
        ),
        target="sdc",
        kind="member-re-add",
        params={"array": "md127", "action": "re-add", "device": "sdc"},
    )
    pf = preflight_for(plan, m, None)
    assert ("held", "sdc") in _codes(pf.refusals)


def test_replace_of_a_faulty_member_checks_the_new_device() -> None:
    """Replace = remove + add NEW: NEW eligible (not in use), big enough, not SMART FAILED."""
    m = _member_faulty(array_machine(), "nvme2n1")
    plan = build_replace(m, "md127", "nvme2n1", "nvme4n1")
    assert [s.argv[2] for s in plan.steps] == ["--remove", "--add"]
    assert plan_problems(plan, m) == []
    assert preflight_for(plan, m, FakeBackend(m)).refusals == ()
    be = FakeBackend(m, smart_readings={"nvme4n1": _failed("nvme4n1")})
    assert _codes(preflight_for(plan, m, be).refusals) == [("smart-failed", "nvme4n1")]
    # a new device in use elsewhere (a member of md126)
    held = build_replace(m, "md127", "nvme2n1", "sdc")
    assert ("held", "sdc") in _codes(preflight_for(held, m, None).refusals)
    # too small for md127's members
    a = m.arrays[0]
    sized = tuple(replace(x, size_kib=900 * 1024 * 1024) for x in a.members)
    small = replace(m.disks[4], size_bytes=800 * GIB)
    m2 = replace(
        m,
        arrays=(replace(a, members=sized), m.arrays[1]),
        disks=(*m.disks[:4], small, *m.disks[5:]),
    )
    pf = preflight_for(build_replace(m2, "md127", "nvme2n1", "nvme4n1"), m2, None)
    assert ("too-small", "nvme4n1") in _codes(pf.refusals)
    # the hot replace of a working member: its steps pass the allowlist as well
    hot = build_replace(array_machine(), "md127", "nvme2n1", "nvme4n1")
    assert plan_problems(hot, array_machine()) == []


def test_a_former_member_back_into_its_own_array_is_not_asked_to_force_signatures() -> None:
    """Issue 22: sdd2 failed and removed from md127, then added back: the only signature on it
    is md127's own superblock (same array UUID), so no 'signatures' warning stops apply; the
    same device added to another array (a foreign UUID) still warns."""
    from backends.simulated import SimulatedBackend
    from backends.simulated.clock import SimClock

    be = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual())
    assert be.run(["mdadm", "/dev/md127", "--fail", "/dev/sdd2"]).ok
    assert be.run(["mdadm", "/dev/md127", "--remove", "/dev/sdd2"]).ok
    m = be.probe()
    a = m.array("md127")
    assert a is not None and a.member("sdd2") is None and a.uuid
    pf = preflight_for(build_add(m, "md127", "sdd2"), m, be)
    assert pf.refusals == () and pf.warnings == ()
    # another array's UUID on the same device: a foreign superblock is still a warning
    other = replace(m, arrays=(replace(a, uuid="11111111-2222-3333-4444-555555555555"),))
    pf2 = preflight_for(build_add(other, "md127", "sdd2"), other, be)
    assert [(w.code, w.device) for w in pf2.warnings] == [("signatures", "sdd2")]
