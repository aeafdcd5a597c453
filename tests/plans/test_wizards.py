"""Wizard behaviour beyond the argv: explanations, refusals, geometry math, mdadm.conf diff."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.model import Filesystem, Machine
from app.plans.builders.create_array import CreateArrayParams, build_create_array, conf_diff
from app.plans.builders.filesystem import FilesystemParams, array_refusals, build_filesystem
from app.plans.builders.members import build_fail, build_grow, build_re_add, build_remove
from app.plans.builders.replace import build_replace
from app.plans.builders.sync_actions import build_stripe_cache, build_sync_action
from app.plans.geometry import KIB, MIB, Geometry, PlanError, data_disks, parse_size
from app.plans.guards.allowlist import argv_problem
from app.plans.guards.plan_devices import plan_problems
from app.plans.plan import Plan
from app.plans.render import preflight_for
from tests.plans.fakes import array_machine, blank_machine, with_usage

NVME4 = ("nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1")


@pytest.mark.parametrize(
    ("level", "n", "layout", "want"),
    [
        ("raid0", 4, None, 4),
        ("raid1", 3, None, 1),
        ("raid5", 4, None, 3),
        ("raid6", 6, None, 4),
        ("raid10", 4, "n2", 2),
        ("raid10", 6, "n3", 2),
        ("raid4", 3, None, 2),
    ],
)
def test_data_disks(level: str, n: int, layout: str | None, want: int) -> None:
    assert data_disks(level, n, layout) == want


def test_ext4_stride_from_article() -> None:
    g = Geometry("raid10", 4, 32 * KIB, "n2")
    assert g.ext4() == (8, 16)
    assert Geometry("raid10", 4, 512 * KIB, "n2").ext4() == (128, 256)
    assert Geometry("raid5", 4, 512 * KIB).xfs() == ("512k", 3)
    assert g.stripe_bytes == 64 * KIB


def test_parse_size() -> None:
    assert parse_size("32K") == 32 * KIB
    assert parse_size("32") == 32 * KIB  # mdadm's unit: KiB
    assert parse_size("1M") == 1024 * KIB
    with pytest.raises(PlanError):
        parse_size("lots")


def test_create_explains_stride_and_chunk_and_name() -> None:
    plan = build_create_array(
        blank_machine(),
        CreateArrayParams(
            level="10",
            devices=NVME4,
            chunk_bytes=32 * KIB,
            layout="n2",
            bitmap="none",
            name="127",
            filesystem=FilesystemParams(lvm=True),
        ),
    )
    mkfs = plan.steps[-1]
    assert "stride = chunk 32K / block 4K = 8" in mkfs.why
    assert "RAID-10 n2 of 4: 4 / 2 near copies = 2" in mkfs.why
    assert "stripe_width = 8 × 2 = 16" in mkfs.why
    notes = "\n".join(plan.notes)
    assert "512 KiB" in notes and "32 KiB" in notes  # chunk guidance stated
    assert "stable as /dev/md127" in notes
    assert "bitmap none" in notes
    assert plan.destructive and plan.target == "127"
    [wear] = plan.warnings  # NVMe members: the initial sync's writes are stated
    assert "initial sync" in wear
    assert "--dataalignment = chunk 32K × 2 data disks = 64K" in plan.steps[1].why


def test_default_chunk_is_stated_and_non_numeric_name_warned() -> None:
    plan = build_create_array(
        blank_machine(), CreateArrayParams(level="5", devices=NVME4[:3], name="data")
    )
    assert "--chunk=512K" in plan.steps[0].argv
    assert any("512K (default)" in n for n in plan.notes)
    assert any("not a 3-digit number" in w for w in plan.warnings)


@pytest.mark.parametrize(
    ("params", "msg"),
    [
        (CreateArrayParams(level="7", devices=NVME4), "unknown RAID level"),
        (CreateArrayParams(level="10", devices=NVME4, layout="x2"), "layout"),
        (CreateArrayParams(level="1", devices=NVME4[:2], chunk_bytes=64 * KIB), "no chunk"),
        (CreateArrayParams(level="0", devices=NVME4[:2], chunk_bytes=48 * KIB), "power of two"),
        (CreateArrayParams(level="0", devices=NVME4[:2], spares=NVME4[2:3]), "spares"),
        (CreateArrayParams(level="1", devices=("nvme0n1", "nvme0n1")), "twice"),
        (CreateArrayParams(level="1", devices=NVME4[:2], name="127"), "already exists"),
    ],
)
def test_create_refuses_bad_input(params: CreateArrayParams, msg: str) -> None:
    with pytest.raises(PlanError, match=msg):
        build_create_array(array_machine(), params)


def test_free_name_skips_existing_arrays() -> None:
    plan = build_create_array(
        array_machine(), CreateArrayParams(level="1", devices=("nvme4n1", "sdc"))
    )
    assert plan.params["name"] == "125"  # 127 and 126 exist


def test_conf_diff_shows_missing_and_stale_lines() -> None:
    conf = "DEVICE partitions\nARRAY /dev/md/old metadata=1.2 UUID=11:11:11:11 name=h:old\n"
    scan = "ARRAY /dev/md/127 metadata=1.2 name=h:127 UUID=aa:bb:cc:dd\n"
    diff = conf_diff(conf, scan)
    assert diff == [
        "+ ARRAY /dev/md/127 metadata=1.2 name=h:127 UUID=aa:bb:cc:dd",
        "- ARRAY /dev/md/old metadata=1.2 UUID=11:11:11:11 name=h:old   (no running array with this UUID)",
    ]
    assert conf_diff(scan, scan) == []
    plan = build_create_array(
        blank_machine(),
        CreateArrayParams(level="1", devices=NVME4[:2], name="120", update_conf=True),
        current_conf=conf,
        current_scan=scan,
    )
    assert any("+ ARRAY /dev/md/127" in n for n in plan.notes)


def test_filesystem_on_raid1_has_no_stride() -> None:
    m = array_machine()
    plan = build_create_array(
        blank_machine(),
        CreateArrayParams(level="1", devices=NVME4[:2], name="101", filesystem=FilesystemParams()),
    )
    assert plan.steps[-1].argv == ("mkfs.ext4", "-b", "4096", "/dev/md/101")
    with pytest.raises(PlanError, match="no md array"):
        build_filesystem(m, "md9", FilesystemParams())


def test_re_add_without_bitmap_says_full_rebuild() -> None:
    m = array_machine(bitmap=None, degraded_member="nvme1n1")
    plan = build_re_add(m, "md127", "nvme1n1")
    # mdadm refuses --re-add without a bitmap (tests/vm/test_recovery.py): the plan adds instead
    (step,) = plan.steps
    assert step.argv == ("mdadm", "/dev/md127", "--add", "/dev/nvme1n1") and step.destructive
    assert "full recovery writing the whole member" in step.why
    assert "1.00 × its capacity, measured on a real kernel" in step.why
    assert plan.target == "nvme1n1" and plan.params["method"] == "add"
    assert any("no write-intent bitmap" in w and "rebuilt in full" in w for w in plan.warnings)
    assert any(n.startswith("cost without a write-intent bitmap") for n in plan.notes)
    m2 = array_machine(bitmap="internal", degraded_member="nvme1n1")
    plan2 = build_re_add(m2, "md127", "nvme1n1")
    assert "bitmap" in plan2.steps[0].why and "quick" in plan2.steps[0].why
    assert plan2.steps[0].argv[2] == "--re-add" and not plan2.destructive
    assert plan2.warnings == ()
    assert any("only the bitmap chunks written while nvme1n1 was out" in n for n in plan2.notes)


def _sized(m: Machine, member_gib: int = 900) -> Machine:
    """``m`` with md/dev-*/size known for md127's members."""
    a = m.arrays[0]
    members = tuple(replace(x, size_kib=member_gib * 1024 * 1024) for x in a.members)
    return replace(m, arrays=(replace(a, members=members), *m.arrays[1:]))


