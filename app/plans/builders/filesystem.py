"""Filesystem wizard: optional LVM (pvcreate/vgcreate/lvcreate) then ext4 or XFS aligned to the array.

* LVM: ``pvcreate --dataalignment`` = chunk × data disks, so the first extent starts on a full stripe.
* ext4: ``mkfs.ext4 -b 4096 -E stride=S,stripe_width=W`` with S = chunk / block and
  W = S × data disks (the computation is written into the step's ``why``).
* XFS: ``mkfs.xfs -d su=CHUNK,sw=DATA_DISKS``.
LVM is transparent for this alignment (the article's observation), so the same numbers apply on an LV.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.format import human_bytes
from app.model import Machine, MdArray, levels
from app.plans import ops
from app.plans.geometry import (
    MIB,
    XFS_AUTO_STRIPE_MIN_BYTES,
    XFS_MIN_BYTES,
    XFS_SMALL_AGCOUNT,
    Geometry,
    PlanError,
    human_kib,
    parse_size,
)
from app.plans.guards.in_use import Issue, write_refusals
from app.plans.outcome.consequences import with_consequences
from app.plans.plan import Plan, Step

FSTYPES = ("ext4", "xfs")
_NAME_RE = re.compile(r"[A-Za-z0-9+_.][A-Za-z0-9+_.-]*")


@dataclass(frozen=True, slots=True)
class FilesystemParams:
    fstype: str = "ext4"  # "ext4" | "xfs" | "none" (LVM only)
    lvm: bool = False
    vg: str | None = None  # default: "vg" + the array's name digits
    lv: str = "data"
    lv_size: str = "100%FREE"  # a size ("200G") or an extents percentage ("100%FREE")
    label: str | None = None
    block_size: int = 4096


def geometry_of(array: MdArray) -> Geometry | None:
    if not array.raid_disks or not array.chunk_bytes:
        return None
    if array.level not in levels.STRIPED:
        return None
    return Geometry(array.level, array.raid_disks, array.chunk_bytes, array.layout)


def reshape_note(a: MdArray) -> str | None:
    """What a plan on ``a`` must say while a reshape changes its member count: the kernel keeps
    publishing the old geometry until the reshape ends (drivers/md/raid5.c ``end_reshape`` calls
    ``raid5_set_io_opt``, raid10.c ``end_reshape`` ``raid10_set_io_opt``; md/raid_disks reads
    ``"new (old)"``), so a mkfs left to read it would take the old stripe width."""
    old = a.previous_raid_disks
    if old is None or a.raid_disks is None or not a.chunk_bytes:
        return None
    if a.level not in levels.STRIPED:
        return None
    before = levels.optimal_io_bytes(a.level, old, a.chunk_bytes, a.layout)
    after = levels.optimal_io_bytes(a.level, a.raid_disks, a.chunk_bytes, a.layout)
    return (
        f"{a.name} is reshaping from {old} to {a.raid_disks} members: until the reshape ends "
        f"the kernel still reports the old geometry (optimal I/O {human_bytes(before)} = "
        f"{before // a.chunk_bytes} chunks, and the old size); this plan uses the new one "
        f"({human_bytes(after)} = {after // a.chunk_bytes} chunks), which is right once the "
        "reshape has finished. Waiting for it to finish is safest."
    )


def array_refusals(machine: Machine, array: str) -> tuple[Issue, ...]:
    """Why a filesystem or LVM must not be put on ``array``; () when it may.

    From the kernel's truth first (``in_use.write_refusals``: mounted, held by dm/md, an LVM PV,
    swap, checks that could not run), plus a filesystem the model knows that is not mounted
    (blkid's word: an unmounted filesystem still holds data) and arrays that cannot hold one."""
    name = array.removeprefix("/dev/")
    a = machine.array(name)
    if a is None:
        return (Issue("unknown", name, "no such md array on this machine", "unknown array"),)
    if a.is_container:
        return (
            Issue(
                "container",
                name,
                "is a container: put the filesystem on one of its volumes",
                "container",
            ),
        )
    out: list[Issue] = []
    if a.array_state in ("inactive", "clear"):
        out.append(Issue("inactive", name, f"is {a.array_state}: not running", a.array_state))
    out += write_refusals(machine, name)
    fs = machine.filesystem(name)
    if fs is not None and not fs.mounted and fs.fstype != "swap":
        out.append(
            Issue(
                "filesystem",
                name,
                f"carries an {fs.fstype} filesystem (not mounted): mkfs would destroy it",
                f"{fs.fstype} on it",
            )
        )
    return tuple(out)


def _check_name(kind: str, name: str) -> None:
    if not _NAME_RE.fullmatch(name) or name in (".", ".."):
        raise PlanError(f"invalid {kind} name {name!r}: use letters, digits, + _ . -")


def default_vg(device_path: str) -> str:
    digits = "".join(c for c in device_path.rsplit("/", 1)[-1] if c.isdigit())
    return f"vg{digits}" if digits else "vg0"


def _filesystem_bytes(params: FilesystemParams, size_bytes: int | None) -> int | None:
    """At most what the filesystem gets: the device's size, or the LV's (its --size, or its
    share of the device for a percentage); None when unknown."""
    if not params.lvm:
        return size_bytes
    pct = re.fullmatch(r"(\d+)%(FREE|VG|PVS)", params.lv_size.upper())
    if pct:
        return None if size_bytes is None else size_bytes * min(int(pct.group(1)), 100) // 100
    try:
        lv = parse_size(params.lv_size, default_unit=MIB)  # lvcreate --size: MiB by default
    except PlanError:
        return None  # a size lvcreate reads but raidman does not ("2T"): lvcreate judges it
    return lv if size_bytes is None else min(lv, size_bytes)


def _check_xfs_size(target: str, params: FilesystemParams, size_bytes: int | None) -> None:
    """Refuse an XFS mkfs.xfs would refuse for its size, before any step runs."""
    room = _filesystem_bytes(params, size_bytes)
    if room is not None and room < XFS_MIN_BYTES:
        raise PlanError(
            f"XFS needs at least {human_bytes(XFS_MIN_BYTES, trim=True)}: {target} would hold "
            f"{'at most ' if params.lvm else ''}{human_bytes(room, trim=True)} (mkfs.xfs refuses it: "
            f"'Filesystem must be larger than 300MB'); choose ext4 or a bigger device"
        )


def filesystem_steps(
    device_path: str,
    geometry: Geometry | None,
    params: FilesystemParams,
    size_bytes: int | None = None,
) -> tuple[list[Step], list[str]]:
    """The steps (and notes) that put LVM and/or a filesystem on ``device_path`` (of about
    ``size_bytes``, when known: an XFS under 1 GiB needs its allocation group count)."""
    if params.fstype not in (*FSTYPES, "none"):
        raise PlanError(f"unknown filesystem {params.fstype!r}; choose ext4 or xfs")
    if params.fstype == "none" and not params.lvm:
        return [], []
    if params.fstype == "xfs":
        lv = f"/dev/{params.vg or default_vg(device_path)}/{params.lv}"
        _check_xfs_size(lv if params.lvm else device_path, params, size_bytes)
    steps: list[Step] = []
    notes: list[str] = []
    target = device_path
    if params.lvm:
        vg = params.vg or default_vg(device_path)
        _check_name("volume group", vg)
        _check_name("logical volume", params.lv)
        pv_align: str | None = None
        if geometry is not None and geometry.striped:
            align = geometry.stripe_bytes
            pv_align = human_kib(align)
            why = (
                f"make {device_path} an LVM physical volume; data starts on a full stripe: "
                f"--dataalignment = chunk {human_kib(geometry.chunk_bytes)} × "
                f"{geometry.data_disks} data disks = {human_kib(align)}"
            )
            if (4 * 1024 * 1024) % align:
                notes.append(
                    f"the stripe ({human_kib(align)}) does not divide LVM's 4 MiB extent: "
                    "LVs after the first may start off a stripe boundary"
                )
        else:
            why = f"make {device_path} an LVM physical volume"
        steps.append(Step(ops.PvCreate(device_path, pv_align), why))
        steps.append(
            Step(ops.VgCreate(vg, device_path), f"create volume group {vg} on {device_path}")
        )
        lv_op = (
            ops.LvCreate(vg, params.lv, extents=params.lv_size)
            if "%" in params.lv_size
            else ops.LvCreate(vg, params.lv, size=params.lv_size)
        )
        steps.append(
            Step(
                lv_op,
                f"create logical volume {vg}/{params.lv} ({params.lv_size})",
            )
        )
        target = f"/dev/{vg}/{params.lv}"
        notes.append("LVM is transparent for stripe alignment: the filesystem uses the array's.")
    label = params.label or None
    if params.fstype == "ext4":
        stride: int | None = None
        width: int | None = None
        if geometry is not None and geometry.striped:
            stride, width = geometry.ext4(params.block_size)
            why = f"ext4 on {target}, aligned: {geometry.ext4_explained(params.block_size)}"
            notes.append(
                f"check afterwards: tune2fs -l {target} shows RAID stride {stride} / "
                f"RAID stripe width {width}"
            )
        else:
            why = f"ext4 on {target} (no striping underneath: no stride needed)"
        steps.append(Step(ops.MakeExt4(target, params.block_size, stride, width, label), why))
    elif params.fstype == "xfs":
        su: str | None = None
        sw: int | None = None
        ag: int | None = None
        if geometry is not None and geometry.striped:
            su, sw = geometry.xfs()
            why = f"XFS on {target}, aligned: {geometry.xfs_explained()}"
            if size_bytes is not None and size_bytes < XFS_AUTO_STRIPE_MIN_BYTES:
                ag = XFS_SMALL_AGCOUNT
                why += f"; agcount={XFS_SMALL_AGCOUNT} (under 1 GiB)"
                notes.append(
                    f"under 1 GiB mkfs.xfs would not align to the stripe by itself, and with "
                    f"su/sw alone it makes allocation groups too small for its 64 MiB minimum "
                    f"log (it refuses: 'Log size must be at least 64MB'); agcount="
                    f"{XFS_SMALL_AGCOUNT}, its own count for this size, leaves room for the log"
                )
        else:
            why = f"XFS on {target} (no striping underneath: no su/sw needed)"
        steps.append(Step(ops.MakeXfs(target, su, sw, ag, label), why))
    return steps, notes


def build_filesystem(machine: Machine, array: str, params: FilesystemParams) -> Plan:
    """LVM and/or a filesystem on an existing array (kernel name, e.g. "md127")."""
    name = array.removeprefix("/dev/")
    a = machine.array(name)
    if a is None:
        raise PlanError(f"no md array {name!r} on this machine")
    if a.is_container:
        volumes = ", ".join(v.name for v in machine.arrays if v.container == name)
        raise PlanError(
            f"{name} is a container ({a.metadata}): it holds metadata, not data; put the "
            "filesystem on one of its volumes" + (f" ({volumes})" if volumes else "")
        )
    geo = geometry_of(a)
    steps, notes = filesystem_steps(a.path, geo, params, a.size_bytes or None)
    if not steps:
        raise PlanError("nothing to do: choose a filesystem or LVM")
    reshape = reshape_note(a)
    if reshape is not None and geo is not None:
        notes.insert(0, reshape)
    what = " + ".join(
        x
        for x in ("LVM" if params.lvm else "", params.fstype if params.fstype != "none" else "")
        if x
    )
    plan = Plan(
        title=f"{what} on {a.path}",
        steps=tuple(steps),
        target=name,
        kind="filesystem",
        params={
            "array": name,
            "fstype": params.fstype,
            "lvm": params.lvm,
            "vg": params.vg,
            "lv": params.lv,
            "lv_size": params.lv_size,
            "label": params.label,
            "block_size": params.block_size,
        },
        notes=tuple(notes),
    )
    return with_consequences(plan, machine)
