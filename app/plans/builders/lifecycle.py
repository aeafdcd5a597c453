"""The array's whole life as plans: prepare members, stop, assemble, delete, wipe, mount.

Each builder reads the machine as probed and emits the argv shapes of
``app.plans.builders.fstab_lines``; pre-flight (``app.plans.guards.lifecycle_checks``) refuses what the
kernel would refuse or what would lose data in use. What each plan does:

* prepare: ``parted`` writes a GPT with one partition from 1 MiB (aligned for any sector size
  and erase block) of type Linux RAID; ``--leave-free PCT`` ends it at 100-PCT % of the disk,
  leaving that share unpartitioned (an SSD's over-provisioning: never written, so the firmware
  has more spare blocks). ``parted`` rather than ``sgdisk``: parted ships with every
  distribution raidman runs on (sgdisk is gdisk's, often not installed).
* stop: ``mdadm --stop`` (md.c ``do_md_stop`` refuses an array still open: mounted, an active
  VG's PV, held by dm/md).
* assemble (app.plans.builders.assemble): ``mdadm --assemble --scan`` (every array mdadm.conf
  or the superblocks describe), or one array by any name an admin knows it by: ``mdadm
  --assemble /dev/md/NAME --uuid=UUID``.
* delete: stop, then ``mdadm --zero-superblock`` and ``wipefs -a`` on each member: the members
  carry nothing afterwards (typed confirmation: it destroys the array).
* wipe: ``wipefs -a`` on one device (a retired member, or a disk back to blank).
* mount: ``mkdir -p DIR``, ``mount -o OPTS DEV DIR``; with ``fstab``, the line ``UUID=<fs>
  DIR FSTYPE OPTS,nofail 0 2`` written atomically: the current /etc/fstab copied, the line
  appended to the copy, ``findmnt --verify`` on the copy, a backup of the current file, and the
  copy renamed over it (a rename: never a half-written fstab) — or, where /etc/fstab is a mount
  point (bind-mounted: containers, virtme-ng), the checked copy written into it in place after
  the backup (app.plans.builders.file_edit). ``nofail``: a missing array
  (degraded beyond assembly, a disk gone) does not stop the boot.
"""

from __future__ import annotations

from app.format import human_bytes
from app.model import Disk, Machine, MdArray
from app.plans import ops
from app.plans.builders.file_edit import edit_steps
from app.plans.builders.fstab_lines import FSTYPES, fstab_line_problem
from app.plans.builders.mdconf_edit import initramfs_step, without_uuids
from app.plans.geometry import PlanError
from app.plans.guards.lifecycle_checks import stop_refusals
from app.plans.guards.preflight import strip_dev
from app.plans.ops.storage import LEAVE_FREE_MAX, mountpoint_problem, options_problem
from app.plans.ops.system_files import FSTAB
from app.plans.outcome.consequences import with_consequences
from app.plans.plan import Plan, Step
from app.plans.superblocks import Superblocks


def partition_name(disk: str, number: int = 1) -> str:
    """The kernel's name of partition ``number`` of ``disk``: sda → sda1, nvme0n1 → nvme0n1p1
    (block/partitions/core.c ``bdev_add_partition``: a "p" when the disk name ends in a digit)."""
    return f"{disk}p{number}" if disk[-1:].isdigit() else f"{disk}{number}"


def _array(machine: Machine, array: str) -> MdArray:
    name = strip_dev(array)
    a = machine.array(name)
    if a is None:
        raise PlanError(f"no running md array {name!r} on this machine")
    if a.is_container or a.container:
        raise PlanError(f"{name} is part of an external-metadata container: not planned here")
    return a


def _finish(machine: Machine, plan: Plan) -> Plan:
    return with_consequences(plan, machine)