def _faulty(m: Machine, dev: str) -> Machine:
    a = m.arrays[0]
    members = tuple(
        replace(x, state=("faulty",), slot=None) if x.device == dev else x for x in a.members
    )
    return replace(m, arrays=(replace(a, members=members, degraded=1), *m.arrays[1:]))


def test_re_add_an_active_member_is_fail_remove_re_add_in_one_plan() -> None:
    m = _sized(array_machine(bitmap="internal"))
    plan = build_re_add(m, "md127", "nvme2n1")
    assert [s.argv[2] for s in plan.steps] == ["--fail", "--remove", "--re-add"]
    assert all(s.argv[1] == "/dev/md127" and s.argv[-1] == "/dev/nvme2n1" for s in plan.steps)
    assert any("loses redundancy" in w for w in plan.warnings)
    # the cost with the bitmap, and what it would be without: the member's size (900 GiB)
    assert any("900 GiB (1.00 × its capacity" in n for n in plan.notes), plan.notes
    # without a bitmap: the same trip ends in --add, a full recovery of the member's 900 GiB
    nob = build_re_add(_sized(array_machine(bitmap=None)), "md127", "nvme2n1")
    assert [s.argv[2] for s in nob.steps] == ["--fail", "--remove", "--add"]
    assert any("the whole member, 900 GiB (1.00 × its capacity" in n for n in nob.notes)
    # a faulty member is not failed again
    faulty = build_re_add(_faulty(array_machine(bitmap="internal"), "nvme2n1"), "md127", "nvme2n1")
    assert [s.argv[2] for s in faulty.steps] == ["--remove", "--re-add"]
    assert not any("loses redundancy" in w for w in faulty.warnings)


