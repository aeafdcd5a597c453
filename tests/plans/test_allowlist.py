"""The allowlist of argv shapes (app/plans/allowlist.py): what raidman plans passes, near misses
do not. The accepted shapes are the ones the audit rules' fixes and boost emit (the wizards' are
checked against the golden plans in test_apply_untrusted.py)."""

from __future__ import annotations

import pytest

from app.plans.allowlist import argv_devices, plan_problems, step_problem
from app.plans.plan import Plan, Step
from app.sync.boost import Setting
from tests.plans.fakes import array_machine

UUID = "3aaf6c4e:4e6fe9d5:9bb0d6a3:2f6c1d0e"

ACCEPTED = [
    # app/rules/fs_geometry.py
    Step(("tune2fs", "-E", "stride=8,stripe_width=16", "/dev/vg0/data"), "w"),
    Step(("tune2fs", "-E", "stride=16,stripe_width=48", "/dev/mapper/vg0-data"), "w"),
    # app/rules/md.py
    Step(("mdadm", "--grow", "--bitmap=internal", "/dev/md0"), "w"),
    Step(("tee", "/sys/block/md126/md/stripe_cache_size"), "w", stdin="4096\n"),
    Step(
        ("tee", "-a", "/etc/mdadm/mdadm.conf"),
        "w",
        stdin=f"ARRAY /dev/md/raid10 metadata=1.2 name=host:raid10 UUID={UUID}\n",
    ),
    Step(("tee", "-a", "/etc/mdadm.conf"), "w", stdin=f"ARRAY /dev/md0 UUID={UUID}\n"),
    # app/rules/alerts.py
    Step(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin="MAILADDR root\n"),
    Step(
        ("tee", "-a", "/etc/mdadm.conf"),
        "w",
        stdin_from=("mdadm", "--detail", "--brief", "/dev/md/127"),
    ),
    Step(("update-initramfs", "-u"), "w"),
    Step(("dracut", "-f"), "w"),
    # app/rules/discard.py, app/rules/queue.py
    Step(("systemctl", "enable", "--now", "fstrim.timer"), "w"),
    Step(("tee", "/sys/block/sda/queue/scheduler"), "w", stdin="mq-deadline\n"),
    # app/sync/boost.py (raise and restore)
    Setting("sysctl", "dev.raid.speed_limit_min").step("200000", "w"),
    Setting("sysctl", "dev.raid.speed_limit_max").step("500000", "w"),
    Setting("sysctl", "dev.raid.speed_limit_max").step("2147483647", "w"),
    Setting("sysfs", "/sys/block/md127/md/stripe_cache_size").step("8192", "w"),
    # app/plans/wizards/sync_actions.py
    Step(("tee", "/sys/block/md127/md/sync_action"), "w", stdin="check\n"),
    Step(("tee", "/sys/block/md127/md/sync_speed_min"), "w", stdin="system\n"),
    Step(("mdadm", "--grow", "/dev/md127", "--bitmap=/var/md127_intent"), "w"),
    Step(("mdadm", "--grow", "/dev/md127", "--raid-devices=5", "--backup-file=/root/x"), "w"),
]

