"""/etc/fstab entries for filesystems on md: by UUID, not by a kernel name that can change.

Article 000 (/work/shared/seeds/000_*.txt, "Best Practice wäre in der /etc/fstab die Nutzung
der UUID"): md numbers are not stable — an array created as md127 may come back as md126 after a
reboot or on another host — so an fstab line naming ``/dev/md127`` can mount the wrong thing or
nothing. The same article prefers a weekly ``fstrim`` to the ``discard`` mount option on SSDs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from app.backend import Backend
from app.model.devices import Machine
from app.rules.finding import Finding
from app.rules.inputs import FSTRIM_ARGV, AuditInputs
from app.rules.stack import ssds_under

_MD_NAME = re.compile(r"/dev/md(\d+)(p\d+)?|/dev/md/[^/\s]+")


def fstab_entries(text: str) -> list[tuple[str, str, str, str]]:
    """(spec, mountpoint, fstype, options) of every non-comment line with at least 3 fields."""
    out = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        f = line.split()
        if len(f) >= 3:
            out.append((f[0], f[1], f[2], f[3] if len(f) > 3 else "defaults"))
    return out


def _fs_for_mount(machine: Machine, mountpoint: str) -> str | None:
    for fs in machine.filesystems:
        if mountpoint in fs.mountpoints:
            return fs.device
    return None


def check(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    if inputs.fstab_text is None:
        return
    for spec, mnt, fstype, opts in fstab_entries(inputs.fstab_text):
        dev = _fs_for_mount(machine, mnt)
        fs = machine.filesystem(dev) if dev else None
        if _MD_NAME.fullmatch(spec):
            uuid = fs.uuid if fs is not None else None
            better = f"UUID={uuid} {mnt} {fstype} {opts}" if uuid else f"UUID=<uuid> {mnt} ..."
            yield Finding(
                "advice",
                "fstab-md-by-name",
                dev or "",
                f"fstab mounts {mnt} by the md name {spec}",
                f"/etc/fstab mounts {mnt} from {spec}. md names are not stable (an array made "
                "as md127 may come back as md126 after a reboot or on another host), so the "
                "entry can fail or mount another array. The UUID stays the same: "
                f"{better}" + ("" if uuid else f" (blkid {spec} prints it)") + ".",
            )
        options = opts.split(",")
        if "discard" in options and fs is not None:
            ssds = [
                n for n in machine.disks_under(fs.device) if (d := machine.disk(n)) and d.is_ssd
            ]
            if ssds:
                yield Finding(
                    "advice",
                    "fstab-discard-option",
                    fs.device,
                    f"{mnt} is mounted with the discard option",
                    f"/etc/fstab mounts {mnt} with discard: every delete sends TRIM to "
                    f"{', '.join(ssds)} at once. A periodic fstrim (weekly "
                    "fstrim.timer) is better than the discard mount option: fewer, larger discards and "
                    "no stalls on deletes. Remove discard from the options and enable fstrim.timer.",
                )


def recommended_mount_options(
    machine: Machine, device: str, fstrim_timer: str | None, discard_passes: bool
) -> tuple[str, str]:
    """(options, why) for mounting the filesystem on ``device``, as this audit would have them:
    ``noatime`` on SSDs (no metadata write per read: fewer writes to wear the flash);
    ``discard`` only where discards reach every SSD (``discard_passes``) and no periodic fstrim
    runs (``fstrim_timer`` not "active": article 000 prefers the weekly fstrim to online
    discard, which the ``fstrim-timer-inactive`` finding asks for otherwise)."""
    ssds = ssds_under(machine, device)
    opts = ["defaults"]
    why: list[str] = []
    if ssds:
        opts.append("noatime")
        why.append("noatime: SSDs underneath, no write per read")
        if discard_passes and fstrim_timer != "active":
            opts.append("discard")
            why.append(f"discard: fstrim.timer is {fstrim_timer or 'unknown'}")
        elif fstrim_timer == "active":
            why.append("no discard: fstrim.timer trims weekly")
    return ",".join(opts), "; ".join(why)


def _discard_passes(backend: Backend, device: str) -> bool:
    """The device's queue passes discards (md/dm stack the limits of every layer below)."""
    try:
        t = backend.read_text(f"/sys/block/{device}/queue/discard_max_bytes")
    except Exception:
        return False
    t = (t or "").strip()
    return t.isdigit() and int(t) > 0


def _fstrim(backend: Backend) -> str | None:
    try:
        res = backend.run(list(FSTRIM_ARGV), timeout=10)
    except Exception:
        return None
    word = res.stdout.strip().split("\n", 1)[0] if res.returncode in (0, 3) else ""
    return word or None


def mount_options_now(machine: Machine, backend: Backend, device: str) -> tuple[str, str]:
    """``recommended_mount_options`` with the fstrim timer and the discard limit read through
    ``backend`` now (``raidman plan mount`` and the TUI's mount wizard)."""
    return recommended_mount_options(
        machine, device, _fstrim(backend), _discard_passes(backend, device)
    )
