"""Create-array wizard: ``mdadm --create`` with every choice explicit, then (optionally) mdadm.conf,
the initramfs, and LVM + a filesystem aligned to the new array.

mdadm.conf: the ARRAY line carries the UUID mdadm chooses during ``--create``, so it cannot be
written into the plan in advance. The plan has one step that pipes
``mdadm --detail --brief /dev/md/NAME`` into ``tee -a /etc/mdadm/mdadm.conf`` (``Step.stdin_from``;
the executor runs both programs through ``backend.run``). The preview shows the current
``mdadm --detail --scan`` vs the file as notes (``conf_diff``), so stale lines are visible.

Names: the source article recommends a 3-digit numeric ``--name`` (e.g. 127): the array then
appears as /dev/md/127 *and* stays /dev/md127 across boots. Without ``--name`` mdadm/udev may
number it differently after a reboot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.backend import Backend
from app.model import Disk, Machine, levels, md_names
from app.model.sync_model import forecast_sync
from app.plans import ops
from app.plans.builders.create_guidance import guidance
from app.plans.builders.filesystem import FilesystemParams, filesystem_steps
from app.plans.geometry import (
    KIB,
    Geometry,
    PlanError,
    human_kib,
    normalize_level,
)
from app.plans.guards.preflight import strip_dev
from app.plans.outcome.consequences import with_consequences
from app.plans.plan import Plan, Step
from app.plans.shapes import MDADM_CONF, created_file_problem

DEFAULT_CHUNK = 512 * KIB
DEFAULT_CONF = "/etc/mdadm/mdadm.conf"
CHUNK_GUIDANCE = (
    "chunk: mdadm's default is 512 KiB, good for large sequential I/O; on a 4-SSD RAID-10 "
    "32 KiB measured better for small random I/O (a large chunk is not always best)"
)
BITMAP_GUIDANCE = {
    "internal": (
        "bitmap internal: after a temporary drop-out (cable, timeout) a re-add resyncs only "
        "blocks written meanwhile; costs write performance (up to 30% measured on sequential writes)"
    ),
    "none": (
        "bitmap none: best write performance; a member that drops out and is re-added is "
        "rebuilt in full (fine for fast SSD RAID-10; RAID-5 wants a bitmap: its rebuilds are long)"
    ),
}
_NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,32}")
_LAYOUTS_R10 = re.compile(r"[nfo][2-9]")


@dataclass(frozen=True, slots=True)
class CreateArrayParams:
    level: str
    devices: tuple[str, ...]
    spares: tuple[str, ...] = ()
    chunk_bytes: int | None = None  # None: the 512 KiB default, written out explicitly
    layout: str | None = None  # raid10: n2/f2/o2; raid5/6: left-symmetric, ...
    # "internal" | "none" | an absolute path (external bitmap file); None: the default per level
    # and media (default_bitmap)
    bitmap: str | None = None
    metadata: str = "1.2"
    name: str | None = None  # None: the first free 3-digit number from 127 down
    update_conf: bool = False
    conf_path: str = DEFAULT_CONF
    update_initramfs: bool = False
    filesystem: FilesystemParams | None = field(default=None)


def _member_disks(machine: Machine, devices: tuple[str, ...]) -> list[Disk | None]:
    out: list[Disk | None] = []
    for d in devices:
        disk = machine.disk(d)
        part = machine.partition(d)
        out.append(disk if disk is not None else machine.disk(part.parent) if part else None)
    return out


def default_bitmap(machine: Machine, level: str, devices: tuple[str, ...]) -> tuple[str, str]:
    """(bitmap, why) when the user did not choose: article 000 creates SSD RAID-10 with
    --bitmap=none (fast re-syncs on SSDs, no bitmap write cost) and wants RAID-5 "nur mit
    Bitmap"; everything else keeps mdadm's internal bitmap."""
    disks = _member_disks(machine, devices)
    if level == "raid10" and disks and all(d is not None and d.is_ssd for d in disks):
        return "none", (
            "bitmap default for RAID-10 of SSDs: none (best write speed, and a "
            "re-sync of SSD RAID-10 is quick) — the trade-off: a member that drops out and comes "
            "back is rewritten in full; choose internal to resync only what changed"
        )
    return "internal", (
        f"bitmap default for {levels.label(level)}: internal (a member that drops out and "
        "is re-added resyncs only what changed, not the whole member)"
    )


