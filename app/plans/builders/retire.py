"""Retire an old disk once its replacement has taken over (``raidman plan retire --device D
[--sanitize]``).

1. every md member on the disk that an array still lists (faulty, or a spare) is removed from it
   (``mdadm --remove``); an active member is refused: replace it first;
2. the md superblock of every device on the disk that carries one is erased
   (``mdadm --zero-superblock``): ``mdadm --assemble --scan`` could otherwise start the array
   again from the old disk, or a later add could put stale data back;
3. every signature on its partitions and on the disk itself (``wipefs -a``: filesystem, LVM,
   partition table);
4. mdadm.conf, where a ``devices=`` list or a DEVICE line names the disk's devices: those paths
   taken out, as a whole-file edit (``app.plans.builders.file_edit``) and the initramfs rebuilt;
5. with ``sanitize``: the erase its transport offers, with that tool's own check
   (``app.plans.ops.sanitize``): NVMe ``nvme sanitize`` (crypto, else block erase; its
   sanitize log after) or ``nvme format --ses``; SATA ``hdparm --security-erase`` where the
   drive's security is not frozen (``hdparm -I`` after); SCSI ``sg_sanitize`` (``sg_requests``
   after); an SSD that takes them, ``blkdiscard --secure``.

The confirmation is typed, and what is typed is the disk's serial (``Plan.confirm_word``): the
disk that is erased is the one whose label the admin reads.
"""

from __future__ import annotations

import re

from app.model import Disk, Machine
from app.plans import ops
from app.plans.builders.check_offer import check_offer
from app.plans.builders.file_edit import edit_steps
from app.plans.builders.mdconf_edit import initramfs_step, named_devices, without_devices
from app.plans.disk_facts import EraseSupport
from app.plans.geometry import PlanError
from app.plans.guards.in_use import write_refusals
from app.plans.guards.lifecycle_checks import after_stops
from app.plans.guards.preflight import strip_dev
from app.plans.outcome.consequences import with_consequences
from app.plans.plan import Plan, Step
from app.plans.superblocks import Superblocks


def _devices_of(machine: Machine, d: Disk) -> list[str]:
    return [*(p.name for p in machine.partitions if p.parent == d.name), d.name]


def _carriers(machine: Machine, devs: list[str], sbs: Superblocks | None) -> list[str]:
    """The devices of the disk carrying an md superblock: members listed now, former members
    outside their array, stray carriers; without the superblocks read, what blkid typed."""
    out: list[str] = []
    for a in machine.arrays:
        out += [m.device for m in a.members if m.device in devs]
    if sbs is not None:
        for carriers in sbs.outside.values():
            out += [sb.device for sb in carriers if sb.device in devs]
        for stray in sbs.strays:
            out += [sb.device for sb in stray.devices if sb.device in devs]
    for dev in devs:
        fs = machine.filesystem(dev)
        if fs is not None and fs.fstype == "linux_raid_member":
            out.append(dev)
    return list(dict.fromkeys(x for x in devs if x in out))


def _sanitize_steps(
    machine: Machine, d: Disk, erase: EraseSupport
) -> tuple[list[Step], str]:  # fmt: skip
    """The erase by transport and its check; or none and why."""
    path = f"/dev/{d.name}"
    if d.name.startswith("nvme") or d.transport == "nvme":
        m = re.fullmatch(r"(nvme[0-9]+)n[0-9]+", d.name)
        prefix = f"{m.group(1)}n" if m else d.name
        siblings = [x.name for x in machine.disks if x.name != d.name and x.name.startswith(prefix)]
        n = erase.nvme
        if n is not None and (n.sanitize_crypto or n.sanitize_block):
            if siblings:
                return [], (
                    f"nvme sanitize erases every namespace of the controller, and it has "
                    f"{', '.join(siblings)} too"
                )
            act = "crypto" if n.sanitize_crypto else "block"
            return [
                Step(
                    ops.NvmeSanitize(path, act),
                    f"sanitize the drive ({act} erase of every block, by the drive itself; it "
                    "goes on in the drive after the command returns)",
                ),
                Step(
                    ops.NvmeSanitizeLog(path),
                    "the drive's sanitize log: its status and progress (run it again until it "
                    "says the sanitize completed)",
                ),
            ], ""
        ses = "crypto" if n is not None and n.format_crypto else "user-data"
        why = "" if n is not None else f" (its sanitize support was not read: {erase.why})"
        return [
            Step(
                ops.NvmeFormat(path, ses),
                f"format the namespace with secure erase ({ses.replace('-', ' ')} erase){why}; "
                "it returns when the drive has erased it",
            )
        ], ""
    if d.transport in ("sata", "ata"):
        a = erase.ata
        if a is None:
            return [], f"its ATA security state was not read ({erase.why or 'hdparm -I'})"
        if not a.supported:
            return [], "the drive does not support the ATA security feature set"
        if a.frozen:
            return [], (
                "the drive's security is frozen (the firmware froze it at boot): suspend and "
                "resume the machine, or re-plug the disk, then plan again"
            )
        if a.locked or a.enabled:
            return [], "the drive already has a security password set (or is locked)"
        mins = a.enhanced_minutes if a.enhanced else a.erase_minutes
        est = f" (the drive says about {mins} min)" if mins else ""
        return [
            Step(
                ops.HdparmSetPassword(path),
                "set a temporary user password: the ATA erase needs one (it is cleared by it)",
            ),
            Step(
                ops.HdparmErase(path, a.enhanced),
                f"ATA {'enhanced ' if a.enhanced else ''}security erase of every sector{est}",
            ),
            Step(ops.HdparmIdentify(path), "check: security 'not enabled' again once erased"),
        ], ""
    if d.transport in ("sas", "scsi", "fc") and not d.rotational:
        return [
            Step(ops.SgSanitize(path, "block"), "SCSI SANITIZE block erase (waits for it)"),
            Step(ops.SgRequests(path), "check: no sanitize in progress, no error sense"),
        ], ""
    if d.rotational is False and d.discard_max_bytes > 0:
        return [
            Step(
                ops.SecureDiscard(path),
                "secure discard of every block (BLKSECDISCARD; the device refuses it where it "
                "cannot; blkdiscard has no check of its own)",
            )
        ], ""
    return (
        [],
        f"raidman offers no sanitize for a {d.transport or 'this'} {'HDD' if d.rotational else 'disk'}",
    )