# issue 23 item 11: what the planner never makes
LOOSE = [
    Step(("mdadm", "--grow", "/dev/md127", "--bitmap=/etc/ld.so.preload"), "w"),
    Step(("mdadm", "--grow", "/dev/md127", "--bitmap=/proc/sys/kernel/x"), "w"),
    Step(("mdadm", "--grow", "/dev/md127", "--bitmap=/root/.bashrc"), "w"),
    Step(("mdadm", "--grow", "/dev/md127", "--bitmap=/x"), "w"),
    Step(("mdadm", "--grow", "/dev/md0", "--raid-devices=4", "--backup-file=/etc/cron.d/x"), "w"),
    Step(
        (
            "mdadm",
            "--create",
            "/dev/md0",
            "--level=1",
            "--raid-devices=2",
            "--bitmap=/usr/lib/x",
            "/dev/a",
            "/dev/b",
        ),
        "w",
    ),
    Step(("sysctl", "-w", "dev.raid.speed_limit_max=0"), "w"),
    Step(("sysctl", "-w", "dev.raid.speed_limit_min=9999999999"), "w"),
    Step(("sysctl", "-w", "dev.raid.speed_limit_max=2147483648"), "w"),
    Step(("tee", "/sys/block/md127/md/sync_speed_max"), "w", stdin="9999999999\n"),
    Step(("tee", "/sys/block/md127/md/sync_speed_min"), "w", stdin="0\n"),
    Step(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin="ARRAY x\n"),
    Step(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin="ARRAY /dev/md/0 UUID=a:b:c:d\n"),
    Step(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin=f"ARRAY /etc/passwd UUID={UUID}\n"),
    Step(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin="ARRAY /dev/md0 metadata=1.2\n"),
    Step(
        ("tee", "-a", "/etc/mdadm/mdadm.conf"),
        "w",
        stdin=f"ARRAY /dev/md0 UUID={UUID} PROGRAM=/tmp/evil\n",
    ),
    Step(
        ("tee", "-a", "/etc/mdadm/mdadm.conf"),
        "w",
        stdin=f"ARRAY /dev/md0 UUID={UUID} UUID={UUID}\n",
    ),
    Step(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin=f"ARRAY /dev/md0 UUID={UUID}"),
    Step(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin="MAILADDR evil@example.com\n"),
]

FSTAB_LINE = "UUID=0a1b2c3d-0000-4000-8000-00000000abcd /srv/data ext4 defaults,nofail 0 2\n"
LIFECYCLE_ACCEPTED = [
    Step(("mdadm", "--stop", "/dev/md0"), "w"),
    Step(("mdadm", "--zero-superblock", "/dev/sda"), "w"),
    Step(("mdadm", "--assemble", "--scan"), "w"),
    Step(("mdadm", "--assemble", "/dev/md/data", f"--uuid={UUID}"), "w"),
    Step(("wipefs", "-a", "/dev/sda1"), "w"),
    Step(
        (
            *("parted", "--script", "--align", "optimal", "/dev/sdb", "mklabel", "gpt", "mkpart"),
            *("raid", "1MiB", "90%", "set", "1", "raid", "on"),
        ),
        "w",
    ),
    Step(("mkdir", "-p", "/srv/data"), "w"),
    Step(("mount", "-o", "defaults,noatime", "/dev/md127", "/srv/data"), "w"),
    Step(("cp", "-p", "/etc/fstab", "/etc/fstab.raidman-new"), "w"),
    Step(("tee", "-a", "/etc/fstab.raidman-new"), "w", stdin=FSTAB_LINE),
    Step(("findmnt", "--verify", "--tab-file", "/etc/fstab.raidman-new"), "w"),
    Step(("cp", "-p", "/etc/fstab", "/etc/fstab.raidman-backup"), "w"),
    Step(("mv", "/etc/fstab.raidman-new", "/etc/fstab"), "w"),
]
LIFECYCLE_REFUSED = [
    Step(("wipefs", "/dev/sda1"), "w"),
    Step(("wipefs", "-a", "-f", "/dev/sda1"), "w"),
    Step(
        (
            *("parted", "--script", "--align", "optimal", "/dev/sdb", "mklabel", "gpt", "mkpart"),
            *("raid", "1MiB", "40%", "set", "1", "raid", "on"),
        ),
        "w",
    ),
    Step(("parted", "--script", "/dev/sdb", "rm", "1"), "w"),
    Step(("mkdir", "-p", "/etc/cron.d"), "w"),
    Step(("mkdir", "-p", "/srv/../etc"), "w"),
    Step(("mount", "-o", "defaults,exec,suid", "/dev/md127", "/srv/data"), "w"),
    Step(("mount", "-o", "defaults", "/dev/md127", "/usr"), "w"),
    Step(("mount", "--bind", "/", "/srv/data"), "w"),
    Step(("cp", "-p", "/etc/shadow", "/etc/fstab.raidman-new"), "w"),
    Step(("mv", "/tmp/x", "/etc/fstab"), "w"),
    Step(("findmnt", "--verify", "--tab-file", "/tmp/x"), "w"),
    Step(("tee", "-a", "/etc/fstab.raidman-new"), "w", stdin=FSTAB_LINE.replace(",nofail", "")),
    Step(
        ("tee", "-a", "/etc/fstab.raidman-new"),
        "w",
        stdin="/dev/md127 /srv/data ext4 defaults,nofail 0 2\n",
    ),
    Step(("tee", "-a", "/etc/fstab.raidman-new"), "w", stdin=FSTAB_LINE + FSTAB_LINE),
    Step(("tee", "-a", "/etc/fstab"), "w", stdin=FSTAB_LINE),
]