def initial_sync_warning(
    machine: Machine,
    level: str,
    devices: tuple[str, ...],
    layout: str | None = None,
    metadata: str = "1.2",
) -> str | None:
    """RAID-1/4/5/6/10 start with a sync; on SSDs what it writes is wear before any data is
    stored. What it writes, and why, is the sync model's (``app.model.sync_model``
    forecast_sync, measured on a real kernel in issue 22) — the same sentence the audit's
    md-parity-on-ssd gives (app/rules/md.py); the plan's consequences give the bytes."""
    if level not in levels.REDUNDANT:
        return None
    disks = _member_disks(machine, devices)
    ssds = [dev for dev, d in zip(devices, disks, strict=True) if d and d.is_ssd]
    if not ssds:
        return None
    members = []
    for dev, d in zip(devices, disks, strict=True):
        part = machine.partition(dev)
        size = part.size_bytes if part is not None else d.size_bytes if d is not None else 0
        members.append((dev, size))
    first = forecast_sync(
        array="new",
        level=level,
        raid_disks=len(devices),
        layout=layout,
        action="resync",
        members=members,
        initial=True,
        external_metadata=metadata.lower() in ("imsm", "ddf"),
    )
    return (
        f"the initial sync of this {levels.label(level)}: {first.why}. That is flash wear on "
        f"the SSD members ({', '.join(ssds)}) before any data is stored. --assume-clean skips "
        "it only when every member returns zeroes after a full TRIM"
    )


def free_name(machine: Machine) -> str:
    used = _used_names(machine)
    for n in range(127, 99, -1):
        if str(n) not in used:
            return str(n)
    raise PlanError("no free 3-digit array number between 100 and 127")


def _used_names(machine: Machine) -> set[str]:
    used: set[str] = set()
    for a in machine.arrays:
        used.add(a.name.removeprefix("md"))
        if a.array_name:
            used.add(a.array_name.split(":")[-1])
    return used


