"""Why a block device cannot be written: the one in-use check behind pre-flight and the device pickers.

Every reason is an ``Issue`` (code, device, message, short). ``message`` completes a sentence that
starts with the device name ("sda: is mounted on /"); ``short`` is the picker's few words
("mounted on /").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from app.model import Disk, Machine, Partition

BOOT_MOUNTS = ("/", "/boot", "/boot/efi", "/efi")


@dataclass(frozen=True, slots=True)
class Issue:
    code: str
    device: str  # kernel name, or "" for the whole selection
    message: str
    short: str = ""  # a few words for a device picker; "" = use message
    # the mount points / swaps on the device itself it is about ("/", "active swap"): when the
    # device is the system disk, its "system disk" words say them already
    uses: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.device}: {self.message}" if self.device else self.message

    @property
    def brief(self) -> str:
        return self.short or self.message


def _own_use(machine: Machine, name: str) -> list[Issue]:
    """Why ``name`` itself (not its partitions) cannot be written."""
    out: list[Issue] = []
    fs = machine.filesystem(name)
    if fs is not None and fs.fstype == "swap":
        out.append(
            Issue("swap", name, "is a swap area" + (" in use" if fs.mounted else ""), "swap")
        )
    elif fs is not None and fs.mounted:
        mps = ", ".join(fs.mountpoints)
        out.append(
            Issue(
                "mounted", name, f"is mounted on {mps}", f"mounted on {mps}", tuple(fs.mountpoints)
            )
        )
    member_of = []
    for a in machine.arrays_with_member(name):
        member_of.append(a.name)
        out.append(
            Issue("held", name, f"is a member of the md array {a.name}", f"member of {a.name}")
        )
    pv = machine.pv(name)
    if pv is not None:
        vg = f" of volume group {pv.vg}" if pv.vg else ""
        out.append(
            Issue(
                "held", name, f"is an LVM physical volume{vg}", f"PV of {pv.vg}" if pv.vg else "PV"
            )
        )
    for child in machine.children_of(name):
        if machine.partition(child) is not None or child in member_of:
            continue
        out.append(
            Issue(
                "held", name, f"is held by {child} (device-mapper / md / LVM)", f"held by {child}"
            )
        )
    for c in machine.crypts:
        if c.backing == name and c.kernel_name not in machine.children_of(name):
            out.append(
                Issue(
                    "held", name, f"is held by the dm-crypt mapping {c.name}", f"dm-crypt {c.name}"
                )
            )
    return out


def _unchecked(machine: Machine, name: str) -> list[Issue]:
    """A safety check that could not run is a refusal naming why."""
    u = machine.usage
    if u is None:
        why = "the kernel's mounts, swaps and holders were not read"
        return [
            Issue(
                "unchecked", name, f"cannot check whether it is in use: {why}", "in-use not checked"
            )
        ]
    by_what: dict[str, list[str]] = {}
    for what, why in u.unread:
        by_what.setdefault(what, []).append(why)
    out = []
    for what, whys in by_what.items():
        why = whys[0] + (f" (and {len(whys) - 1} more)" if len(whys) > 1 else "")
        out.append(
            Issue(
                "unchecked",
                name,
                f"cannot check its {what}: {why}",
                f"{what} not checked: {whys[0]}",
            )
        )
    return out


def _kernel_use(machine: Machine, name: str, known_holders: set[str]) -> list[Issue]:
    """What the kernel says about ``name`` itself: mounted, active swap, held, and what is mounted
    on the devices built on it (md → dm → filesystem)."""
    u = machine.usage
    if u is None:
        return []
    out: list[Issue] = []
    mps = u.mountpoints(name)
    if mps:
        where = ", ".join(mps)
        out.append(
            Issue("mounted", name, f"is mounted on {where}", f"mounted on {where}", tuple(mps))
        )
    for f in u.swap_files(name):
        if f == f"/dev/{name}" or not f.startswith("/"):
            said = ("active swap",) if f == f"/dev/{name}" else ()
            out.append(Issue("swap", name, "is active swap", "active swap", said))
        else:
            out.append(
                Issue(
                    "swap",
                    name,
                    f"holds the active swap file {f}",
                    f"swap file {f}",
                    (f"swap file {f}",),
                )
            )
    for holder, path in u.stacked_on(name):
        via = " → ".join(path)
        if len(path) == 1 and holder not in known_holders:
            out.append(Issue("held", name, f"is held by {holder}", f"held by {holder}"))
        hm = u.mountpoints(holder)
        if hm:
            where = ", ".join(hm)
            out.append(
                Issue("mounted", name, f"holds {via}, mounted on {where}", f"{holder} on {where}")
            )
        if u.swap_files(holder):
            out.append(Issue("swap", name, f"holds {via}, active swap", f"swap on {holder}"))
    return out


def _device_use(machine: Machine, name: str) -> list[Issue]:
    own = _own_use(machine, name)
    known = {a.name for a in machine.arrays_with_member(name)}
    known |= {c.kernel_name for c in machine.crypts if c.backing == name}
    known |= set(machine.children_of(name))
    return own + _kernel_use(machine, name, known)


def _on_disks(machine: Machine, dev: str) -> list[tuple[str, str]]:
    """(whole disk, the device on that disk that carries ``dev``: a partition or the disk itself)
    for every disk ``dev`` lives on, from the model's stack and the kernel's partitions/slaves."""
    out: list[tuple[str, str]] = []
    below = (dev, *machine.ancestors_of(dev))
    for d in machine.disks_under(dev):
        part = next(
            (n for n in below if (p := machine.partition(n)) is not None and p.parent == d), d
        )
        out.append((d, part))
    if machine.usage is not None:
        out.extend(machine.usage.carriers_under(dev))
    return out or [(dev, dev)]


def system_uses(machine: Machine) -> dict[str, list[tuple[str, str]]]:
    """whole disk → [(what makes it the system disk, the device carrying it)], e.g.
    ``{"sda": [("/", "sda2"), ("active swap", "sda3")]}``: "/", "/boot", ... and active swap from
    the model's filesystems and from the kernel's mounts and swaps (through partitions and
    slaves). The carrying device is the partition of that disk (or the disk itself), with the
    device on top when it differs ("md0 on sda1")."""
    found: dict[str, list[tuple[str, str]]] = {}

    def add(dev: str, what: str) -> None:
        for disk, part in _on_disks(machine, dev):
            via = part if part == dev else f"{dev} on {part}"
            if (what, via) not in found.setdefault(disk, []):
                found[disk].append((what, via))

    for fs in machine.filesystems:
        for mp in fs.mountpoints:
            if mp in BOOT_MOUNTS:
                add(fs.device, mp)
    u = machine.usage
    if u is not None:
        for dev, mp in u.mounts:
            if mp in BOOT_MOUNTS:
                add(dev, mp)
        for dev, f in u.swaps:
            add(dev, "active swap" if f == f"/dev/{dev}" else f"swap file {f}")

    def order(item: tuple[str, str]) -> tuple[int, str, str]:
        what, via = item
        rank = BOOT_MOUNTS.index(what) if what in BOOT_MOUNTS else len(BOOT_MOUNTS)
        return (rank, what, via)

    return {d: sorted(uses, key=order) for d, uses in found.items()}


def boot_disks(machine: Machine) -> dict[str, str]:
    """whole disk → what makes it the system disk ("/", "/boot", "active swap", ...)."""
    return {
        d: ", ".join(dict.fromkeys(what for what, _ in uses))
        for d, uses in system_uses(machine).items()
    }


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def system_disk_warning(machine: Machine, name: str) -> Issue | None:
    """A free partition of the disk holding "/", "/boot" or active swap: allowed, with a warning
    naming what else the disk holds ("sda also holds / (sda2) and active swap (sda3)"). None for
    a whole disk (refused by ``in_use``) or a partition of any other disk."""
    dev = machine.device(name)
    u = machine.usage
    disk = dev.parent if isinstance(dev, Partition) else (u.disk_of(name) if u else None)
    if disk is None:
        return None
    uses = system_uses(machine).get(disk)
    if not uses:
        return None
    what = _listed([f"{w} ({via})" for w, via in uses])
    return Issue(
        "system-disk",
        name,
        f"is on the system disk: {disk} also holds {what}; a mistake in the partition number "
        "destroys the system",
        f"{disk} also holds {what}",
    )


def _dedupe(issues: list[Issue]) -> list[Issue]:
    seen: set[tuple[str, str]] = set()
    out = []
    for i in issues:
        if (i.code, i.message) not in seen:
            seen.add((i.code, i.message))
            out.append(i)
    return out


def partitions_of(machine: Machine, disk: str) -> tuple[str, ...]:
    names = [p.name for p in machine.partitions if p.parent == disk]
    if machine.usage is not None:
        names += machine.usage.partitions_of(disk)
    return tuple(dict.fromkeys(names))


def in_use(machine: Machine, name: str) -> list[Issue]:
    """Every reason ``name`` (a disk or partition kernel name) must not be overwritten; [] = free.

    Sources: the kernel (``Machine.usage``: mountinfo, /proc/swaps, sysfs holders) and the model
    (md membership, LVM PVs, dm-crypt, swap signatures). A disk is in use when it or any of its
    partitions is; the disk holding "/", "/boot" or active swap is refused as a whole (a create
    over it destroys the system). A partition of that disk is refused only for its own use (mounted,
    swap, held, member, PV); a free one is allowed with ``system_disk_warning``. A check that could
    not be read refuses with the reason.
    """
    dev = machine.device(name)
    if dev is None:
        return [Issue("unknown", name, "no such block device on this machine", "unknown device")]
    issues = _unchecked(machine, name) + _device_use(machine, name)
    boot = boot_disks(machine)
    u = machine.usage
    disk = dev.parent if isinstance(dev, Partition) else (u.disk_of(name) if u else None)
    if isinstance(dev, Disk) and disk is None:
        if name in boot:
            # a picker says it once: "holds / (system disk)", not "mounted on /; holds /"
            words = f"holds {boot[name]} (system disk)"
            whats = {what for what, _ in system_uses(machine)[name]}
            issues = [
                replace(i, short=words) if i.uses and set(i.uses) <= whats else i for i in issues
            ]
            issues.append(Issue("boot", name, f"is the system disk (holds {boot[name]})", words))
        for part in partitions_of(machine, name):
            for i in _device_use(machine, part):
                issues.append(
                    Issue(i.code, name, f"its partition {part} {i.message}", f"{part} {i.brief}")
                )
    return _dedupe(issues)


def unusable(machine: Machine, name: str) -> list[Issue]:
    """Why ``name`` cannot hold md data whatever uses it: read-only, or no capacity at all."""
    dev = machine.device(name)
    out: list[Issue] = []
    disk = machine.disk(dev.parent) if isinstance(dev, Partition) else dev
    if isinstance(disk, Disk) and disk.read_only:
        out.append(Issue("read-only", name, "is read-only", "read-only"))
    if isinstance(dev, Disk | Partition) and dev.size_bytes <= 0:
        out.append(Issue("empty", name, "has no capacity (0 bytes)", "0 bytes"))
    return out


def write_refusals(machine: Machine, name: str) -> list[Issue]:
    """Everything that forbids writing ``name`` as a new member: in use, read-only, empty."""
    issues = in_use(machine, name)
    if machine.device(name) is None:
        return issues
    return issues + unusable(machine, name)