def test_re_add_refusals() -> None:
    degraded = array_machine(bitmap="internal", degraded_member="nvme1n1")
    with pytest.raises(PlanError, match="would stop md127"):
        build_re_add(degraded, "md127", "nvme0n1")  # nvme0n1's mirror half is out already
    with pytest.raises(PlanError, match="spare of md126: it holds no data to re-add"):
        build_re_add(array_machine(), "md126", "sdf")
    with pytest.raises(PlanError, match="no device"):
        build_re_add(degraded, "md127", "nvme9n1")


def test_replace_a_working_member_is_hot_replace() -> None:
    m = array_machine()
    plan = build_replace(m, "md127", "nvme2n1", "nvme4n1")
    assert [s.argv[2] for s in plan.steps] == ["--add-spare", "--replace"]
    assert plan.steps[1].argv[2:] == ("--replace", "/dev/nvme2n1", "--with", "/dev/nvme4n1")
    assert plan.params["method"] == "hot" and plan.target == "nvme4n1"
    assert "redundancy is kept" in plan.steps[1].why
    assert not any("loses redundancy" in w for w in plan.warnings)
    assert any("onto nvme4n1" in n and "does not shorten" in n for n in plan.notes)


def test_replace_a_faulty_member_is_remove_and_add() -> None:
    m = _faulty(array_machine(), "nvme2n1")
    plan = build_replace(m, "md127", "nvme2n1", "nvme4n1")
    assert [s.argv[2:] for s in plan.steps] == [
        ("--remove", "/dev/nvme2n1"),
        ("--add", "/dev/nvme4n1"),
    ]
    assert plan.params["method"] == "fail-remove-add" and plan.destructive
    assert any("nothing to copy from it" in n for n in plan.notes)
    with pytest.raises(PlanError, match="copies from a working member"):
        build_replace(m, "md127", "nvme2n1", "nvme4n1", method="hot")
    # asked for: fail + remove + add of a working member, saying what --replace would keep
    forced = build_replace(array_machine(), "md127", "nvme2n1", "nvme4n1", method="fail-remove-add")
    assert [s.argv[2] for s in forced.steps] == ["--fail", "--remove", "--add"]
    assert any("loses redundancy" in w for w in forced.warnings)
    assert any("--replace would keep" in n for n in forced.notes)