def _array_lines(text: str) -> dict[str, str]:
    """ARRAY lines keyed by UUID (or by the whole line when there is none)."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith("ARRAY"):
            continue
        m = re.search(r"UUID=([0-9a-fA-F:]+)", line)
        out[m.group(1).lower() if m else line] = line
    return out


def conf_diff(current_conf: str | None, scan: str | None) -> list[str]:
    """How mdadm.conf differs from ``mdadm --detail --scan``: lines to add (+) and stale ones (-)."""
    if scan is None:
        return ["mdadm --detail --scan was not available: mdadm.conf not compared"]
    conf = _array_lines(current_conf or "")
    running = _array_lines(scan)
    out = [f"+ {line}" for k, line in running.items() if k not in conf]
    out += [
        f"- {line}   (no running array with this UUID)"
        for k, line in conf.items()
        if k not in running
    ]
    if current_conf is None:
        out.insert(0, "mdadm.conf does not exist yet")
    return out


def _estimated_size(machine: Machine, devices: tuple[str, ...], geo: Geometry | None) -> int | None:
    """About what the new striped array holds (smallest device × data disks, before the md
    superblock and data offset); None when a size is unknown."""
    sizes = [getattr(machine.device(d), "size_bytes", None) for d in devices]
    if geo is None or not sizes or not all(isinstance(x, int) and x > 0 for x in sizes):
        return None
    return min(x for x in sizes if isinstance(x, int)) * geo.data_disks


def read_conf_and_scan(
    backend: Backend, conf_path: str = DEFAULT_CONF
) -> tuple[str | None, str | None]:
    """mdadm.conf and ``mdadm --detail --scan`` as they are now, for the plan's diff (None
    where unreadable). Blocking I/O: ``raidman plan`` calls it, and the TUI from a worker."""
    try:
        conf = backend.read_text(conf_path)
    except Exception:
        conf = None
    try:
        res = backend.run(["mdadm", "--detail", "--scan"])
        scan = res.stdout if res.ok else None
    except Exception:
        scan = None
    return conf, scan


def build_create_array(
    machine: Machine,
    params: CreateArrayParams,
    *,
    current_conf: str | None = None,
    current_scan: str | None = None,
) -> Plan:
    level = normalize_level(params.level)
    devices = tuple(strip_dev(d) for d in params.devices)
    spares = tuple(strip_dev(d) for d in params.spares)
    if not devices:
        raise PlanError("choose at least one device")
    dup = {d for d in (*devices, *spares) if (*devices, *spares).count(d) > 1}
    if dup:
        raise PlanError(f"device listed twice: {', '.join(sorted(dup))}")
    need = levels.min_devices(level, params.layout if level == "raid10" else None)
    if len(devices) < need:
        raise PlanError(
            f"{levels.label(level)} needs at least {need} devices (mdadm --create refuses "
            f"fewer without --force); {len(devices)} chosen"
        )
    if spares and level not in levels.REDUNDANT:
        raise PlanError(f"{level} has no redundancy: spares make no sense")
    missing = [d for d in (*devices, *spares) if machine.device(d) is None]
    if missing:
        # before a plan is printed (it printed the whole plan and "type the target's name"
        # above pre-flight's refusal of devices that do not exist)
        raise PlanError(
            f"no such block device on this machine: {', '.join(missing)} "
            "(raidman report lists the disks and partitions)"
        )
    name = params.name if params.name else free_name(machine)
    if not _NAME_RE.fullmatch(name):
        raise PlanError(f"invalid array name {name!r}: letters, digits, _ . - (up to 32)")
    if name in _used_names(machine):
        raise PlanError(f"an array named {name!r} (or md{name}) already exists")
    dev_path = f"/dev/md/{name}"
    notes: list[str] = []
    warnings: list[str] = []
    if name.isdigit() and len(name) == 3:
        notes.append(f"name {name}: the array appears as {dev_path}, stable as /dev/md{name}")
    else:
        warnings.append(
            f"name {name!r} is not a 3-digit number: {dev_path} is stable but the /dev/mdNNN "
            "number may change across boots (a 3-digit name such as --name=127 keeps it)"
        )

    chunk_arg: str | None = None
    layout_arg: str | None = None
    striped = level in levels.STRIPED
    chunk = params.chunk_bytes if params.chunk_bytes is not None else DEFAULT_CHUNK
    if striped:
        if chunk < 4 * KIB or chunk & (chunk - 1):
            raise PlanError(f"chunk {human_kib(chunk)}: must be a power of two, at least 4K")
        chunk_arg = human_kib(chunk)
        notes.append(
            CHUNK_GUIDANCE
            + (
                f"; this plan: {human_kib(chunk)}"
                + (" (default)" if params.chunk_bytes is None else "")
            )
        )
    elif params.chunk_bytes is not None:
        raise PlanError(f"{level} has no chunk size")
    layout = params.layout
    if layout is not None:
        if level == "raid10":
            if not _LAYOUTS_R10.fullmatch(layout):
                raise PlanError(f"RAID-10 layout {layout!r}: use n2, f2 or o2 (or n3, ...)")
            if levels.raid10_copies(layout) > len(devices):
                raise PlanError(f"layout {layout} keeps {layout[1:]} copies: needs as many devices")
        elif level in levels.PARITY:
            if layout not in md_names.R5_LAYOUT_NAMES:
                raise PlanError(f"layout {layout!r} is not a RAID-4/5/6 layout")
        else:
            raise PlanError(f"{level} has no layout")
        layout_arg = layout
    bitmap_arg: str | None = None
    if level in levels.REDUNDANT:
        bm = params.bitmap
        default_why = None
        if bm is None:
            bm, default_why = default_bitmap(machine, level, devices)
        bitmap_arg = bm
        if bm not in ("internal", "none") and not bm.startswith("/"):
            raise PlanError("bitmap: internal, none, or an absolute file path (external bitmap)")
        if bm not in ("internal", "none") and (bad := created_file_problem(bm)) is not None:
            raise PlanError(f"bitmap file {bad}")
        if default_why is not None:
            notes.append(default_why)
        else:
            notes.append(
                BITMAP_GUIDANCE.get(
                    bm,
                    f"bitmap in the file {bm}: must live on a filesystem outside the array "
                    "(ext2/ext3 per mdadm(8)); cheap re-adds with less write cost on the array",
                )
            )
    wear = initial_sync_warning(machine, level, devices, layout_arg, params.metadata)
    if wear is not None:
        warnings.append(wear)
    create = ops.CreateArray(
        dev_path,
        level.removeprefix("raid"),
        tuple(f"/dev/{d}" for d in devices),
        tuple(f"/dev/{d}" for d in spares),
        chunk=chunk_arg,
        layout=layout_arg,
        bitmap=bitmap_arg,
        metadata=params.metadata,
        name=name,
        run=True,  # no "Continue creating array?" question: the preview was the question
    )
    desc = f"{levels.label(level)} of {len(devices)}" + (
        f" + {len(spares)} spare" if spares else ""
    )
    steps = [Step(create, f"create {dev_path} ({desc}): overwrites {', '.join(devices + spares)}")]
    if params.update_conf and params.conf_path not in MDADM_CONF:
        raise PlanError(f"mdadm.conf: {params.conf_path!r} is not {' or '.join(MDADM_CONF)}")
    if params.update_conf:
        steps.append(
            Step(
                ops.AppendArrayFromDetail(params.conf_path, dev_path),
                f"append the new array's ARRAY line (its UUID exists only after create) to "
                f"{params.conf_path}, so it assembles as {dev_path} at boot",
            )
        )
        diff = conf_diff(current_conf, current_scan)
        if diff:
            notes.append(f"{params.conf_path} vs mdadm --detail --scan now:\n" + "\n".join(diff))
        else:
            notes.append(f"{params.conf_path} matches mdadm --detail --scan now")
    if params.update_initramfs:
        steps.append(
            Step(
                ops.UpdateInitramfs("update-initramfs"),
                "rebuild the initramfs so early boot sees the new mdadm.conf",
            )
        )
    if params.filesystem is not None:
        geo = (
            Geometry(level, len(devices), chunk, layout or ("n2" if level == "raid10" else None))
            if striped
            else None
        )
        fs_steps, fs_notes = filesystem_steps(
            dev_path, geo, params.filesystem, _estimated_size(machine, devices, geo)
        )
        steps += fs_steps
        notes += fs_notes
    more_notes, more_warnings = guidance(
        machine, level, tuple(devices), layout, chunk if striped else None
    )
    notes += more_notes
    warnings += more_warnings
    plan = Plan(
        title=f"create {desc} {dev_path}",
        steps=tuple(steps),
        target=name,
        warnings=tuple(warnings),
        kind="create-array",
        params={
            "level": level,
            "devices": list(devices),
            "spares": list(spares),
            "chunk_bytes": chunk if striped else None,
            "layout": layout,
            "bitmap": bitmap_arg,
            "metadata": params.metadata,
            "name": name,
            "update_conf": params.update_conf,
            "update_initramfs": params.update_initramfs,
            "filesystem": None
            if params.filesystem is None
            else {
                "fstype": params.filesystem.fstype,
                "lvm": params.filesystem.lvm,
                "vg": params.filesystem.vg,
                "lv": params.filesystem.lv,
            },
        },
        notes=tuple(notes),
    )
    return with_consequences(plan, machine)


def devices_of(plan: Plan) -> tuple[str, ...]:
    """The devices a create-array plan overwrites (for pre-flight on apply)."""
    p = plan.params
    return tuple(p.get("devices") or ()) + tuple(p.get("spares") or ())