REFUSED = [
    Step(("touch", "/tmp/x"), "w"),
    Step(("sh", "-c", "mdadm --stop /dev/md0"), "w"),
    Step(("/sbin/mdadm", "/dev/md0", "--fail", "/dev/sda"), "w"),
    Step(("mdadm", "--stop", "/dev/md0", "/dev/md1"), "w"),
    Step(("mdadm", "--zero-superblock", "--force", "/dev/sda"), "w"),
    Step(("mdadm", "--assemble", "/dev/md0", "/dev/sda", "/dev/sdb"), "w"),
    Step(("mdadm", "--assemble", "/dev/md0", "--uuid=not-a-uuid"), "w"),
    *LIFECYCLE_REFUSED,
    Step(("mdadm", "/dev/md0", "--fail", "/dev/sda", "--remove", "/dev/sdb"), "w"),
    Step(("mdadm", "/dev/md0", "--add", "/dev/../etc/passwd"), "w"),
    Step(("mdadm", "--create", "/dev/md0", "--level=1", "--raid-devices=2", "/dev/sda"), "w"),
    Step(
        (
            "mdadm",
            "--create",
            "/dev/md0",
            "--level=1",
            "--raid-devices=2",
            "--force",
            "/dev/a",
            "/dev/b",
        ),
        "w",
    ),
    Step(("mdadm", "--grow", "/dev/md0", "--raid-devices=4", "--backup-file=../x"), "w"),
    Step(("tee", "/etc/shadow"), "w", stdin="x\n"),
    Step(("tee", "/sys/block/md127/md/sync_action"), "w", stdin="reshape\n"),
    Step(("tee", "/sys/block/md127/md/stripe_cache_size"), "w", stdin="16\n"),
    Step(("tee", "/sys/block/md127/md/stripe_cache_size"), "w"),
    Step(("tee", "/sys/block/md127/md/array_state"), "w", stdin="inactive\n"),
    Step(("tee", "-a", "/etc/cron.d/x"), "w", stdin="ARRAY x\n"),
    Step(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin="ARRAY a\n* * * * * root sh\n"),
    Step(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin_from=("cat", "/etc/shadow")),
    Step(("tee", "/sys/block/sda/queue/scheduler"), "w", stdin="none; reboot\n"),
    Step(("sysctl", "-w", "kernel.core_pattern=|/tmp/x"), "w"),
    Step(("sysctl", "-w", "dev.raid.speed_limit_max=1", "kernel.x=1"), "w"),
    Step(("sysctl", "-p", "/tmp/x.conf"), "w"),
    Step(("mkfs.ext4", "-b", "4096", "-F", "/dev/sda"), "w"),
    Step(("mkfs.xfs", "-f", "/dev/sda"), "w"),
    Step(("lvcreate", "--yes", "--name", "x", "--size", "1G", "vg0", "--", "extra"), "w"),
    Step(("systemctl", "start", "evil.service"), "w"),
    Step(("update-initramfs", "-u", "-k", "all"), "w"),
    Step(("mdadm", "/dev/md0", "--fail", "/dev/sda"), "w", stdin="y\n"),
]


@pytest.mark.parametrize("step", [*ACCEPTED, *LIFECYCLE_ACCEPTED], ids=lambda s: " ".join(s.argv))
def test_shapes_raidman_emits_are_accepted(step: Step) -> None:
    assert step_problem(step) is None


@pytest.mark.parametrize("step", REFUSED, ids=lambda s: " ".join(s.argv))
def test_anything_else_is_refused(step: Step) -> None:
    why = step_problem(step)
    assert why is not None and why.strip()


@pytest.mark.parametrize(
    "step", LOOSE, ids=lambda s: " ".join(s.argv) + (f" <{s.stdin!r}" if s.stdin else "")
)
def test_values_the_planner_never_makes_are_refused(step: Step) -> None:
    why = step_problem(step)
    assert why is not None and why.strip()


