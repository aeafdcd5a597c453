"""Pre-flight safety: before a plan that writes to devices is offered (and again before it runs).

Refusals (never forcible): the device is unknown, mounted, swap, held by md/dm/LVM (a child in the
stack, a PV, an array member), or lives on the disk under "/" or "/boot".

Warnings (each has a ``code``; going past one is an explicit ``--force CODE`` / a checkbox, and the
executor records the forced codes in the audit log):
  ``signatures``   existing signatures (``wipefs --no-act --json DEV``) or a partition table
  ``size-mismatch`` members of different sizes: the array uses the smallest, the rest is lost
  ``mixed-media``  rotational and SSD members mixed (the array runs at the disks' speed)
  ``too-few``      fewer devices than the level needs
  ``wipefs``       signatures could not be checked (wipefs missing or failed)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.model import Disk, Machine, Partition
from app.plans.geometry import PlanError, human_bytes, normalize_level, raid10_copies
from app.plans.in_use import Issue, write_refusals
from backends.base import Backend

__all__ = ["MIN_DEVICES", "Issue", "Preflight", "check", "check_signatures", "strip_dev"]

# (minimum mdadm accepts without --force, recommended minimum)
MIN_DEVICES = {
    "raid0": 2,
    "raid1": 2,
    "raid4": 3,
    "raid5": 3,
    "raid6": 4,
    "raid10": 2,
    "linear": 1,
}


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


def check_signatures(backend: Backend, name: str) -> list[Issue]:
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
    if not sigs:
        return []
    return [
        Issue(
            "signatures",
            name,
            f"has existing signatures ({'; '.join(sigs)}): they will be overwritten",
        )
    ]


def check(
    machine: Machine,
    devices: Sequence[str],
    *,
    backend: Backend | None = None,
    level: str | None = None,
    layout: str | None = None,
    raid_devices: int | None = None,
    check_sizes: bool = True,
) -> Preflight:
    """Check ``devices`` (kernel names or /dev paths) that a plan will overwrite.

    ``level``/``raid_devices`` enable the too-few check (``raid_devices`` defaults to the number
    of devices). ``backend`` enables the wipefs signature check.
    """
    names = [strip_dev(d) for d in devices]
    refusals: list[Issue] = []
    warnings: list[Issue] = []

    for name in dict.fromkeys(names):
        dev = machine.device(name)
        issues = write_refusals(machine, name)
        refusals.extend(issues)
        if dev is None:
            continue
        if backend is not None and not issues:
            warnings.extend(check_signatures(backend, name))
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
            big = ", ".join(f"{n} {human_bytes(s)}" for n, s in sized if s > smallest)
            warnings.append(
                Issue(
                    "size-mismatch",
                    "",
                    f"members differ in size: each is used only up to the smallest "
                    f"({human_bytes(smallest)}); {lost} bytes ({human_bytes(lost)}) lost ({big})",
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
    if level is not None:
        try:
            lvl = normalize_level(level)
        except PlanError:
            lvl = level
        n = raid_devices if raid_devices is not None else len(names)
        need = MIN_DEVICES.get(lvl)
        if lvl == "raid10":
            need = raid10_copies(layout)
        if need is not None and n < need:
            warnings.append(Issue("too-few", "", f"{lvl} needs at least {need} devices, {n} given"))
    return Preflight(tuple(refusals), tuple(warnings))


def _rotational(machine: Machine, name: str) -> bool | None:
    d = machine.disk(name)
    if d is None:
        p = machine.partition(name)
        d = machine.disk(p.parent) if p is not None else None
    return None if d is None else d.rotational