def test_replace_refusals() -> None:
    m = array_machine()
    with pytest.raises(PlanError, match="with itself"):
        build_replace(m, "md127", "nvme2n1", "nvme2n1")
    with pytest.raises(PlanError, match="already an active member"):
        build_replace(m, "md127", "nvme2n1", "nvme3n1")
    with pytest.raises(PlanError, match="is a spare of md126"):
        build_replace(m, "md126", "sdf", "nvme4n1")
    with pytest.raises(PlanError, match="not a member"):
        build_replace(m, "md127", "nvme4n1", "sdf")
    with pytest.raises(PlanError, match="unknown replace method"):
        build_replace(m, "md127", "nvme2n1", "nvme4n1", method="yolo")


def test_member_refusals() -> None:
    m = array_machine()
    with pytest.raises(PlanError, match="fail it first"):
        build_remove(m, "md127", "nvme0n1")
    with pytest.raises(PlanError, match="not a member"):
        build_fail(m, "md127", "nvme4n1")
    degraded = array_machine(degraded_member="nvme1n1")
    with pytest.raises(PlanError, match="would stop"):
        build_fail(degraded, "md127", "nvme0n1")
    with pytest.raises(PlanError, match="more devices"):
        build_grow(m, "md126", 6)


def test_grow_uses_backup_file_for_old_metadata() -> None:
    from dataclasses import replace

    m = array_machine()
    a = m.array("md126")
    assert a is not None
    m2 = replace(m, arrays=(m.arrays[0], replace(a, metadata="0.90")))
    plan = build_grow(m2, "md126", 4)
    assert plan.steps[-1].argv[-1] == "--backup-file=/root/md126-grow.backup"
    assert not any(x.startswith("--backup-file") for x in build_grow(m, "md126", 4).steps[-1].argv)


def test_stripe_cache_memory_cost_and_level_check() -> None:
    m = array_machine()
    plan = build_stripe_cache(m, "md126", 8192)
    assert plan.params["memory_bytes"] == 8192 * 4096 * 3
    assert any("8192 entries × 4 KiB × 3 members = 96 MiB" in n for n in plan.notes)
    with pytest.raises(PlanError, match="RAID-4/5/6"):
        build_stripe_cache(m, "md127", 8192)
    with pytest.raises(PlanError):
        build_sync_action(m, "md127", "scrub")


def test_repair_note_per_level() -> None:
    """md's repair on RAID-4/5/6 recomputes parity from the data blocks (it never rewrites data);
    on mirrors it copies one copy over the others. The old note said "trusts the first
    copy/parity" for every level (issue 12, "Wrong today" 3)."""
    m = array_machine()
    r5 = build_sync_action(m, "md126", "repair")
    assert any("recomputes parity from the data blocks" in n for n in r5.notes)
    assert not any("first copy/parity" in n for n in r5.notes)
    r10 = build_sync_action(m, "md127", "repair")
    assert any("copies one readable copy" in n for n in r10.notes)
    assert not any("parity" in n for n in r10.notes)


def test_create_refuses_fewer_devices_than_mdadm_accepts() -> None:
    """mdadm Create.c: "at least 4 raid-devices needed for level 6"; "at least 2 raid-devices
    needed for level 4 or 5" (also 10); RAID-10 n3 needs 3 (the kernel refuses fewer disks
    than copies). A 2-disk RAID-5 is accepted, as mdadm accepts it."""
    m = blank_machine()
    with pytest.raises(PlanError, match="RAID-6 needs at least 4 devices"):
        build_create_array(m, CreateArrayParams(level="6", devices=NVME4[:3]))
    with pytest.raises(PlanError, match="RAID-10 needs at least 3 devices"):
        build_create_array(m, CreateArrayParams(level="10", devices=NVME4[:2], layout="n3"))
    plan = build_create_array(m, CreateArrayParams(level="5", devices=NVME4[:2]))
    assert "--raid-devices=2" in plan.steps[0].argv


