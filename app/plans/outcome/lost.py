"""What a plan destroys that holds data, by name: data is never "free" because nothing mounts it.

A device a step overwrites or erases may carry, beyond what the kernel uses (pre-flight refuses
that):

* an md superblock of a running array that the kernel does not list (``Superblocks.outside``):
  a member failed and removed, its copy some events behind — the array's other copy, the one a
  re-add catches up from its bitmap;
* the superblock of an array that is not assembled (``Superblocks.strays``): when the devices
  the plan leaves carrying it are too few to assemble it (``levels.failures_left`` over the slots
  their superblocks give), the array's data is lost;
* a filesystem or an LVM physical volume nothing has mounted or activated;
* and an array the plan stops and erases every member of (``plan delete``).

``lost_on(...)`` names each, with the name a user types to confirm (the array's, the volume
group's, the filesystem's label or its device).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from app.format import human_bytes
from app.model import Machine, levels
from app.model.md_names import level_name
from app.model.superblock import Superblock
from app.plans.guards.in_use import Issue
from app.plans.superblocks import StrayArray, Superblocks

_ROLE = re.compile(r"Active device ([0-9]{1,4})")


@dataclass(frozen=True, slots=True)
class Lost:
    name: str  # the thing at risk, as typed to confirm: "md0", "oldhost:backup", "vg0"
    device: str  # the device whose step destroys it (kernel name)
    line: (
        str  # in words: "sdc1 is the only carrier of array oldhost:backup (...): its data is lost"
    )
    # what it is: "copy" (a running array's member outside it), "array" (one not assembled),
    # "filesystem", "pv", "deleted" (an array the plan stops and erases)
    kind: str = "array"

    @property
    def carrier(self) -> bool:
        """An md superblock the kernel does not run from this device."""
        return self.kind in ("copy", "array")

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "device": self.device, "kind": self.kind, "line": self.line}


def _slot(sb: Superblock) -> int | None:
    m = _ROLE.fullmatch((sb.device_role or "").strip())
    return int(m.group(1)) if m else None


def _stray_survives(stray: StrayArray, left: Iterable[Superblock]) -> bool:
    """The stray array can still be assembled from ``left`` (its other carriers)."""
    lvl = level_name(stray.level) if stray.level else None
    left = list(left)
    if not left:
        return False
    n = max((s.raid_devices or 0 for s in stray.devices), default=0)
    slots = {x for x in (_slot(s) for s in left) if x is not None}
    if lvl not in levels.LEVELS or not n:
        return bool(left)  # unknown shape: a carrier is left, so say so rather than guess
    return levels.failures_left(lvl, n, None, frozenset(slots)) >= 0


def lost_on(
    machine: Machine,
    sbs: Superblocks | None,
    device: str,
    gone: set[str],
    stopped: set[str],
    joining: str | None = None,
) -> list[Lost]:
    """What destroying ``device`` loses, with ``gone`` the devices the plan destroyed before it
    and ``stopped`` the arrays it stopped; ``joining``: the array the device goes into (a former
    member put back into its own array loses nothing: its copy is rebuilt where it was)."""
    out: list[Lost] = []
    for c in sbs.carried(machine, device) if sbs is not None else ():
        if c.stray is None:  # a running array's copy outside it
            if c.array == joining:
                continue
            a = machine.array(c.array)
            when = f", {c.behind} events behind" if c.behind else ""
            only = ""
            if a is not None and a.is_degraded:
                only = f" ({c.array} is degraded: this is the only other copy of its data)"
            out.append(
                Lost(
                    c.array,
                    device,
                    f"{device} is {c.array}'s other copy{when}{only}: re-add it instead "
                    f"(raidman plan member re-add --array {c.array} --device {device})",
                    "copy",
                )
            )
            continue
        stray = c.stray
        left = [sb for sb in stray.devices if sb.device != device and sb.device not in gone]
        lvl = f"{level_name(stray.level) or stray.level}, " if stray.level else ""
        what = f"array {c.array} ({lvl}not assembled)"
        if _stray_survives(stray, left):
            others = ", ".join(sb.device for sb in left)
            out.append(
                Lost(
                    c.array,
                    device,
                    f"{device} carries {what}: it loses this copy ({others} still carry it)",
                )
            )
        elif not left and len(stray.devices) == 1:
            out.append(
                Lost(c.array, device, f"{device} is the only carrier of {what}: its data is lost")
            )
        else:
            out.append(
                Lost(
                    c.array,
                    device,
                    f"{device} carries {what}: too few carriers are left to assemble it, "
                    "so its data is lost",
                )
            )
    fs = machine.filesystem(device)
    if fs is not None and fs.fstype and not fs.mounted:
        label = f" labelled {fs.label!r}" if fs.label else ""
        if fs.fstype == "LVM2_member":
            pv = machine.pv(device)
            vg = pv.vg if pv is not None and pv.vg else None
            what = (
                f"the LVM physical volume of volume group {vg}" if vg else "an LVM physical volume"
            )
            out.append(Lost(vg or device, device, f"{device} holds {what}: it is lost", "pv"))
        elif fs.fstype != "linux_raid_member":
            out.append(
                Lost(
                    fs.label or device,
                    device,
                    f"{device} holds a {fs.fstype} filesystem{label}: its files are lost",
                    "filesystem",
                )
            )
    return out


def carrier_refusals(
    machine: Machine, sbs: Superblocks | None, devices: Iterable[str], joining: str | None = None
) -> list[Issue]:
    """A device a step overwrites (a new member, a filesystem, a partition table) that carries
    the superblock of an array the kernel does not run from it: data that looks free. Refused;
    erasing it is a plan of its own (``raidman plan wipe``), whose consequences name the loss."""
    out: list[Issue] = []
    for d in devices:
        dev = d.removeprefix("/dev/")
        for x in lost_on(machine, sbs, dev, set(), set(), joining):
            if not x.carrier:  # a filesystem or PV: pre-flight's signature warning says it
                continue
            out.append(
                Issue(
                    "carrier",
                    dev,
                    f"{x.line}; to use {dev} anyway, wipe it first (raidman plan wipe "
                    f"--device {dev}): that plan names what is lost and asks for its name",
                    f"{x.name}'s other copy: re-add it"
                    if x.kind == "copy"
                    else f"carries {x.name} (not assembled)",
                )
            )
    return out


def deleted(machine: Machine, array: str, erased: set[str]) -> Lost | None:
    """``array`` (stopped by the plan) has every member's superblock erased: its data is gone."""
    a = machine.array(array)
    members = {m.device for m in a.members} if a is not None else set()
    if a is None or not members or not members <= erased:
        return None
    size = human_bytes(a.size_bytes, trim=True) if a.size_bytes else "size unknown"
    return Lost(
        a.name,
        sorted(members)[0],
        f"{a.name} ({a.level}, {len(members)} members, {size}) is deleted: every member's "
        "superblock is erased, so it cannot be assembled again and its data is gone",
        "deleted",
    )


__all__ = ["Lost", "carrier_refusals", "deleted", "lost_on"]
