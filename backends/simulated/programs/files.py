"""``mv`` and ``rm`` over the simulation's writable files (``SimState.files``): what the plans that
keep settings at boot run (app.plans.persist: a temporary file renamed into place, removed)."""

from __future__ import annotations

from collections.abc import Sequence

from backends.simulated.programs.argv import Result
from backends.simulated.state import SimState


def _etc(path: str) -> bool:
    return path.startswith("/etc/") and ".." not in path.split("/")


def mv(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    paths = [a for a in args if not a.startswith("-")]
    if len(paths) != 2 or not all(_etc(p) for p in paths):
        return 1, "", "mv: the simulation renames files under /etc only\n"
    src, dst = paths
    if src not in st.files:
        return 1, "", f"mv: cannot stat '{src}': No such file or directory\n"
    st.files[dst] = st.files.pop(src)
    return 0, "", ""


def rm(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    force = any(a.startswith("-") and "f" in a for a in args)
    for p in (a for a in args if not a.startswith("-")):
        if not _etc(p):
            return 1, "", f"rm: the simulation removes files under /etc only: {p}\n"
        if st.files.pop(p, None) is None and not force:
            return 1, "", f"rm: cannot remove '{p}': No such file or directory\n"
    return 0, "", ""


HANDLERS = {"mv": mv, "rm": rm}
