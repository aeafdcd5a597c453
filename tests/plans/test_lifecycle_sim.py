"""Issue 26 item 4 on the simulator: prepare -> create -> mkfs -> mount with fstab -> stop ->
assemble -> delete -> wipe, each a plan run by the executor (allowlist, pre-flight right before
each step, the audit log), leaves the disks as they started; stop and delete are refused while
the array is mounted."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.backend import Backend
from app.plans.audit_log import AuditLog
from app.plans.builders.assemble import StrayArray, build_assemble
from app.plans.builders.create_array import CreateArrayParams, build_create_array
from app.plans.builders.filesystem import FilesystemParams, build_filesystem
from app.plans.builders.lifecycle import (
    build_delete,
    build_mount,
    build_prepare,
    build_stop,
    build_wipe,
)
from app.plans.executor import execute
from app.plans.geometry import PlanError
from app.plans.ops.system_files import backup_name
from app.plans.plan import Plan
from app.plans.render import preflight_for
from app.plans.superblocks import read_superblocks
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock

DISKS = ("nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1")
PARTS = tuple(f"{d}p1" for d in DISKS)


def _run(plan: Plan, be: Backend, audit: AuditLog) -> None:
    pf = preflight_for(plan, be.probe(), be)
    assert not pf.refusals, pf.lines()
    rep = execute(plan, be, audit=audit, forced=pf.warning_codes)
    assert rep.ok, rep.summary()


def _disks_state(be: SimulatedBackend) -> list[tuple[str, str | None, tuple[str, ...]]]:
    m = be.probe()
    return [
        (d.name, d.partition_table, tuple(p.name for p in m.partitions if p.parent == d.name))
        for d in m.disks
    ]


def test_the_whole_life_leaves_the_disks_as_they_started(tmp_path: Path) -> None:
    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    be._state.files["/etc/fstab"] = "# <file system> <mount point> <type> <options>\n"
    audit = AuditLog(tmp_path / "audit.log")
    start = _disks_state(be)

    _run(build_prepare(be.probe(), DISKS, leave_free=10), be, audit)
    m = be.probe()
    for d, p in zip(DISKS, PARTS, strict=True):
        part = m.partition(p)
        assert part is not None and part.parent == d
        assert part.start_sector == 2048  # 1 MiB
        disk = m.disk(d)
        assert disk is not None
        assert part.size_bytes <= disk.size_bytes * 90 // 100  # 10 % left free

    _run(build_create_array(m, CreateArrayParams("10", PARTS, name="127")), be, audit)
    m = be.probe()
    (arr,) = m.arrays
    _run(build_filesystem(m, arr.name, FilesystemParams("ext4")), be, audit)
    m = be.probe()
    fs = m.filesystem(arr.name)
    assert fs is not None and fs.uuid
    old = be.read_text("/etc/fstab")
    assert old == "# <file system> <mount point> <type> <options>\n"
    mount = build_mount(
        m, arr.name, "/srv/data", options="defaults,noatime", fstab=True, fstab_text=old
    )
    _run(mount, be, audit)
    fstab = be.read_text("/etc/fstab") or ""
    assert fstab == old + f"UUID={fs.uuid} /srv/data ext4 defaults,noatime,nofail 0 2\n"
    assert be.read_text(backup_name("/etc/fstab", old)) == old
    m = be.probe()
    with pytest.raises(PlanError, match="mounted on /srv/data"):
        build_stop(m, arr.name)
    with pytest.raises(PlanError, match="mounted on /srv/data"):
        build_delete(m, arr.name)

    assert be.run(["umount", "/srv/data"]).ok
    _run(build_stop(be.probe(), arr.name), be, audit)
    m = be.probe()
    assert m.arrays == ()
    sbs = read_superblocks(m, be)
    (stray,) = sbs.strays
    assert sorted(s.device for s in stray.devices) == sorted(PARTS)
    strays = (StrayArray(stray.uuid, stray.name, tuple(s.device for s in stray.devices)),)
    _run(build_assemble(m, strays, stray.uuid), be, audit)
    m = be.probe()
    (again,) = m.arrays
    assert sorted(x.device for x in again.members) == sorted(PARTS)

    _run(build_delete(m, again.name), be, audit)
    m = be.probe()
    assert m.arrays == () and read_superblocks(m, be).strays == ()
    for d in DISKS:
        _run(build_wipe(be.probe(), d), be, audit)
    assert _disks_state(be) == start
    started = [e for e in audit.read_entries() if e.event == "started"]
    # prepare 4 + create 1 + mkfs 1 + mount 8 (mkdir, mount, cmp, backup, copy, tee, findmnt,
    # mv) + stop 1 + assemble 1 + delete 9 + wipe 4
    assert len(started) == 4 + 1 + 1 + 8 + 1 + 1 + 9 + 4


def _running_array(be: SimulatedBackend, audit: AuditLog) -> str:
    _run(build_prepare(be.probe(), DISKS), be, audit)
    _run(build_create_array(be.probe(), CreateArrayParams("10", PARTS, name="127")), be, audit)
    _run(build_filesystem(be.probe(), "md127", FilesystemParams("ext4")), be, audit)
    return "md127"


def test_delete_is_confirmed_by_the_array_name_and_says_what_it_means(tmp_path: Path) -> None:
    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    md = _running_array(be, AuditLog(tmp_path / "audit.log"))
    plan = build_delete(be.probe(), md)
    assert plan.destructive and plan.target == md  # the array, not its first member
    c = plan.consequences
    assert c is not None and c.confirm == "typed"
    (line,) = c.offline
    assert line.startswith(f"{md} (raid10, 4 members, ") and "cannot be assembled again" in line
    stop = build_stop(be.probe(), md)
    assert stop.consequences is not None and "stops" in stop.consequences.offline[0]
    assert not stop.destructive


def test_a_stop_is_refused_right_before_it_runs_when_the_array_was_mounted_meanwhile(
    tmp_path: Path,
) -> None:
    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    audit = AuditLog(tmp_path / "audit.log")
    md = _running_array(be, audit)
    plan = build_stop(be.probe(), md)  # nothing mounted: offered
    be._state.files["/srv/x/"] = ""
    assert be.run(["mount", "/dev/md127", "/srv/x"]).ok
    rep = execute(plan, be, audit=audit)
    assert not rep.ok and rep.outcomes[0].status == "failed"
    assert "mounted on /srv/x" in rep.outcomes[0].message
    assert be.probe().array(md) is not None  # still running
    assert audit.read_entries()[-1].event == "refused"


def test_mount_takes_an_lv_by_the_name_an_admin_types(tmp_path: Path) -> None:
    """Issue 39: `plan mount --device vg_raid/lv_data` was refused ("no block device"): only
    "dm-0" was accepted. vg/lv, /dev/vg/lv and /dev/mapper/vg-lv name the same LV."""
    be = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual())
    assert be.run(["umount", "/srv/data"]).ok
    m = be.probe()
    for name in ("vg_raid/lv_data", "/dev/vg_raid/lv_data", "/dev/mapper/vg_raid-lv_data", "dm-0"):
        plan = build_mount(m, name, "/srv/other")
        assert plan.params["device"] == "dm-0", (name, plan.params)
        assert any(s.argv[0] == "mount" and "/dev/vg_raid/lv_data" in s.argv for s in plan.steps)
    with pytest.raises(PlanError, match="no block device 'vg_raid/nosuch'"):
        build_mount(m, "vg_raid/nosuch", "/srv/other")