def build_prepare(machine: Machine, devices: tuple[str, ...], leave_free: int = 0) -> Plan:
    """A GPT with one 1 MiB-aligned Linux RAID partition on each of ``devices`` (whole disks)."""
    if not devices:
        raise PlanError("name the disks to prepare (--devices A,B)")
    if not 0 <= leave_free <= LEAVE_FREE_MAX:
        raise PlanError(f"--leave-free is a percentage from 0 to {LEAVE_FREE_MAX}")
    end = f"{100 - leave_free}%"
    steps: list[Step] = []
    notes: list[str] = []
    for d in dict.fromkeys(strip_dev(x) for x in devices):
        disk = machine.disk(d)
        if not isinstance(disk, Disk):
            raise PlanError(f"{d} is not a whole disk on this machine")
        part = partition_name(d)
        free = disk.size_bytes * leave_free // 100
        why = f"GPT on /dev/{d}: one Linux RAID partition {part} from 1 MiB to {end} of the disk"
        if leave_free:
            why += f" ({human_bytes(free, trim=True)} left unpartitioned for over-provisioning)"
            if not disk.is_ssd:
                notes.append(f"{d} is not an SSD: space left free does not help a spinning disk")
        steps.append(Step(ops.PartitionDisk(f"/dev/{d}", 100 - leave_free), why))
    names = [strip_dev(x) for x in dict.fromkeys(devices)]
    parts = ", ".join(partition_name(d) for d in names)
    notes.append(f"the new partitions ({parts}) are the members to create the array from")
    return _finish(
        machine,
        Plan(
            title=f"prepare {', '.join(names)} as RAID members",
            steps=tuple(steps),
            kind="prepare",
            params={"devices": names, "leave_free": leave_free},
            notes=tuple(notes),
        ),
    )


def build_stop(machine: Machine, array: str) -> Plan:
    a = _array(machine, array)
    refused = stop_refusals(machine, a.name)
    if refused:
        raise PlanError(f"{a.name} cannot be stopped: " + "; ".join(i.message for i in refused))
    members = ", ".join(m.device for m in a.members_by_slot)
    return _finish(
        machine,
        Plan(
            title=f"stop {a.path}",
            steps=(
                Step(
                    ops.StopArray(a.path),
                    f"stop {a.name}: its data is unreachable until it is assembled again "
                    f"(members {members} keep their superblocks)",
                ),
            ),
            target=a.name,
            kind="array-stop",
            params={"array": a.name},
        ),
    )


def build_delete(
    machine: Machine,
    array: str,
    superblocks: Superblocks | None = None,
    conf: tuple[str, str] | None = None,
) -> Plan:
    """Stop ``array`` and erase its superblock from every device that carries it — its members,
    and the former members outside it (``superblocks.outside``: a member failed and removed
    still carries it, and ``mdadm --assemble --scan`` would start the array again from it) —
    and every other signature on them; then drop its ARRAY entry from mdadm.conf (``conf``:
    its path and text) and rebuild the initramfs, which holds its own copy."""
    a = _array(machine, array)
    refused = stop_refusals(machine, a.name)
    if refused:
        raise PlanError(f"{a.name} cannot be stopped: " + "; ".join(i.message for i in refused))
    members = [m.device for m in a.members_by_slot]
    if not members:
        raise PlanError(f"{a.name} has no members to erase")
    outside = [sb.device for sb in (superblocks.outside.get(a.name, ()) if superblocks else ())]
    carriers = list(dict.fromkeys([*members, *outside]))
    steps = [Step(ops.StopArray(a.path), f"stop {a.name}")]
    for m in carriers:
        was = "a former member outside it" if m in outside else "a member"
        steps.append(
            Step(
                ops.ZeroSuperblock((f"/dev/{m}",)),
                f"erase {m}'s md superblock ({was}): it no longer belongs to {a.name}",
            )
        )
    for m in carriers:
        steps.append(
            Step(
                ops.Wipe(f"/dev/{m}"),
                f"erase every other signature on {m} (filesystem, LVM label)",
            )
        )
    notes: list[str] = []
    if superblocks is None:
        notes.append(
            "the devices' superblocks were not read: a former member outside the array may "
            "still carry it (mdadm --examine --scan lists them)"
        )
    if conf is not None and a.uuid:
        path, text = conf
        new, removed = without_uuids(text, [a.uuid])
        if removed:
            steps += edit_steps(path, text, new, why_new=f"{path} without {a.name}'s ARRAY entry")
            steps.append(initramfs_step(path))
            notes.append(f"lines removed from {path}:\n" + "\n".join(f"- {x}" for x in removed))
    size = human_bytes(a.size_bytes, trim=True) if a.size_bytes else "its"
    return _finish(
        machine,
        Plan(
            title=f"delete {a.path} ({a.level}, {len(members)} member"
            + ("s)" if len(members) != 1 else ")"),
            steps=tuple(steps),
            kind="array-delete",
            params={"array": a.name, "members": members, "outside": outside},
            warnings=(f"the {size} of data on {a.name} is gone for good once this runs",),
            notes=tuple(notes),
        ),
    )