def test_create_warns_that_the_initial_sync_writes_ssd_members() -> None:
    """Article 000 quotes Red Hat: "During the initialization stage of these RAID levels, some
    RAID management utilities (such as mdadm) write to all of the blocks on the storage device"
    (levels 1, 4, 5, 6); RAID-10's resync copies every block too. HDD members: no warning."""
    m = blank_machine()
    for level in ("1", "5", "6", "10"):
        plan = build_create_array(m, CreateArrayParams(level=level, devices=NVME4))
        assert any("initial sync" in w and "nvme0n1" in w for w in plan.warnings), level
    r0 = build_create_array(m, CreateArrayParams(level="0", devices=NVME4))
    assert not any("initial sync" in w for w in r0.warnings)
    hdd = build_create_array(m, CreateArrayParams(level="1", devices=("sda", "sdb")))
    assert not any("initial sync" in w for w in hdd.warnings)


def test_the_create_warning_takes_its_first_sync_fact_from_the_sync_model() -> None:
    """One source (issue 43): the create plan's warning says what the first sync writes in the
    sync model's words (app.model.sync_model forecast_sync, which md-parity-on-ssd in
    app/rules/md.py quotes too), not a wording of its own. On the real kernel a new 4-member
    RAID-5 rebuilt its last member and barely wrote the others (tests/vm/test_wear.py)."""
    from app.model.sync_model import forecast_sync
    from app.plans import ops

    m = blank_machine()
    for level in ("1", "5", "6", "10"):
        plan = build_create_array(m, CreateArrayParams(level=level, devices=NVME4))
        disks = [m.disk(d) for d in NVME4]
        create = plan.steps[0].op
        assert isinstance(create, ops.CreateArray)
        first = forecast_sync(
            array="new",
            level=f"raid{level}",
            raid_disks=4,
            layout=create.layout,
            action="resync",
            members=[(d.name, d.size_bytes) for d in disks if d is not None],
            initial=True,
        )
        wear = [w for w in plan.warnings if "initial sync" in w]
        assert len(wear) == 1 and first.why in wear[0], (level, wear)
    r5 = build_create_array(m, CreateArrayParams(level="5", devices=NVME4))
    assert any("rebuilds its last member (nvme3n1)" in w for w in r5.warnings)
    assert not any("every block" in w for w in r5.warnings)


def test_bitmap_defaults_follow_article_000() -> None:
    """Article 000: "--bitmap=none" for SSD RAID-10 (quick re-syncs, best write speed), with the
    trade-off shown; RAID-5/6 internal ("Wenn schon Raid-5, dann bitte mit Bitmap!")."""
    m = blank_machine()
    r10 = build_create_array(m, CreateArrayParams(level="10", devices=NVME4))
    assert "--bitmap=none" in r10.steps[0].argv
    assert any("trade-off" in n and "rewritten in full" in n for n in r10.notes)
    for level in ("5", "6"):
        plan = build_create_array(m, CreateArrayParams(level=level, devices=NVME4))
        assert "--bitmap=internal" in plan.steps[0].argv
    hdd = build_create_array(m, CreateArrayParams(level="10", devices=("sda", "sdb")))
    assert "--bitmap=internal" in hdd.steps[0].argv
    chosen = build_create_array(m, CreateArrayParams(level="10", devices=NVME4, bitmap="internal"))
    assert "--bitmap=internal" in chosen.steps[0].argv


