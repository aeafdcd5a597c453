"""Issue 39: where /etc/fstab is a mount point (virtme-ng and containers bind-mount it), the mount
plan's ``mv /etc/fstab.raidman-new /etc/fstab`` failed with EBUSY and nothing was written. The
plan now sees the mount point when it is made (the machine's /proc/self/mountinfo, else
/proc/mounts, read through the backend) and writes the checked copy into the file in place
(``cp COPY /etc/fstab``: ops.OverwriteFile) after the same comparison, backup and findmnt check;
the file-edit guard holds that path to the same order and content rules as the rename."""

from __future__ import annotations

from pathlib import Path

from app.plans import ops
from app.plans.audit_log import AuditLog
from app.plans.builders.create_array import CreateArrayParams, build_create_array
from app.plans.builders.file_edit import edit_steps, file_now, mount_point, mounts_point
from app.plans.builders.filesystem import FilesystemParams, build_filesystem
from app.plans.builders.lifecycle import build_mount, build_prepare
from app.plans.executor import ExecutionReport, execute
from app.plans.guards.file_edits import file_edit_problems
from app.plans.ops.system_files import FSTAB, backup_name
from app.plans.plan import Plan, Step
from app.plans.render import preflight_for
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock

OLD = "# <file system> <mount point> <type> <options>\n"
DISKS = ("nvme0n1", "nvme1n1")
VIRTME = "45 23 0:40 /fstab /etc/fstab rw,relatime - tmpfs tmpfs rw\n"


def _report(plan: Plan, be: SimulatedBackend, audit: AuditLog) -> ExecutionReport:
    pf = preflight_for(plan, be.probe(), be)
    assert not pf.refusals, pf.lines()
    return execute(plan, be, audit=audit, forced=pf.warning_codes)


def _run(plan: Plan, be: SimulatedBackend, audit: AuditLog) -> bool:
    return _report(plan, be, audit).ok


def _with_fs(tmp_path: Path, *, bind_mounted: bool) -> tuple[SimulatedBackend, AuditLog]:
    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    be._state.files[FSTAB] = OLD
    if bind_mounted:
        be._state.bind_mounts.add(FSTAB)
    audit = AuditLog(tmp_path / "audit.log")
    parts = tuple(f"{d}p1" for d in DISKS)
    assert _run(build_prepare(be.probe(), DISKS), be, audit)
    assert _run(build_create_array(be.probe(), CreateArrayParams("1", parts, name="9")), be, audit)
    assert _run(build_filesystem(be.probe(), "md9", FilesystemParams("ext4")), be, audit)
    return be, audit


def _mount(be: SimulatedBackend) -> Plan:
    text, in_place = file_now(be, FSTAB)  # what `raidman plan mount --fstab` reads
    return build_mount(
        be.probe(), "md9", "/srv/data", fstab=True, fstab_text=text, fstab_in_place=in_place
    )


def test_a_bind_mounted_fstab_is_written_in_place_after_its_backup(tmp_path: Path) -> None:
    be, audit = _with_fs(tmp_path, bind_mounted=True)
    plan = _mount(be)
    kinds = [s.op.KIND for s in plan.steps]
    assert kinds[2:] == [
        "file-compare",
        "file-backup",
        "file-copy",
        "file-write",
        "fstab-verify",
        "file-overwrite",
        "file-copy-remove",
    ]
    keep, clean = plan.steps[-2:]
    assert keep.argv == ("cp", "/etc/fstab.raidman-new", "/etc/fstab")
    assert "in place: /etc/fstab is a mount point here" in keep.why
    assert clean.argv == ("rm", "-f", "/etc/fstab.raidman-new")
    assert _run(plan, be, audit)
    # nothing left behind but the backup (issue 39: the copy stayed after an in-place write)
    assert be.read_text("/etc/fstab.raidman-new") is None
    fs = be.probe().filesystem("md9")
    assert fs is not None and fs.uuid
    assert be.read_text(FSTAB) == OLD + f"UUID={fs.uuid} /srv/data ext4 defaults,nofail 0 2\n"
    assert be.read_text(backup_name(FSTAB, OLD)) == OLD
    assert FSTAB in be._state.bind_mounts  # written into, not replaced


