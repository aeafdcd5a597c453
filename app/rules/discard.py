"""Whether discards (TRIM) reach the SSDs through every layer, and whether anything sends them.

Each block layer advertises ``queue/discard_max_bytes``; 0 means it drops discards. md RAID-4/5/6
does so unless ``raid456.devices_handle_discard_safely=Y`` (only safe when the SSDs return zeroes
after TRIM), so a fstrim on the filesystem above never reaches the flash.
"""

from __future__ import annotations

from collections.abc import Iterator

from app.model import levels
from app.model.devices import Machine
from app.plans import ops
from app.plans.builders.create_guidance import PARITY_DISCARD
from app.plans.plan import Plan, Step
from app.rules.finding import Finding
from app.rules.fstab import fstab_entries
from app.rules.inputs import AuditInputs
from app.rules.stack import ssds_under

TRIM_FS = ("ext4", "ext3", "xfs", "btrfs", "f2fs", "vfat", "exfat")


def _blocked(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    dmb = inputs.discard_max_bytes
    blocked: dict[str, set[str]] = {}  # layer -> SSDs below it
    for d in machine.disks:
        if not d.is_ssd or dmb.get(d.name, d.discard_max_bytes) <= 0:
            continue
        for layer in machine.descendants_of(d.name):
            if machine.partition(layer) is not None:
                continue  # partitions share the disk's queue
            v = dmb.get(layer)
            if v is None or v > 0:
                continue
            # report the lowest blocking layer only: skip if a layer below it already blocks
            below = set(machine.ancestors_of(layer))
            if below & set(blocked):
                continue
            blocked.setdefault(layer, set()).add(d.name)
    for layer, ssds in sorted(blocked.items()):
        a = machine.array(layer)
        hint = ""
        if a is not None and a.level in levels.PARITY:
            hint = f" {PARITY_DISCARD}; check the SSDs before setting it."
        crypt = next((c for c in machine.crypts if c.kernel_name == layer), None)
        if crypt is not None:
            hint = (
                f" {layer} is the dm-crypt mapping {crypt.name}: dm-crypt passes discards only "
                "when opened with allow_discards (a trade-off: TRIM reveals which blocks are "
                f"free). Add discard to its /etc/crypttab line"
                + _crypttab_line(inputs, crypt.name)
                + (
                    f", or for LUKS2 once: cryptsetup refresh --allow-discards --persistent "
                    f"{crypt.name}."
                    if (crypt.type or "").upper() == "LUKS2"
                    else "."
                )
            )
        yield Finding(
            "warning",
            "discard-blocked",
            layer,
            f"Discards stop at {layer}",
            f"{layer} reports discard_max_bytes 0, so TRIM from the layers above never reaches "
            f"the SSD(s) below it ({', '.join(sorted(ssds))}), which do support it. The SSDs "
            "see every deleted block as live data: more write amplification, less speed over "
            "time." + hint,
        )


def _crypttab_line(inputs: AuditInputs, name: str) -> str:
    if inputs.crypttab_text is None:
        return ""
    for raw in inputs.crypttab_text.splitlines():
        f = raw.split("#", 1)[0].split()
        if f and f[0] == name:
            return f" (now: {' '.join(f)})"
    return f" ({name} has no line in /etc/crypttab)"


def _discard_mounted(inputs: AuditInputs) -> set[str]:
    """Mount points whose /etc/fstab options include discard (online TRIM, no fstrim needed)."""
    if inputs.fstab_text is None:
        return set()
    return {
        mnt for _, mnt, _, opts in fstab_entries(inputs.fstab_text) if "discard" in opts.split(",")
    }


def _fstrim(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    online = _discard_mounted(inputs)
    trimmed = [
        fs
        for fs in machine.filesystems
        if fs.fstype in TRIM_FS
        and fs.mounted
        and not set(fs.mountpoints) & online
        and any(
            inputs.discard_max_bytes.get(d.name, d.discard_max_bytes) > 0
            for d in ssds_under(machine, fs.device)
        )
    ]
    if not trimmed:
        return
    if inputs.fstrim_timer is None:
        why = inputs.unknown.get("fstrim.timer", "not read")
        yield Finding(
            "advice",
            "audit-incomplete",
            "",
            "Could not check fstrim.timer",
            f"Whether the weekly fstrim runs could not be checked ({why}); make sure "
            "something trims the filesystems on SSDs (fstrim.timer, cron, or the discard "
            "mount option).",
        )
        return
    if inputs.fstrim_timer == "active":
        return
    mounts = ", ".join(f"{fs.mountpoints[0]} ({fs.device})" for fs in trimmed)
    yield Finding(
        "warning",
        "fstrim-timer-inactive",
        "",
        f"fstrim.timer is {inputs.fstrim_timer}",
        f"Filesystems on SSDs ({mounts}) are not trimmed periodically unless they are mounted "
        "with -o discard. systemd's fstrim.timer runs fstrim --all weekly.",
        Plan(
            "Enable the weekly fstrim timer",
            (
                Step(
                    ops.Systemd("enable", "fstrim.timer"),
                    "trim all mounted filesystems that support it, weekly",
                ),
            ),
            kind="audit-fstrim",
        ),
    )


def _issue_discards(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    if inputs.lvm is None or inputs.lvm.get_bool("devices/issue_discards") is not False:
        return
    pvs = [pv.device for pv in machine.pvs if ssds_under(machine, pv.device)]
    if not pvs:
        return
    yield Finding(
        "advice",
        "lvm-issue-discards-off",
        "",
        "LVM issue_discards is off",
        f"PVs on SSDs ({', '.join(pvs)}): with issue_discards = 0, the space of removed or "
        "shrunk LVs is not discarded, so the SSDs keep it as live data until it is "
        "overwritten (fstrim inside filesystems is not affected). Set issue_discards = 1 in "
        "the devices section of /etc/lvm/lvm.conf if LVs are removed often — it also makes "
        "lvremove irreversible (vgcfgrestore cannot bring the data back).",
    )


def check(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    yield from _blocked(machine, inputs)
    yield from _fstrim(machine, inputs)
    yield from _issue_discards(machine, inputs)
