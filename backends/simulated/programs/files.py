"""``mv``, ``rm`` and ``cmp`` over the simulation's writable files (``SimState.files``, and its
mdadm.conf, ``SimState.mdadm_conf``): what the plans that keep settings at boot run
(app.plans.builders.persist: a temporary file renamed into place, removed) and the mdadm.conf rewrite
(app.plans.builders.mdconf_edit: backup, comparison, new copy renamed into place)."""

from __future__ import annotations

from collections.abc import Sequence

from backends.simulated.programs.argv import Result
from backends.simulated.state import SimState


def _etc(path: str) -> bool:
    return path.startswith("/etc/") and ".." not in path.split("/")


CONF = ("/etc/mdadm/mdadm.conf", "/etc/mdadm.conf")  # both are the simulation's one mdadm.conf


def read_file(st: SimState, path: str) -> str | None:
    return st.mdadm_conf if path in CONF else st.files.get(path)


def write_file(st: SimState, path: str, text: str | None) -> None:
    """``text`` None removes the file."""
    if path in CONF:
        st.mdadm_conf = text
    elif text is None:
        st.files.pop(path, None)
    else:
        st.files[path] = text


def mv(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    paths = [a for a in args if not a.startswith("-")]
    if len(paths) != 2 or not all(_etc(p) for p in paths):
        return 1, "", "mv: the simulation renames files under /etc only\n"
    src, dst = paths
    busy = next((p for p in paths if p in st.bind_mounts), None)
    if busy is not None:  # fs/namei.c vfs_rename: -EBUSY when either is a mount point
        return 1, "", f"mv: cannot move '{src}' to '{dst}': Device or resource busy\n"
    text = read_file(st, src)
    if text is None:
        return 1, "", f"mv: cannot stat '{src}': No such file or directory\n"
    write_file(st, src, None)
    write_file(st, dst, text)
    return 0, "", ""


def cmp(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    """``cmp FILE -``: 0 when the file holds exactly stdin, 1 when they differ (GNU cmp's
    "differ: byte N, line L" on stdout), 2 when the file is missing."""
    paths = [a for a in args if a == "-" or not a.startswith("-")]
    if len(paths) != 2 or paths[1] != "-":
        return 2, "", "cmp: the simulation compares FILE with stdin (cmp FILE -) only\n"
    text, other = read_file(st, paths[0]), stdin or ""
    if text is None:
        return 2, "", f"cmp: {paths[0]}: No such file or directory\n"
    if text == other:
        return 0, "", ""
    n = next((i for i, (a, b) in enumerate(zip(text, other, strict=False)) if a != b), None)
    if n is None:
        return 1, "", f"cmp: EOF on {'-' if len(other) < len(text) else paths[0]}\n"
    line = text[:n].count("\n") + 1
    return 1, f"{paths[0]} - differ: byte {n + 1}, line {line}\n", ""


def rm(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    force = any(a.startswith("-") and "f" in a for a in args)
    for p in (a for a in args if not a.startswith("-")):
        if not _etc(p):
            return 1, "", f"rm: the simulation removes files under /etc only: {p}\n"
        if p in st.bind_mounts:
            return 1, "", f"rm: cannot remove '{p}': Device or resource busy\n"
        if st.files.pop(p, None) is None and not force:
            return 1, "", f"rm: cannot remove '{p}': No such file or directory\n"
    return 0, "", ""


HANDLERS = {"mv": mv, "rm": rm, "cmp": cmp}