def test_bitmap_to_a_file_outside_the_array() -> None:
    """Article 001 (001_*.txt): "Переносим bitmap на отдельный диск ... скорость записи вырастает
    до 165МБ/сек" with ``mdadm -G /dev/md0 -b /var/md0_intent``. md changes a bitmap only by
    removing the old one first; the file must not live on the array itself."""
    from app.plans.builders.sync_actions import build_bitmap

    m = array_machine(bitmap="internal")
    plan = build_bitmap(m, "md127", "/var/md127_intent", chunk="128M")
    assert [s.argv for s in plan.steps] == [
        ("mdadm", "--grow", "/dev/md127", "--bitmap=none"),
        ("mdadm", "--grow", "/dev/md127", "--bitmap=/var/md127_intent", "--bitmap-chunk=131072K"),
    ]
    assert any("130 to 165 MB/s" in n for n in plan.notes)
    # no mounted filesystem holds /var in this machine: said, not guessed
    assert any("no mounted filesystem" in w for w in plan.warnings)
    with pytest.raises(PlanError, match="outside the array"):
        build_bitmap(m, "md126", "/srv/md126_intent")  # /srv is XFS on md126 itself
    with pytest.raises(PlanError, match="already has bitmap internal"):
        build_bitmap(m, "md127", "internal")
    rechunk = build_bitmap(m, "md127", "internal", chunk="256M")
    assert rechunk.steps[-1].argv[-1] == "--bitmap-chunk=262144K"
    with pytest.raises(PlanError, match="power of two"):
        build_bitmap(m, "md127", "internal", chunk="3M")


def test_filesystem_refuses_an_array_that_carries_something() -> None:
    """Issue 16 point 5: the filesystem wizard refuses an array with a PV, a mounted or an
    unmounted filesystem, a holder; a free array has no refusal."""
    m = array_machine()
    assert [i.brief for i in array_refusals(m, "md127")] == ["PV of vg127"]
    assert [i.brief for i in array_refusals(m, "md126")] == ["mounted on /srv"]
    unmounted = with_usage(replace(m, filesystems=(Filesystem(device="md126", fstype="xfs"),)))
    (why,) = array_refusals(unmounted, "md126")
    assert why.code == "filesystem" and "carries an xfs filesystem (not mounted)" in why.message
    free = with_usage(replace(m, pvs=(), vgs=(), filesystems=()))
    assert array_refusals(free, "md127") == () and array_refusals(free, "md126") == ()
    assert array_refusals(m, "md9")[0].code == "unknown"
    # pre-flight (also at Run) refuses the plan on the PV from the kernel's truth, whoever built it
    plan = build_filesystem(m, "md127", FilesystemParams(fstype="xfs"))
    assert ("held", "md127") in {(i.code, i.device) for i in preflight_for(plan, m, None).refusals}
    plan_free = build_filesystem(free, "md127", FilesystemParams(fstype="xfs"))
    assert preflight_for(plan_free, free, None).refusals == ()


def _small_disks(size: int) -> Machine:
    m = blank_machine()
    return replace(
        m, disks=tuple(replace(d, size_bytes=size) if d.name in NVME4 else d for d in m.disks)
    )


def _xfs_d(plan: Plan) -> str:
    [argv] = [s.argv for s in plan.steps if s.argv[0] == "mkfs.xfs"]
    return argv[argv.index("-d") + 1]


def test_small_xfs_gets_four_allocation_groups() -> None:
    """Under 1 GiB, mkfs.xfs given su/sw makes allocation groups too small for its 64 MiB minimum
    log and refuses ("Log size must be at least 64MB", seen in the VM on a 510 MiB RAID-10 n2 of
    4 x 256 MiB with su=32k,sw=2); agcount=4 (its own count there) makes room. From 1 GiB on,
    su/sw alone, as before."""
    small = build_create_array(
        _small_disks(256 * MIB),
        CreateArrayParams(level="10", devices=NVME4, chunk_bytes=32 * KIB, layout="n2",
                          name="127", filesystem=FilesystemParams(fstype="xfs")),
    )  # fmt: skip
    assert _xfs_d(small) == "su=32k,sw=2,agcount=4"
    assert any("Log size must be at least 64MB" in n for n in small.notes)
    assert plan_problems(small) == []  # apply's allowlist takes the shape
    big = build_create_array(
        _small_disks(512 * MIB),  # 2 data disks x 512 MiB = 1 GiB
        CreateArrayParams(level="10", devices=NVME4, chunk_bytes=32 * KIB, layout="n2",
                          name="127", filesystem=FilesystemParams(fstype="xfs")),
    )  # fmt: skip
    assert _xfs_d(big) == "su=32k,sw=2"
    m = array_machine()
    a = m.array("md127")
    assert a is not None
    m510 = replace(m, arrays=(replace(a, size_bytes=510 * MIB), *m.arrays[1:]))
    fs = build_filesystem(m510, "md127", FilesystemParams(fstype="xfs"))
    assert _xfs_d(fs) == "su=32k,sw=2,agcount=4"
    assert _xfs_d(build_filesystem(m, "md127", FilesystemParams(fstype="xfs"))) == "su=32k,sw=2"


