"""A mount point is a path, and a path can lead elsewhere: every directory on the way to it is
checked on the machine before ``mkdir -p`` and ``mount`` run (pre-flight, and again right before
the step).

``mkdir -p /srv/alice/data`` follows a symlink ``/srv/alice -> /root/private`` that another user
made in a directory of theirs, and creates (and mounts over) a directory inside root's. So each
existing component of the path must be a real directory (no symlink) owned by root; the ones
that do not exist yet are made by root. Read with ``stat -c`` through the backend (``%F`` the
type, ``%u`` the owner, ``%a`` the mode, ``%n`` the name; without ``-L`` it does not follow a
symlink). A check that cannot run refuses (unknown is never "safe")."""

from __future__ import annotations

from app.backend import Backend
from app.escape import escape_controls
from app.plans.guards.in_use import Issue

STAT_FORMAT = "%F|%u|%a|%n"
MAX_COMPONENTS = 64


def prefixes(path: str) -> list[str]:
    """``/srv/a/b`` → ``["/", "/srv", "/srv/a", "/srv/a/b"]``."""
    parts = [p for p in path.split("/") if p][:MAX_COMPONENTS]
    return ["/", *("/" + "/".join(parts[: i + 1]) for i in range(len(parts)))]


def _open_to_others(mode: str) -> bool:
    """``%a`` (octal, e.g. "1777", "755") has group or other write without the sticky bit."""
    try:
        m = int(mode, 8)
    except ValueError:
        return True  # unreadable: not known to be safe
    return bool(m & 0o022) and not m & 0o1000


def mountpoint_refusals(backend: Backend | None, path: str) -> list[Issue]:
    """Why ``path`` must not be made or mounted on now; [] when every existing component is a
    directory of root's and no symlink."""
    if backend is None:
        return []
    want = prefixes(path)
    try:
        res = backend.run(["stat", "-c", STAT_FORMAT, "--", *want], timeout=10)
    except Exception as e:
        return [Issue("unchecked", "", f"{path}: its directories could not be checked ({e})")]
    if res.returncode == 127:
        return [Issue("unchecked", "", f"{path}: stat not found: its directories were not checked")]
    seen: dict[str, tuple[str, str, str]] = {}
    for line in res.stdout.splitlines()[: len(want) + 1]:
        kind, _, rest = line.partition("|")
        uid, _, rest = rest.partition("|")
        mode, _, name = rest.partition("|")
        seen[name] = (kind, uid, mode)
    out: list[Issue] = []
    missing = False
    for p in want:
        got = seen.get(p)
        if got is None:
            missing = True  # it and what is below it are made by mkdir -p as root
            continue
        if missing:
            out.append(Issue("mountpoint", "", f"{p}: appeared below a missing directory"))
            continue
        kind, uid, mode = got
        if kind == "symbolic link":
            out.append(
                Issue(
                    "mountpoint",
                    "",
                    f"{escape_controls(p)} is a symlink (owner uid {escape_controls(uid)}): "
                    "mkdir and mount would follow it elsewhere; use a real directory",
                )
            )
        elif kind != "directory":
            out.append(
                Issue("mountpoint", "", f"{escape_controls(p)} is a {kind}, not a directory")
            )
        elif _open_to_others(mode):
            out.append(
                Issue(
                    "mountpoint",
                    "",
                    f"{escape_controls(p)} is writable by group or others (mode "
                    f"{escape_controls(mode)}): anyone could put a symlink below it",
                )
            )
        elif uid != "0":
            out.append(
                Issue(
                    "mountpoint",
                    "",
                    f"{escape_controls(p)} belongs to uid {escape_controls(uid)}, not root: that "
                    "user could swap what is below it for a symlink; mount below a directory of "
                    "root's",
                )
            )
    if not seen and res.returncode != 0 and not res.stderr.strip():
        out.append(Issue("unchecked", "", f"{path}: stat said nothing about its directories"))
    return out
