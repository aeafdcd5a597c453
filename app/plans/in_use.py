"""Why a block device cannot be written: the one in-use check behind pre-flight and the device pickers.

Every reason is an ``Issue`` (code, device, message, short). ``message`` completes a sentence that
starts with the device name ("sda: is mounted on /"); ``short`` is the picker's few words
("mounted on /").
"""

from __future__ import annotations

from dataclasses import dataclass

from app.model import Disk, Machine, Partition

BOOT_MOUNTS = ("/", "/boot", "/boot/efi", "/efi")


@dataclass(frozen=True, slots=True)
class Issue:
    code: str
    device: str  # kernel name, or "" for the whole selection
    message: str
    short: str = ""  # a few words for a device picker; "" = use message

    def __str__(self) -> str:
        return f"{self.device}: {self.message}" if self.device else self.message

    @property
    def brief(self) -> str:
        return self.short or self.message


def boot_disks(machine: Machine) -> dict[str, str]:
    """disk kernel name → the mountpoint that makes it the boot/root disk."""
    out: dict[str, str] = {}
    for fs in machine.filesystems:
        for mp in fs.mountpoints:
            if mp in BOOT_MOUNTS:
                for d in machine.disks_under(fs.device) or (fs.device,):
                    out.setdefault(d, mp)
    return out


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
        out.append(Issue("mounted", name, f"is mounted on {mps}", f"mounted on {mps}"))
    member_of = []
    for a in machine.arrays:
        if a.member(name) is not None:
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


def in_use(machine: Machine, name: str) -> list[Issue]:
    """Every reason ``name`` (a disk or partition kernel name) must not be overwritten; [] = free.

    A disk is in use when it or any of its partitions is; the disk under "/", "/boot" or an active
    swap is refused as a whole, and so is each of its partitions.
    """
    dev = machine.device(name)
    if dev is None:
        return [Issue("unknown", name, "no such block device on this machine", "unknown device")]
    issues = _own_use(machine, name)
    boot = boot_disks(machine)
    if isinstance(dev, Disk):
        if name in boot:
            issues.append(
                Issue(
                    "boot",
                    name,
                    f"is the boot/root disk (holds {boot[name]})",
                    f"holds {boot[name]}",
                )
            )
        for part in machine.partitions:
            if part.parent == name:
                for i in _own_use(machine, part.name):
                    issues.append(
                        Issue(
                            i.code,
                            name,
                            f"its partition {part.name} {i.message}",
                            f"{part.name} {i.brief}",
                        )
                    )
    elif isinstance(dev, Partition) and dev.parent in boot:
        issues.append(
            Issue(
                "boot",
                name,
                f"is on the boot/root disk {dev.parent} ({boot[dev.parent]})",
                f"on the disk holding {boot[dev.parent]}",
            )
        )
    return issues