def test_xfs_under_300_mib_refused_before_anything_runs() -> None:
    """mkfs.xfs (xfsprogs >= 5.19) refuses a data section under 300 MiB ("Filesystem must be
    larger than 300MB", mkfs/xfs_mkfs.c: sb_dblocks < MEGABYTES(300, blocklog)): the plan is
    refused with the size and the limit; ext4 on the same array is planned."""
    m = array_machine()
    a = m.array("md127")
    assert a is not None
    small = replace(m, arrays=(replace(a, size_bytes=290 * MIB), *m.arrays[1:]))
    with pytest.raises(PlanError) as e:
        build_filesystem(small, "md127", FilesystemParams(fstype="xfs"))
    assert str(e.value).startswith(
        "XFS needs at least 300 MiB: /dev/md127 would hold 290 MiB (mkfs.xfs refuses it: "
        "'Filesystem must be larger than 300MB')"
    )
    assert build_filesystem(small, "md127", FilesystemParams(fstype="ext4")).steps
    exact = replace(m, arrays=(replace(a, size_bytes=300 * MIB), *m.arrays[1:]))
    assert _xfs_d(build_filesystem(exact, "md127", FilesystemParams(fstype="xfs")))
    # an LV smaller than the limit on a big array: its --size, or its share of the array
    for lv_size, room in (("200M", "200 MiB"), ("200", "200 MiB"), ("50%FREE", "150 MiB")):
        p = FilesystemParams(fstype="xfs", lvm=True, vg="v", lv_size=lv_size)
        with pytest.raises(PlanError, match=f"/dev/v/data would hold at most {room}"):
            build_filesystem(exact, "md127", p)
    p = FilesystemParams(fstype="xfs", lvm=True, vg="v", lv_size="100%FREE")
    assert build_filesystem(exact, "md127", p).steps[-1].argv[-1] == "/dev/v/data"
    # create + XFS: 2 data disks × 128 MiB is too small
    with pytest.raises(PlanError, match="/dev/md/127 would hold 256 MiB"):
        build_create_array(
            _small_disks(128 * MIB),
            CreateArrayParams(level="10", devices=NVME4, chunk_bytes=32 * KIB, layout="n2",
                              name="127", filesystem=FilesystemParams(fstype="xfs")),
        )  # fmt: skip


def test_grow_takes_an_offset_raid10_and_refuses_only_far() -> None:
    """drivers/md/raid10.c raid10_check_reshape(): "Currently we reject any reshape of a 'far'
    mode array ... and allow a switch between 'near' mode and 'offset' mode" — it returns
    -EINVAL for far_copies != 1 only when !far_offset (setup_geo() reads far_offset from layout
    bit 16). So an o2 RAID-10 grows (issue 43: raidman refused it); f2 does not."""
    m = array_machine()
    a = m.array("md127")
    assert a is not None and a.level == "raid10"
    for layout in ("o2", "f2"):
        lm = replace(
            m, arrays=tuple(replace(x, layout=layout) if x.name == "md127" else x for x in m.arrays)
        )
        if layout == "f2":
            with pytest.raises(PlanError, match="cannot reshape a RAID-10 with a far layout"):
                build_grow(lm, "md127", 5, add=("nvme4n1",))
            continue
        plan = build_grow(lm, "md127", 5, add=("nvme4n1",))
        grow = plan.steps[-1].argv
        assert grow[:3] == ("mdadm", "--grow", "/dev/md127") and "--raid-devices=5" in grow
        assert [argv_problem(s.argv, s.stdin, s.stdin_from) for s in plan.steps] == [None] * len(
            plan.steps
        )
