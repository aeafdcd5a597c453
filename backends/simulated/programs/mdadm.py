"""``mdadm``: its options, its modes (create, detail, examine, stop, zero-superblock, grow)
and manage mode, which ``mdadm_manage`` runs."""

from __future__ import annotations

from collections.abc import Sequence

from backends.simulated.bitmap import examine_bitmap
from backends.simulated.programs import lifecycle
from backends.simulated.programs.argv import Result, split_opts
from backends.simulated.programs.devices import resolve
from backends.simulated.programs.mdadm_create import md_create
from backends.simulated.programs.mdadm_detail import md_detail
from backends.simulated.programs.mdadm_grow import md_grow
from backends.simulated.programs.mdadm_manage import md_manage
from backends.simulated.state import SimState
from backends.simulated.sysfs import mdadm_conf_line

MDADM_VALUES = {
    "l": "level", "n": "raid-devices", "c": "chunk", "p": "layout", "b": "bitmap",
    "e": "metadata", "N": "name", "x": "spare-devices", "z": "size",
    "backup-file": "backup-file", "homehost": "homehost", "with": "with",
    "write-mostly": "write-mostly", "consistency-policy": "consistency-policy",
    "data-offset": "data-offset", "uuid": "uuid", "u": "uuid", "write-journal": "write-journal",
}  # fmt: skip
MDADM_FLAGS = {
    "C": "create", "G": "grow", "S": "stop", "D": "detail", "s": "scan", "E": "examine",
    "R": "run", "f": "fail", "r": "remove", "a": "add", "q": "quiet", "v": "verbose",
    "A": "assemble", "manage": "manage", "zero-superblock": "zero-superblock",
    "re-add": "re-add", "replace": "replace", "assume-clean": "assume-clean",
    "force": "force", "add-spare": "add-spare", "readonly": "readonly",
    "readwrite": "readwrite", "brief": "brief", "set-faulty": "fail",
    "X": "examine-bitmap", "examine-bitmap": "examine-bitmap", "export": "export", "Y": "export",
}  # fmt: skip
MANAGE_OPS = {"fail", "remove", "add", "re-add", "replace", "with", "add-spare"}


def mdadm(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    # manage ops take device lists; make "--with X" a flag + positional for the parser
    vals = {k: v for k, v in MDADM_VALUES.items() if v != "with"}
    flags = dict(MDADM_FLAGS)
    flags["with"] = "with"
    parsed = split_opts(list(args), vals, flags)
    if isinstance(parsed, str):
        return 2, "", f"mdadm: {parsed}\n"
    opts, pos = parsed
    keys = [k for k, _ in opts]
    od = {k: v for k, v in opts}
    if "create" in keys:
        return md_create(st, od, pos, stdin)
    if "detail" in keys and ("scan" in keys or not pos):
        lines = [mdadm_conf_line(st, a) for a in st.arrays.values()]
        return 0, "".join(line + "\n" for line in lines), ""
    if "detail" in keys:
        out = []
        for p in pos:
            dev = resolve(st, p)
            if dev is None or dev not in st.arrays:
                return 1, "", f"mdadm: cannot open {p}: No such file or directory\n"
            a = st.arrays[dev]
            # --brief: the ARRAY line (mdadm's Detail.c prints the brief form, as --scan does)
            out.append(mdadm_conf_line(st, a) + "\n" if "brief" in keys else md_detail(st, a, p))
        return 0, "".join(out), ""
    if "examine-bitmap" in keys:
        dev = resolve(st, pos[0]) if len(pos) == 1 else None
        if dev is None:
            return 1, "", f"mdadm: cannot open {pos[0] if pos else ''}: No such file or directory\n"
        return examine_bitmap(st, dev, pos[0])
    if "examine" in keys or "assemble" in keys:  # programs/lifecycle.py
        return lifecycle.mdadm_lifecycle(st, keys, od, pos)
    if "stop" in keys:
        return md_stop(st, pos)
    if "zero-superblock" in keys:
        return md_zero(st, pos)
    if "grow" in keys:
        return md_grow(st, od, pos)
    if not pos:
        return 2, "", "mdadm: No devices given.\n"
    # manage mode: first positional is the array, the rest follow ops in argv order
    return md_manage(st, list(args))


def md_stop(st: SimState, pos: list[str]) -> Result:
    out = ""
    for p in pos:
        dev = resolve(st, p)
        if dev is None or dev not in st.arrays:
            return 1, out, f"mdadm: error opening {p}: No such file or directory\n"
        a = st.arrays[dev]
        used = (
            dev in st.pvs
            or (dev in st.filesystems and st.filesystems[dev].mountpoints)
            or any(x.container == dev for x in st.arrays.values())
        )
        if used:
            return (
                1,
                out,
                (
                    f"mdadm: Cannot get exclusive access to {p}:Perhaps a running process, "
                    "mounted filesystem or active volume group?\n"
                ),
            )
        for m in a.members:
            if not a.metadata.startswith("external:"):
                st.md_superblocks[m.device] = (a.uuid, a.array_name or "")
        st.stopped_arrays[a.uuid] = a  # what --assemble starts again
        del st.arrays[dev]
        st.filesystems.pop(dev, None)
        st.touch()
        out += f"mdadm: stopped {p}\n"
    return 0, "", out


def md_zero(st: SimState, pos: list[str]) -> Result:
    for p in pos:
        dev = resolve(st, p)
        if dev is None:
            return 1, "", f"mdadm: Couldn't open {p} for write - not zeroing\n"
        if any(a.member(dev) is not None for a in st.arrays.values()):
            return 1, "", f"mdadm: Couldn't open {p} for write - not zeroing\n"
        if dev not in st.md_superblocks:
            return 1, "", f"mdadm: Unrecognised md component device - {p}\n"
        del st.md_superblocks[dev]
        st.touch()
    return 0, "", ""