def build_wipe(machine: Machine, device: str) -> Plan:
    d = strip_dev(device)
    if machine.device(d) is None:
        raise PlanError(f"no block device {d!r} on this machine")
    if machine.array(d) is not None:
        raise PlanError(f"{d} is an md array: delete it (raidman plan delete --array {d})")
    return _finish(
        machine,
        Plan(
            title=f"wipe /dev/{d}",
            steps=(
                Step(
                    ops.Wipe(f"/dev/{d}"),
                    f"erase every signature on {d} (md superblock, filesystem, LVM label, "
                    "partition table)",
                ),
            ),
            kind="wipe",
            params={"device": d},
        ),
    )


def fstab_line(uuid: str, mountpoint: str, fstype: str, options: str) -> str:
    opts = ",".join(dict.fromkeys([*options.split(","), "nofail"]))
    line = f"UUID={uuid} {mountpoint} {fstype} {opts} 0 2"
    bad = fstab_line_problem(line)
    if bad is not None:
        raise PlanError(f"fstab line: {bad}")
    return line


def build_mount(
    machine: Machine,
    device: str,
    mountpoint: str,
    *,
    options: str = "defaults",
    fstab: bool = False,
    fstab_text: str | None = None,
    fstab_in_place: bool = False,
    why_options: str = "",
) -> Plan:
    """Mount the filesystem on ``device`` at ``mountpoint``; with ``fstab`` also its line, as an
    edit of the whole file (``fstab_text``: /etc/fstab as read now; ``fstab_in_place``: the
    file is a mount point, so the checked copy is written into it instead of renamed over it:
    app.plans.builders.file_edit)."""
    d = _lv(machine, device) or strip_dev(device)
    if machine.device(d) is None:
        raise PlanError(f"no block device {d!r} on this machine")
    fs = machine.filesystem(d)
    if fs is None or fs.fstype not in FSTYPES:
        what = fs.fstype if fs is not None else "no filesystem"
        raise PlanError(f"{d} carries {what}: make an ext4 or XFS filesystem first")
    if fs.mounted:
        raise PlanError(f"{d} is mounted already on {', '.join(fs.mountpoints)}")
    bad = mountpoint_problem(mountpoint) or options_problem(options)
    if bad is not None:
        raise PlanError(bad)
    path = _path_of(machine, d)
    explained = f" ({why_options})" if why_options else ""
    steps = [
        Step(ops.MakeMountPoint(mountpoint), f"the mount point {mountpoint}"),
        Step(
            ops.Mount(path, mountpoint, options),
            f"mount the {fs.fstype} on {d} at {mountpoint} with {options}{explained}",
        ),
    ]
    notes: list[str] = []
    if fstab:
        if not fs.uuid:
            raise PlanError(f"{d}'s filesystem UUID is unknown (blkid): no fstab line by UUID")
        if fstab_text is None:
            raise PlanError(f"{FSTAB} could not be read: no line is planned without its text")
        line = fstab_line(fs.uuid, mountpoint, fs.fstype, options)
        if any(x.split()[:2] == line.split()[:2] for x in fstab_text.splitlines()):
            raise PlanError(f"{FSTAB} has a line for {mountpoint} already")
        old = fstab_text if fstab_text.endswith("\n") or not fstab_text else fstab_text + "\n"
        if old != fstab_text:
            raise PlanError(f"{FSTAB}: its last line has no newline: not rewritten")
        steps += edit_steps(
            FSTAB, old, old + line + "\n", why_new=f"add: {line}", in_place=fstab_in_place
        )
        notes.append(
            f"by UUID, not {path}: md names can change across reboots; nofail: the boot goes on "
            "if the array is missing"
        )
    return _finish(
        machine,
        Plan(
            title=f"mount {path} at {mountpoint}" + (" (+ /etc/fstab)" if fstab else ""),
            steps=tuple(steps),
            kind="mount",
            params={"device": d, "mountpoint": mountpoint, "options": options, "fstab": fstab},
            notes=tuple(notes),
        ),
    )


def _lv(machine: Machine, device: str) -> str | None:
    """The kernel name (dm-0) of the LV named ``vg/lv``, ``/dev/vg/lv`` or
    ``/dev/mapper/vg-lv`` (what an admin types), if active."""
    want = device if device.startswith("/dev/") else f"/dev/{device}"
    for lv in machine.lvs:
        if lv.kernel_name and want in (lv.path, f"/dev/mapper/{lv.dm_name}"):
            return lv.kernel_name
    return None


def _path_of(machine: Machine, name: str) -> str:
    """The path a step names ``name`` by: an LV's /dev/VG/LV, else /dev/NAME."""
    for lv in machine.lvs:
        if lv.kernel_name == name and lv.path:
            return lv.path
    return f"/dev/{name}"