def build_retire(
    machine: Machine,
    device: str,
    *,
    superblocks: Superblocks | None,
    conf: tuple[str, str] | None = None,
    erase: EraseSupport | None = None,
    sanitize: bool = False,
) -> Plan:
    name = strip_dev(device)
    part = machine.partition(name)
    d = machine.disk(part.parent if part is not None else name)
    if d is None:
        raise PlanError(f"no disk {name!r} on this machine")
    if part is not None:
        raise PlanError(f"{name} is a partition: retire the whole disk ({d.name})")
    devs = _devices_of(machine, d)
    steps: list[Step] = []
    removed: list[tuple[str, str]] = []
    arrays: list[str] = []
    for a in machine.arrays:
        for m in a.members:
            if m.device not in devs:
                continue
            if m.working and m.role != "spare":
                raise PlanError(
                    f"{m.device} is an active member of {a.name} ({m.role}): replace it first "
                    f"(raidman plan member replace --array {a.name} --device {m.device} --with NEW)"
                )
            steps.append(
                Step(
                    ops.RemoveMember(a.path, f"/dev/{m.device}"),
                    f"take the {m.role} {m.device} out of {a.name} (it is still listed there)",
                )
            )
            removed.append((a.name, m.device))
            arrays.append(a.name)
    after = after_stops(machine, (), [(a, dev) for a, dev in removed])
    busy = [str(i) for dev in devs for i in write_refusals(after, dev)]
    if busy:
        raise PlanError(f"{d.name} is still in use: " + "; ".join(busy))
    carriers = _carriers(machine, devs, superblocks)
    for c in carriers:
        steps.append(
            Step(
                ops.ZeroSuperblock((f"/dev/{c}",)),
                f"erase {c}'s md superblock: no array is assembled from the old disk again",
            )
        )
    for dev in devs:
        what = "the partition table" if dev == d.name else "every signature"
        steps.append(Step(ops.Wipe(f"/dev/{dev}"), f"erase {what} on {dev}"))
    notes: list[str] = []
    if superblocks is None:
        notes.append(
            "the md superblocks were not read: only the devices known as members are zeroed"
        )
    if conf is not None:
        path, text = conf
        paths = {f"/dev/{x}" for x in devs} & named_devices(text)
        if paths:
            new, changed = without_devices(text, paths)
            steps += edit_steps(
                path, text, new, why_new=f"{path} without {', '.join(sorted(paths))}"
            )
            steps.append(initramfs_step(path))
            notes.append(f"lines changed in {path}:\n" + "\n".join(f"- {x}" for x in changed))
    offered, why_none = _sanitize_steps(machine, d, erase or EraseSupport())
    if sanitize:
        if not offered:
            raise PlanError(f"no sanitize for {d.name}: {why_none}")
        steps += offered
    elif offered:
        tools = ", ".join(dict.fromkeys(s.op.program() for s in offered))
        notes.append(
            f"offered: --sanitize erases the whole disk by its transport ({tools}), with its check"
        )
    else:
        notes.append(f"no sanitize is offered: {why_none}")
    for name in dict.fromkeys(arrays):
        line = check_offer(machine, name)
        arr = machine.array(name)
        if line and arr is not None and (arr.sync is None or not arr.sync.active):
            line = line.replace("once the rebuild has finished, check", "check")
        if line:
            notes.append(line)
    ident = d.serial or d.wwn
    if not ident:
        raise PlanError(f"{d.name} reports neither serial nor WWN: nothing to type to confirm it")
    plan = Plan(
        title=f"retire /dev/{d.name} ({d.model or 'model unknown'}, serial {ident})",
        steps=tuple(steps),
        kind="retire",
        params={"device": d.name, "serial": d.serial, "wwn": d.wwn, "sanitize": sanitize},
        notes=tuple(notes),
        warnings=(
            f"everything on {d.name} is erased; to confirm, type its serial ({ident}), read from "
            "the label of the disk you will pull",
        ),
    )
    return with_consequences(plan, machine)