def test_the_rename_fails_on_a_bind_mounted_fstab_and_writes_nothing(tmp_path: Path) -> None:
    """The simulator's model of the issue's EBUSY: the plan made as if fstab were a plain file."""
    be, audit = _with_fs(tmp_path, bind_mounted=True)
    text, _ = file_now(be, FSTAB)
    plan = build_mount(be.probe(), "md9", "/srv/data", fstab=True, fstab_text=text)
    assert plan.steps[-1].argv == ("mv", "/etc/fstab.raidman-new", "/etc/fstab")
    rep = _report(plan, be, audit)
    assert [o.status for o in rep.outcomes][-2:] == ["ok", "failed"]
    assert rep.outcomes[-1].message == (
        "mv exited with 1: mv: cannot move '/etc/fstab.raidman-new' to '/etc/fstab': "
        "Device or resource busy"
    )
    assert be.read_text(FSTAB) == OLD


def test_a_plain_fstab_is_still_renamed_over(tmp_path: Path) -> None:
    be, _audit = _with_fs(tmp_path, bind_mounted=False)
    assert be.read_text("/proc/self/mountinfo") is None
    assert _mount(be).steps[-1].op == ops.ReplaceFile(FSTAB)


def test_the_mount_point_is_read_from_mountinfo_else_proc_mounts() -> None:
    assert mount_point("22 1 254:0 / / rw - ext4 /dev/vda rw\n" + VIRTME, FSTAB)
    assert not mount_point(VIRTME.replace("/etc/fstab", "/etc/fstab.d"), FSTAB)
    assert not mount_point("garbage\n" + VIRTME.replace("/etc/fstab", "/etc"), FSTAB)
    assert mount_point("garbage\n" + VIRTME, FSTAB)  # a bad line is skipped, not fatal
    assert mount_point(r"7 1 0:40 /x /etc/my\040tab rw - tmpfs tmpfs rw", "/etc/my tab")
    assert mounts_point("/dev/vda / ext4 rw 0 0\ntmpfs /etc/fstab tmpfs rw 0 0\n", FSTAB)
    assert not mounts_point("/dev/vda / ext4 rw 0 0\n", FSTAB)
    assert not mount_point(None, FSTAB) and not mounts_point(None, FSTAB)


LINE = "UUID=0a1b2c3d-0000-4000-8000-00000000abcd /srv/d ext4 defaults,nofail 0 2"


def _edit(new_line: str = LINE) -> list[Step]:
    return edit_steps(FSTAB, OLD, OLD + new_line + "\n", why_new="add", in_place=True)


def test_the_guard_holds_the_in_place_write_to_the_renames_rules() -> None:
    steps = _edit()
    assert file_edit_problems(Plan("t", tuple(steps), kind="mount")) == []
    # written in place before findmnt checked the copy
    early = [*steps[:4], steps[5], steps[4]]
    assert file_edit_problems(Plan("t", tuple(early), kind="mount")) == [
        "/etc/fstab: compared first, then backed up, then written to a copy, checked and "
        "renamed over it or written into it in place"
    ]
    # the copy removed before it was written into the file
    gone = [*steps[:5], steps[6], steps[5]]
    assert file_edit_problems(Plan("t", tuple(gone), kind="mount")) == [
        "/etc/fstab: its copy removed before the new text was kept"
    ]
    # without the backup
    nobackup = [steps[0], *steps[2:]]
    assert file_edit_problems(Plan("t", tuple(nobackup), kind="mount"))
    # renamed over and written in place
    both = [*steps, Step(ops.ReplaceFile(FSTAB), "rename")]
    assert "/etc/fstab: kept twice (renamed over, or written in place, once)" in (
        file_edit_problems(Plan("t", tuple(both), kind="mount"))
    )
    # a new text that is not one of raidman's lines
    bad = _edit("/dev/sda1 / ext4 defaults 0 1")
    (msg,) = file_edit_problems(Plan("t", tuple(bad), kind="mount"))
    assert msg.startswith("/etc/fstab: ")
