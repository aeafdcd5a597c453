"""``blkid -p [-o export|value] [-s TAG]... DEVICE...`` as util-linux answers it: the superblock
at the device's start (the simulator's ``signatures``, what ``wipefs`` lists), not udev's
cache, so a filesystem lsblk does not type is still found (the Linux probe asks it for those).

Export blocks start with ``DEVNAME=``; a device with nothing on it prints nothing and makes the
exit status 2, as blkid's "nothing found"; a path that is no device: an error line, status 2."""

from __future__ import annotations

from collections.abc import Sequence

from backends.simulated.programs.devices import resolve, signatures
from backends.simulated.state import SimState

PARTITION_TABLES = frozenset({"gpt", "dos", "PMBR"})


def _usage(kind: str) -> str:
    if kind.endswith("_member"):
        return "raid"
    if kind == "crypto_LUKS":
        return "crypto"
    if kind == "swap":
        return "other"
    return "filesystem"


def blkid(st: SimState, args: Sequence[str], stdin: str | None) -> tuple[int, str, str]:
    fmt = "full"
    tags: list[str] = []
    devices: list[str] = []
    it = iter(args)
    for a in it:
        if a == "-p":
            continue
        if a == "-o":
            fmt = next(it, "")
        elif a == "-s":
            tags.append(next(it, ""))
        elif a.startswith("-"):
            return 4, "", f"blkid: unsupported option in the demo: {a}\n"
        else:
            devices.append(a)
    if fmt not in ("full", "export", "value"):
        return 4, "", f"blkid: unsupported output format {fmt}\n"
    if not devices:
        return 4, "", "blkid: the demo needs a device: blkid -p DEVICE\n"
    out, err, rc = "", "", 0
    for path in devices:
        dev = resolve(st, path)
        if dev is None:
            err += f"blkid: error: {path}: No such file or directory\n"
            rc = 2
            continue
        sigs = signatures(st, dev)
        found = next(((t, u, lab) for _o, t, u, lab in sigs if t not in PARTITION_TABLES), None)
        if found is None:
            rc = 2
            continue
        kind, uuid, label = found
        values = [("UUID", uuid), ("LABEL", label), ("TYPE", kind), ("USAGE", _usage(kind))]
        values = [(k, v) for k, v in values if v and (not tags or k in tags)]
        if fmt == "value":
            out += "".join(f"{v}\n" for _, v in values)
        elif fmt == "export":
            out += f"DEVNAME={path}\n" + "".join(f"{k}={v}\n" for k, v in values) + "\n"
        else:
            out += f"{path}: " + " ".join(f'{k}="{v}"' for k, v in values) + "\n"
    return rc, out, err
