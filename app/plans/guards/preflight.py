"""Pre-flight safety: before a plan that writes to devices is offered (and again before it runs).

Refusals (never forcible):
  in use (``app.plans.guards.in_use``, from the kernel's mountinfo, /proc/swaps and sysfs holders plus
  md/LVM/dm-crypt membership): mounted, swap, held, the whole disk holding "/", "/boot" or swap;
  ``unchecked`` a safety check could not run (the reason is named); ``unknown`` no such device;
  ``read-only`` / ``empty``; ``smart-failed`` SMART health FAILED on a new member or target;
  ``too-small`` smaller than the array's members use; ``device-count`` fewer devices than mdadm
  (or the kernel, for RAID-10 layouts) accepts; ``busy`` an operation the kernel answers EBUSY
  while the array syncs (run it after the sync).

Warnings (each has a ``code``; going past one is an explicit ``--force CODE`` / a checkbox, and the
executor records the forced codes in the audit log):
  ``signatures``   existing signatures (``wipefs --no-act --json DEV``) or a partition table
  ``size-mismatch`` members of different sizes: the array uses the smallest, the rest is lost
  ``mixed-media``  rotational and SSD members mixed (the array runs at the disks' speed)
  ``too-few``      fewer devices than the level is worth (a 2-device RAID-5 is a mirror)
  ``sector-size``  members with different logical or physical sector sizes
  ``smart``        reallocated/pending/offline-uncorrectable/CRC counts above zero
  ``wipefs``       signatures could not be checked (wipefs missing or failed)
  ``system-disk``  a free partition of the disk holding "/", "/boot" or active swap (the disk
                   itself is refused): names what else the disk holds
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from app.backend import Backend
from app.format import human_bytes
from app.model import Disk, Machine, Partition, levels
from app.model.smart import SmartReading
from app.plans.geometry import PlanError, normalize_level
from app.plans.guards.eligibility import disk_of, needed_member_bytes, smart_failed, smart_warnings
from app.plans.guards.in_use import Issue, system_disk_warning, write_refusals
from app.plans.ops import Op

__all__ = [
    "Issue",
    "Preflight",
    "check",
    "check_busy",
    "check_signatures",
    "check_smart",
    "strip_dev",
]

# The fewest --raid-devices mdadm --create accepts (raidman never forces) is the level table's
# (app.model.levels: mdadm.c refuses 1 device without --force, Create.c level 6 below 4; RAID-10
# needs as many devices as copies: raid10.c setup_conf).
# fewer than this works but is not worth the level: a 2-device RAID-4/5 stores what a mirror does
RECOMMENDED_DEVICES = {"raid4": 3, "raid5": 3}

# sync actions during which md answers EBUSY to --grow (bitmap, size, raid-devices, level,
# chunk): md.c update_array_info / update_size / update_raid_disks refuse while a sync thread runs
BUSY_ACTIONS = ("resync", "recover", "check", "repair", "reshape")


@dataclass(frozen=True, slots=True)
class Preflight:
    refusals: tuple[Issue, ...] = ()
    warnings: tuple[Issue, ...] = ()

    @property
    def ok(self) -> bool:
        """No refusals (warnings may still need forcing)."""
        return not self.refusals

    @property
    def warning_codes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(w.code for w in self.warnings))

    def unforced(self, forced: Iterable[str]) -> tuple[Issue, ...]:
        f = set(forced)
        return tuple(w for w in self.warnings if w.code not in f)

    def allows(self, forced: Iterable[str]) -> bool:
        """True when nothing is refused and every warning was forced."""
        return self.ok and not self.unforced(forced)

    def lines(self) -> list[str]:
        out = [f"REFUSED {r} [{r.code}]" for r in self.refusals]
        out += [f"warning {w} [{w.code}]" for w in self.warnings]
        return out


def strip_dev(name: str) -> str:
    """ "/dev/nvme0n1" → "nvme0n1"; "/dev/md/127" stays a path (not a kernel name)."""
    if name.startswith("/dev/") and "/" not in name[5:]:
        return name[5:]
    return name


def _parse_wipefs(stdout: str) -> list[str]:
    """``wipefs --no-act --json`` → ["gpt at 0x200", ...]."""
    if not stdout.strip():
        return []
    data = json.loads(stdout)
    sigs = data.get("signatures") if isinstance(data, dict) else None
    if not isinstance(sigs, list):
        return []
    out = []
    for s in sigs:
        if not isinstance(s, dict):
            continue
        t = s.get("type") or "unknown"
        label = f" label {s['label']!r}" if s.get("label") else ""
        off = f" at {s['offset']}" if s.get("offset") is not None else ""
        out.append(f"{t}{label}{off}")
    return out


def _hex(uuid: str) -> str:
    """An md UUID in any spelling (mdadm's 8:8:8:8, blkid's 8-4-4-4-12) as 32 hex digits."""
    return "".join(c for c in uuid.lower() if c in "0123456789abcdef")


def _own_superblock(stdout: str, array_uuid: str | None) -> bool:
    """Every signature ``wipefs`` found is an md superblock of the array ``array_uuid``: the
    device is a former member going back into its own array (nothing foreign is overwritten)."""
    if not array_uuid or len(_hex(array_uuid)) != 32:
        return False
    try:
        data = json.loads(stdout)
    except ValueError:
        return False
    sigs = data.get("signatures") if isinstance(data, dict) else None
    if not isinstance(sigs, list) or not sigs:
        return False
    return all(
        isinstance(s, dict)
        and s.get("type") == "linux_raid_member"
        and isinstance(s.get("uuid"), str)
        and _hex(s["uuid"]) == _hex(array_uuid)
        for s in sigs
    )


def check_signatures(backend: Backend, name: str, array_uuid: str | None = None) -> list[Issue]:
    """A warning when ``name`` holds signatures; none when they are only the md superblock of
    the array it is added back to (``array_uuid``: same array UUID)."""
    res = backend.run(["wipefs", "--no-act", "--json", f"/dev/{name}"])
    if res.returncode == 127:
        return [Issue("wipefs", name, "wipefs not found: existing signatures were not checked")]
    if not res.ok:
        msg = res.stderr.strip().splitlines()[:1]
        return [Issue("wipefs", name, f"wipefs failed: {msg[0] if msg else res.returncode}")]
    try:
        sigs = _parse_wipefs(res.stdout)
    except (ValueError, AttributeError):
        return [Issue("wipefs", name, "could not read wipefs output: signatures not checked")]
    if not sigs or _own_superblock(res.stdout, array_uuid):
        return []
    return [
        Issue(
            "signatures",
            name,
            f"has existing signatures ({'; '.join(sigs)}): they will be overwritten",
        )
    ]


def check_smart(
    machine: Machine, name: str, smart: Mapping[str, SmartReading]
) -> tuple[list[Issue], list[Issue]]:
    """(refusals, warnings) from the SMART reading of the disk ``name`` lives on."""
    reading = smart.get(disk_of(machine, name))
    if reading is None:
        return [], []
    if smart_failed(reading):
        return [
            Issue(
                "smart-failed",
                name,
                "SMART overall health is FAILED: the drive itself predicts its failure; "
                "it must not become an array member",
                "SMART FAILED",
            )
        ], []
    counts = smart_warnings(reading)
    if counts:
        return [], [Issue("smart", name, f"SMART shows {', '.join(counts)}")]
    return [], []


def _sector_sizes(machine: Machine, name: str) -> tuple[int, int] | None:
    d = machine.disk(disk_of(machine, name))
    return None if d is None else (d.logical_sector, d.physical_sector)


def check_busy(machine: Machine, steps: Iterable[Op]) -> list[Issue]:
    """``mdadm --grow`` on an array whose sync thread runs: the kernel answers EBUSY."""
    out: list[Issue] = []
    for op in steps:
        path = op.array() if op.grows() else None
        a = machine.array(strip_dev(path)) if path is not None else None
        if a is None or a.sync is None or a.sync.action not in BUSY_ACTIONS:
            continue
        pct = f" ({a.sync.fraction:.0%} done)" if a.sync.fraction is not None else ""
        out.append(
            Issue(
                "busy",
                a.name,
                f"is running a {a.sync.action}{pct}: md answers EBUSY to "
                f"'{' '.join(op.argv())}' while it runs; run it after the {a.sync.action} ends",
                f"{a.sync.action} running: after it ends",
            )
        )
    return out


def check(
    machine: Machine,
    devices: Sequence[str],
    *,
    backend: Backend | None = None,
    level: str | None = None,
    layout: str | None = None,
    raid_devices: int | None = None,
    check_sizes: bool = True,
    array: str | None = None,
    smart: Mapping[str, SmartReading] | None = None,
) -> Preflight:
    """Check ``devices`` (kernel names or /dev paths) that a plan will overwrite.

    ``level``/``raid_devices`` enable the device-count checks (``raid_devices`` defaults to the
    number of devices). ``array`` (add/replace/grow) enables the too-small check and compares
    sector sizes with its members. ``smart`` (whole-disk name → reading) enables the SMART
    checks. ``backend`` enables the wipefs signature check.
    """
    names = [strip_dev(d) for d in devices]
    refusals: list[Issue] = []
    warnings: list[Issue] = []
    need = needed_member_bytes(machine, array) if array else None

    for name in dict.fromkeys(names):
        dev = machine.device(name)
        issues = write_refusals(machine, name)
        if dev is not None and smart is not None:
            refused, warned = check_smart(machine, name, smart)
            issues += refused
            warnings.extend(warned)
        if need is not None and isinstance(dev, Disk | Partition) and dev.size_bytes < need:
            issues.append(
                Issue(
                    "too-small",
                    name,
                    f"is {human_bytes(dev.size_bytes, trim=True)}; each member of {array} needs "
                    f"{human_bytes(need, trim=True)} ({need} bytes)",
                    f"too small (needs {human_bytes(need, trim=True)})",
                )
            )
        refusals.extend(issues)
        if dev is None:
            continue
        system = None if issues else system_disk_warning(machine, name)
        if system is not None:
            warnings.append(system)
        if backend is not None and not issues:
            own = machine.array(array) if array else None
            warnings.extend(check_signatures(backend, name, own.uuid if own else None))
        elif backend is None and isinstance(dev, Disk) and dev.partition_table:
            warnings.append(
                Issue(
                    "signatures",
                    name,
                    f"has a {dev.partition_table} partition table: it and every partition will be lost",
                )
            )

    known = [machine.device(n) for n in dict.fromkeys(names)]
    sized = [(d.name, d.size_bytes) for d in known if isinstance(d, Disk | Partition)]
    if check_sizes and len(sized) >= 2:
        smallest = min(s for _, s in sized)
        lost = sum(s - smallest for _, s in sized)
        if lost > 0:
            big = ", ".join(f"{n} {human_bytes(s, trim=True)}" for n, s in sized if s > smallest)
            warnings.append(
                Issue(
                    "size-mismatch",
                    "",
                    f"members differ in size: each is used only up to the smallest "
                    f"({human_bytes(smallest, trim=True)}); {lost} bytes ({human_bytes(lost, trim=True)}) lost ({big})",
                )
            )
    rot = {_rotational(machine, d.name) for d in known if isinstance(d, Disk | Partition)}
    if True in rot and False in rot:
        warnings.append(
            Issue(
                "mixed-media",
                "",
                "mixes rotational disks and SSDs: the array runs at the speed of the slowest",
            )
        )
    warnings.extend(_sector_mismatch(machine, names, array))
    if level is not None:
        n = raid_devices if raid_devices is not None else len(names)
        refused, warned = _count(level, layout, n)
        refusals.extend(refused)
        warnings.extend(warned)
    return Preflight(tuple(refusals), tuple(warnings))


def _count(level: str, layout: str | None, n: int) -> tuple[list[Issue], list[Issue]]:
    try:
        lvl = normalize_level(level)
    except PlanError:
        lvl = level
    need: int | None = levels.min_devices(lvl, layout) if lvl in levels.LEVELS else None
    why = "mdadm refuses fewer"
    if lvl == "raid10" and need is not None and need > levels.LEVELS[lvl].min_devices:
        why = f"layout {layout} keeps {need} copies; the kernel refuses fewer devices"
    if need is not None and n < need:
        return [
            Issue("device-count", "", f"{lvl} needs at least {need} devices ({why}), {n} given")
        ], []
    rec = RECOMMENDED_DEVICES.get(lvl)
    if rec is not None and n < rec:
        return [], [
            Issue(
                "too-few",
                "",
                f"{lvl} needs at least {rec} devices to be worth it, {n} given "
                "(a 2-device RAID-5 holds what a RAID-1 holds, with parity work)",
            )
        ]
    return [], []


def _sector_mismatch(machine: Machine, names: Sequence[str], array: str | None) -> list[Issue]:
    devs = list(dict.fromkeys(names))
    a = machine.array(array) if array else None
    if a is not None:
        devs += [m.device for m in a.members if m.device not in devs]
    sizes = {n: s for n in devs if (s := _sector_sizes(machine, n)) is not None}
    if len(set(sizes.values())) <= 1:
        return []
    listed = ", ".join(f"{n} {lg}/{ph}" for n, (lg, ph) in sizes.items())
    return [
        Issue(
            "sector-size",
            "",
            "members differ in logical/physical sector size (" + listed + "): md uses the "
            "largest logical size for the array, and writes smaller than a member's physical "
            "sector cost it a read-modify-write",
        )
    ]


def _rotational(machine: Machine, name: str) -> bool | None:
    d = machine.disk(name)
    if d is None:
        p = machine.partition(name)
        d = machine.disk(p.parent) if p is not None else None
    return None if d is None else d.rotational