def test_devices_come_from_the_argv_not_the_params() -> None:
    """A member-add plan whose params name nvme4n1 but whose argv adds nvme0n1 is refused;
    pre-flight would check nvme0n1 (what really runs)."""
    m = array_machine()
    plan = Plan(
        "add",
        (Step(("mdadm", "/dev/md127", "--add", "/dev/nvme0n1"), "w", destructive=True),),
        target="md127",
        kind="member-add",
        params={"array": "md127", "device": "nvme4n1"},
    )
    assert argv_devices(plan, m).overwrites == ("nvme0n1",)
    (why,) = plan_problems(plan, m)
    assert "write to nvme0n1" in why and "name nvme4n1" in why


def test_target_must_be_named_by_the_argv() -> None:
    """A step marked destructive that destroys nothing by its argv keeps the given target,
    which must be a device the commands name."""
    m = array_machine()
    plan = Plan(
        "fail",
        (Step(("mdadm", "/dev/md127", "--fail", "/dev/nvme1n1"), "w", destructive=True),),
        target="md126",  # the typed confirmation would name another array
        kind="member-fail",
        params={"array": "md127", "device": "nvme1n1"},
    )
    assert plan_problems(plan, m) == ["the target 'md126' is not a device the commands name"]
    assert plan_problems(Plan(**{**_fields(plan), "target": "md127"}), m) == []


def test_the_target_of_a_destroying_step_comes_from_its_argv() -> None:
    """Issue 23 item 3: the name typed to confirm is what the first destroying step overwrites,
    whatever target the builder or the file gives."""
    plan = Plan(
        "add",
        (Step(("mdadm", "/dev/md127", "--add", "/dev/nvme4n1"), "w"),),
        target="md126",
        kind="member-add",
        params={"array": "md127", "device": "nvme4n1"},
    )
    assert plan.destructive and plan.target == "nvme4n1"
    assert plan_problems(plan, array_machine()) == []


def _fields(p: Plan) -> dict[str, object]:
    return {
        "title": p.title,
        "steps": p.steps,
        "target": p.target,
        "kind": p.kind,
        "params": p.params,
    }


def test_audit_fix_on_an_lv_names_its_target() -> None:
    """The ext4 stride fix's target is the LV's kernel name; its argv the LV path."""
    from app.model import LogicalVolume, Machine

    m = Machine(
        host="t",
        kernel="6.1",
        lvs=(LogicalVolume("data", "vg0", 1 << 30, "linear", kernel_name="dm-0"),),
    )
    for path in ("/dev/vg0/data", "/dev/mapper/vg0-data"):
        plan = Plan(
            "stride",
            (Step(("tune2fs", "-E", "stride=8,stripe_width=16", path), "w"),),
            target="dm-0",
            kind="audit-ext4-stride",
            params={"stride": 8, "stripe_width": 16},
        )
        assert plan_problems(plan, m) == []


def test_the_planner_refuses_what_the_allowlist_refuses() -> None:
    """Issue 23 item 11: one rule for both (app/plans/shapes.py): no wizard builds a plan the
    allowlist would refuse at run time."""
    from app.plans.geometry import PlanError
    from app.plans.wizards.create_array import CreateArrayParams, build_create_array
    from app.plans.wizards.sync_actions import build_bitmap, build_speed_limits
    from tests.plans.fakes import blank_machine

    m = array_machine(bitmap="internal")
    with pytest.raises(PlanError, match="not under /etc"):
        build_bitmap(m, "md127", "/etc/ld.so.preload")
    with pytest.raises(PlanError, match="from 1 to 2147483647"):
        build_speed_limits(m, max_kib_s=2**31)
    params = CreateArrayParams(
        level="1", devices=("nvme0n1", "nvme1n1"), update_conf=True, conf_path="/etc/passwd"
    )
    with pytest.raises(PlanError, match=r"'/etc/passwd' is not /etc/mdadm/mdadm\.conf"):
        build_create_array(blank_machine(), params)
    ok = build_bitmap(m, "md127", "/var/md127_intent")
    assert all(step_problem(s) is None for s in ok.steps)
