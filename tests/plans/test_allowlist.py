"""What raidman plans, step by step: a step's argv decodes into an operation (app/plans/ops) only
in the shapes raidman emits (``allowlist.argv_problem`` asks the decoder), near misses do not,
and each decoded operation renders back to the same argv. The accepted shapes are the ones the
audit rules' fixes and boost emit (the wizards' are checked against the golden plans in
test_apply_untrusted.py); the shapes of multi-step edits (/etc/fstab) are the plan-level guard's."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from app.plans.guards.allowlist import argv_problem, plan_step_problems
from app.plans.guards.plan_devices import argv_devices, plan_problems
from app.plans.plan import Plan, Step
from app.sync.boost import Setting
from tests.plans.fakes import array_machine

UUID = "3aaf6c4e:4e6fe9d5:9bb0d6a3:2f6c1d0e"


@dataclass(frozen=True)
class Shape:
    """An argv with its stdin or producer, as a plan file holds it."""

    argv: tuple[str, ...]
    why: str = ""
    destructive: bool = False
    stdin: str | None = None
    stdin_from: tuple[str, ...] | None = None


def step_problem(x: Shape | Step) -> str | None:
    return argv_problem(x.argv, x.stdin, x.stdin_from)


ACCEPTED = [
    # app/rules/fs_geometry.py
    Shape(("tune2fs", "-E", "stride=8,stripe_width=16", "/dev/vg0/data"), "w"),
    Shape(("tune2fs", "-E", "stride=16,stripe_width=48", "/dev/mapper/vg0-data"), "w"),
    # app/rules/md.py
    Shape(("mdadm", "--grow", "/dev/md0", "--bitmap=internal"), "w"),
    Shape(("tee", "/sys/block/md126/md/stripe_cache_size"), "w", stdin="4096\n"),
    Shape(
        ("tee", "-a", "/etc/mdadm/mdadm.conf"),
        "w",
        stdin=f"ARRAY /dev/md/raid10 metadata=1.2 name=host:raid10 UUID={UUID}\n",
    ),
    Shape(("tee", "-a", "/etc/mdadm.conf"), "w", stdin=f"ARRAY /dev/md0 UUID={UUID}\n"),
    # app/rules/alerts.py
    Shape(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin="MAILADDR root\n"),
    Shape(
        ("tee", "-a", "/etc/mdadm.conf"),
        "w",
        stdin_from=("mdadm", "--detail", "--brief", "/dev/md/127"),
    ),
    Shape(("update-initramfs", "-u"), "w"),
    Shape(("dracut", "-f"), "w"),
    # app/rules/discard.py, app/rules/queue.py
    Shape(("systemctl", "enable", "--now", "fstrim.timer"), "w"),
    Shape(("tee", "/sys/block/sda/queue/scheduler"), "w", stdin="mq-deadline\n"),
    # app/sync/boost.py (raise and restore)
    Setting("sysctl", "dev.raid.speed_limit_min").step("200000", "w"),
    Setting("sysctl", "dev.raid.speed_limit_max").step("500000", "w"),
    Setting("sysctl", "dev.raid.speed_limit_max").step("2147483647", "w"),
    Setting("sysfs", "/sys/block/md127/md/stripe_cache_size").step("8192", "w"),
    # app/plans/builders/sync_actions.py
    Shape(("tee", "/sys/block/md127/md/sync_action"), "w", stdin="check\n"),
    Shape(("tee", "/sys/block/md127/md/sync_speed_min"), "w", stdin="system\n"),
    Shape(("mdadm", "--grow", "/dev/md127", "--bitmap=/var/md127_intent"), "w"),
    Shape(("mdadm", "--grow", "/dev/md127", "--raid-devices=5", "--backup-file=/root/x"), "w"),
]

# issue 23 item 11: what the planner never makes
LOOSE = [
    Shape(("mdadm", "--grow", "/dev/md127", "--bitmap=/etc/ld.so.preload"), "w"),
    Shape(("mdadm", "--grow", "/dev/md127", "--bitmap=/proc/sys/kernel/x"), "w"),
    Shape(("mdadm", "--grow", "/dev/md127", "--bitmap=/root/.bashrc"), "w"),
    Shape(("mdadm", "--grow", "/dev/md127", "--bitmap=/x"), "w"),
    Shape(("mdadm", "--grow", "/dev/md0", "--raid-devices=4", "--backup-file=/etc/cron.d/x"), "w"),
    Shape(
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
    Shape(("sysctl", "-w", "dev.raid.speed_limit_max=0"), "w"),
    Shape(("sysctl", "-w", "dev.raid.speed_limit_min=9999999999"), "w"),
    Shape(("sysctl", "-w", "dev.raid.speed_limit_max=2147483648"), "w"),
    Shape(("tee", "/sys/block/md127/md/sync_speed_max"), "w", stdin="9999999999\n"),
    Shape(("tee", "/sys/block/md127/md/sync_speed_min"), "w", stdin="0\n"),
    Shape(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin="ARRAY x\n"),
    Shape(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin="ARRAY /dev/md/0 UUID=a:b:c:d\n"),
    Shape(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin=f"ARRAY /etc/passwd UUID={UUID}\n"),
    Shape(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin="ARRAY /dev/md0 metadata=1.2\n"),
    Shape(
        ("tee", "-a", "/etc/mdadm/mdadm.conf"),
        "w",
        stdin=f"ARRAY /dev/md0 UUID={UUID} PROGRAM=/tmp/evil\n",
    ),
    Shape(
        ("tee", "-a", "/etc/mdadm/mdadm.conf"),
        "w",
        stdin=f"ARRAY /dev/md0 UUID={UUID} UUID={UUID}\n",
    ),
    Shape(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin=f"ARRAY /dev/md0 UUID={UUID}"),
    Shape(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin="MAILADDR evil@example.com\n"),
]

FSTAB_LINE = "UUID=0a1b2c3d-0000-4000-8000-00000000abcd /srv/data ext4 defaults,nofail 0 2\n"
LIFECYCLE_ACCEPTED = [
    Shape(("mdadm", "--stop", "/dev/md0"), "w"),
    Shape(("mdadm", "--zero-superblock", "/dev/sda"), "w"),
    Shape(("mdadm", "--assemble", "--scan"), "w"),
    Shape(("mdadm", "--assemble", "/dev/md/data", f"--uuid={UUID}"), "w"),
    Shape(("wipefs", "-a", "/dev/sda1"), "w"),
    Shape(
        (
            *("parted", "--script", "--align", "optimal", "/dev/sdb", "mklabel", "gpt", "mkpart"),
            *("raid", "1MiB", "90%", "set", "1", "raid", "on"),
        ),
        "w",
    ),
    Shape(("mkdir", "-p", "/srv/data"), "w"),
    Shape(("mount", "-o", "defaults,noatime", "/dev/md127", "/srv/data"), "w"),
    Shape(("cmp", "/etc/fstab", "-"), "w", stdin="# fstab\n"),
    Shape(("cp", "-p", "/etc/fstab", "/etc/fstab.raidman-backup-0123456789ab"), "w"),
    Shape(("cp", "-p", "/etc/fstab", "/etc/fstab.raidman-new"), "w"),
    Shape(("tee", "/etc/fstab.raidman-new"), "w", stdin="# fstab\n" + FSTAB_LINE),
    Shape(("findmnt", "--verify", "--tab-file", "/etc/fstab.raidman-new"), "w"),
    Shape(("mv", "/etc/fstab.raidman-new", "/etc/fstab"), "w"),
]
LIFECYCLE_REFUSED = [
    Shape(("wipefs", "/dev/sda1"), "w"),
    Shape(("wipefs", "-a", "-f", "/dev/sda1"), "w"),
    Shape(
        (
            *("parted", "--script", "--align", "optimal", "/dev/sdb", "mklabel", "gpt", "mkpart"),
            *("raid", "1MiB", "40%", "set", "1", "raid", "on"),
        ),
        "w",
    ),
    Shape(("parted", "--script", "/dev/sdb", "rm", "1"), "w"),
    Shape(("mkdir", "-p", "/etc/cron.d"), "w"),
    Shape(("mkdir", "-p", "/srv/../etc"), "w"),
    Shape(("mount", "-o", "defaults,exec,suid", "/dev/md127", "/srv/data"), "w"),
    Shape(("mount", "-o", "defaults", "/dev/md127", "/usr"), "w"),
    Shape(("mount", "--bind", "/", "/srv/data"), "w"),
    Shape(("cp", "-p", "/etc/shadow", "/etc/fstab.raidman-new"), "w"),
    Shape(("mv", "/tmp/x", "/etc/fstab"), "w"),
    Shape(("findmnt", "--verify", "--tab-file", "/tmp/x"), "w"),
    # the older fstab shape (a line appended to the copy, one backup for every edit)
    Shape(("tee", "-a", "/etc/fstab.raidman-new"), "w", stdin=FSTAB_LINE),
    Shape(("tee", "-a", "/etc/fstab"), "w", stdin=FSTAB_LINE),
    Shape(("cp", "-p", "/etc/fstab", "/etc/fstab.raidman-backup"), "w"),
    Shape(("cmp", "/etc/fstab.raidman-backup", "-"), "w", stdin="x\n"),
    Shape(("cmp", "/etc/fstab", "-"), "w"),
    Shape(("tee", "/etc/fstab.raidman-new"), "w", stdin="a\x1b]0;x\x07\n"),
]

REFUSED = [
    Shape(("touch", "/tmp/x"), "w"),
    Shape(("sh", "-c", "mdadm --stop /dev/md0"), "w"),
    Shape(("/sbin/mdadm", "/dev/md0", "--fail", "/dev/sda"), "w"),
    Shape(("mdadm", "--stop", "/dev/md0", "/dev/md1"), "w"),
    Shape(("mdadm", "--zero-superblock", "--force", "/dev/sda"), "w"),
    Shape(("mdadm", "--assemble", "/dev/md0", "/dev/sda", "/dev/sdb"), "w"),
    Shape(("mdadm", "--assemble", "/dev/md0", "--uuid=not-a-uuid"), "w"),
    *LIFECYCLE_REFUSED,
    Shape(("mdadm", "/dev/md0", "--fail", "/dev/sda", "--remove", "/dev/sdb"), "w"),
    Shape(("mdadm", "/dev/md0", "--add", "/dev/../etc/passwd"), "w"),
    Shape(("mdadm", "--create", "/dev/md0", "--level=1", "--raid-devices=2", "/dev/sda"), "w"),
    Shape(
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
    Shape(("mdadm", "--grow", "/dev/md0", "--raid-devices=4", "--backup-file=../x"), "w"),
    Shape(("tee", "/etc/shadow"), "w", stdin="x\n"),
    Shape(("tee", "/sys/block/md127/md/sync_action"), "w", stdin="reshape\n"),
    Shape(("tee", "/sys/block/md127/md/stripe_cache_size"), "w", stdin="16\n"),
    Shape(("tee", "/sys/block/md127/md/stripe_cache_size"), "w"),
    Shape(("tee", "/sys/block/md127/md/array_state"), "w", stdin="inactive\n"),
    Shape(("tee", "-a", "/etc/cron.d/x"), "w", stdin="ARRAY x\n"),
    Shape(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin="ARRAY a\n* * * * * root sh\n"),
    Shape(("tee", "-a", "/etc/mdadm/mdadm.conf"), "w", stdin_from=("cat", "/etc/shadow")),
    Shape(("tee", "/sys/block/sda/queue/scheduler"), "w", stdin="none; reboot\n"),
    Shape(("sysctl", "-w", "kernel.core_pattern=|/tmp/x"), "w"),
    Shape(("sysctl", "-w", "dev.raid.speed_limit_max=1", "kernel.x=1"), "w"),
    Shape(("sysctl", "-p", "/tmp/x.conf"), "w"),
    Shape(("mkfs.ext4", "-b", "4096", "-F", "/dev/sda"), "w"),
    Shape(("mkfs.xfs", "-f", "/dev/sda"), "w"),
    Shape(("lvcreate", "--yes", "--name", "x", "--size", "1G", "vg0", "--", "extra"), "w"),
    Shape(("systemctl", "start", "evil.service"), "w"),
    Shape(("update-initramfs", "-u", "-k", "all"), "w"),
    Shape(("mdadm", "/dev/md0", "--fail", "/dev/sda"), "w", stdin="y\n"),
]


@pytest.mark.parametrize("step", [*ACCEPTED, *LIFECYCLE_ACCEPTED], ids=lambda s: " ".join(s.argv))
def test_shapes_raidman_emits_are_accepted(step: Shape | Step) -> None:
    assert step_problem(step) is None
    decoded = Step.decode(step.argv, stdin=step.stdin, stdin_from=step.stdin_from)
    assert (decoded.argv, decoded.stdin, decoded.stdin_from) == (
        tuple(step.argv),
        step.stdin,
        None if step.stdin_from is None else tuple(step.stdin_from),
    )


@pytest.mark.parametrize("step", REFUSED, ids=lambda s: " ".join(s.argv))
def test_anything_else_is_refused(step: Shape) -> None:
    why = step_problem(step)
    assert why is not None and why.strip()


@pytest.mark.parametrize(
    "step", LOOSE, ids=lambda s: " ".join(s.argv) + (f" <{s.stdin!r}" if s.stdin else "")
)
def test_values_the_planner_never_makes_are_refused(step: Shape) -> None:
    why = step_problem(step)
    assert why is not None and why.strip()


def test_devices_come_from_the_argv_not_the_params() -> None:
    """A member-add plan whose params name nvme4n1 but whose argv adds nvme0n1 is refused;
    pre-flight would check nvme0n1 (what really runs)."""
    m = array_machine()
    plan = Plan(
        "add",
        (Step.decode(("mdadm", "/dev/md127", "--add", "/dev/nvme0n1"), "w", destructive=True),),
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
        (Step.decode(("mdadm", "/dev/md127", "--fail", "/dev/nvme1n1"), "w", destructive=True),),
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
        (Step.decode(("mdadm", "/dev/md127", "--add", "/dev/nvme4n1"), "w"),),
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
            (Step.decode(("tune2fs", "-E", "stride=8,stripe_width=16", path), "w"),),
            target="dm-0",
            kind="audit-ext4-stride",
            params={"stride": 8, "stripe_width": 16},
        )
        assert plan_problems(plan, m) == []


def test_the_planner_refuses_what_the_allowlist_refuses() -> None:
    """Issue 23 item 11: one rule for both (app/plans/shapes.py): no wizard builds a plan the
    allowlist would refuse at run time."""
    from app.plans.builders.create_array import CreateArrayParams, build_create_array
    from app.plans.builders.sync_actions import build_bitmap, build_speed_limits
    from app.plans.geometry import PlanError
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


def test_mv_is_the_new_fstab_s_or_a_settings_file_s_and_nothing_else() -> None:
    """Both mount (the new fstab into place) and persist (a settings file renamed into place)
    plan ``mv``; each keeps its own shape and no other."""
    from app.plans.builders.persist import FILES
    from app.plans.ops.system_files import FSTAB, new_name

    f = next(iter(FILES.values()))
    assert argv_problem(("mv", new_name(FSTAB), FSTAB)) is None
    assert argv_problem(("mv", "-f", f.temp, f.path)) is None
    assert argv_problem(("mv", "-f", f.temp, FSTAB)) is not None
    assert argv_problem(("mv", FSTAB, "/etc/passwd")) is not None
    assert argv_problem(("mv", "-f", new_name(FSTAB), FSTAB)) is not None


OLD_FSTAB = "# /etc/fstab\nUUID=11111111-0000-4000-8000-000000000001 / ext4 defaults 0 1\n"


def _fstab_plan(
    new: str, *, order: tuple[int, ...] = (0, 1, 2, 3, 4, 5), old: str = OLD_FSTAB
) -> Plan:
    from app.plans.builders.file_edit import edit_steps

    steps = edit_steps("/etc/fstab", old, OLD_FSTAB, why_new="x")
    shaped = [s if s.argv[0] != "tee" else Step.decode(s.argv, s.why, stdin=new) for s in steps]
    return Plan("mount", tuple(shaped[i] for i in order), kind="mount")


def test_an_fstab_edit_adds_one_line_of_raidmans_shape_after_compare_and_backup() -> None:
    """Issue 37 item 5: a plan file that rewrote /etc/fstab with one line ran with --yes alone.
    The edit's steps must compare the file with the text the plan was made from, back it up
    under a name of its own, write the copy, verify and rename it; and the new text is the
    compared text with one raidman line appended."""
    assert plan_step_problems(_fstab_plan(OLD_FSTAB + FSTAB_LINE)) == []
    bad = {
        "one line only": _fstab_plan(FSTAB_LINE),
        "a line dropped": _fstab_plan(OLD_FSTAB.splitlines(keepends=True)[0] + FSTAB_LINE),
        "two lines": _fstab_plan(OLD_FSTAB + FSTAB_LINE + FSTAB_LINE),
        "no nofail": _fstab_plan(OLD_FSTAB + FSTAB_LINE.replace(",nofail", "")),
        "by name": _fstab_plan(OLD_FSTAB + "/dev/md127 /srv/data ext4 defaults,nofail 0 2\n"),
        "over /root": _fstab_plan(OLD_FSTAB + FSTAB_LINE.replace("/srv/data", "/root")),
        "no compare": _fstab_plan(OLD_FSTAB + FSTAB_LINE, order=(1, 2, 3, 4, 5)),
        "no backup": _fstab_plan(OLD_FSTAB + FSTAB_LINE, order=(0, 2, 3, 4, 5)),
        "backup after": _fstab_plan(OLD_FSTAB + FSTAB_LINE, order=(0, 2, 3, 1, 4, 5)),
        "no verify": _fstab_plan(OLD_FSTAB + FSTAB_LINE, order=(0, 1, 2, 3, 5)),
        "no rename": _fstab_plan(OLD_FSTAB + FSTAB_LINE, order=(0, 1, 2, 3, 4)),
    }
    for what, plan in bad.items():
        assert plan_step_problems(plan), what
