"""A system file edited as a whole, as plan steps (``edit_steps``): the file compared with the
text the plan was made from (``cmp``: the run stops before anything is written if it changed
since, or if the plan runs twice), kept under a backup name of this edit's own, the new text
written to a copy that keeps the file's owner and mode, verified where a tool can (``findmnt``
for fstab), and renamed over the file in one step — or, where the file is itself a mount point
(a container's bind-mounted /etc/fstab: rename(2) answers EBUSY), the checked copy written into
it in place (``ops.OverwriteFile``) after the same comparison, backup and checks. Which of the
two is decided when the plan is made, from the machine's mount table (``file_now``), not by
trying. ``app.plans.guards.file_edits`` refuses a plan whose edit steps are out of this order
or whose new text is not the old one changed the way raidman changes that file."""

from __future__ import annotations

from app.backend import Backend
from app.parsers.errors import ParseError
from app.parsers.mountinfo import parse_mountinfo_line, unescape
from app.plans import ops
from app.plans.ops.system_files import FSTAB, backup_name, new_name
from app.plans.plan import Step

MAX_MOUNTS = 100_000  # lines of mountinfo looked at


def edit_steps(
    path: str, old: str, new: str, *, why_new: str, in_place: bool = False
) -> list[Step]:
    """The steps of one edit; ``in_place``: ``path`` is a mount point (``mount_point``), so the
    checked copy is written into it (``ops.OverwriteFile``) instead of renamed over it."""
    backup = backup_name(path, old)
    steps = [
        Step(
            ops.CompareFile(path, old),
            f"stop here if {path} changed since this plan was made (cmp exits 1): nothing is "
            "written then",
        ),
        Step(ops.BackupFile(path, backup), f"keep {path} as it is now in {backup}"),
        Step(ops.CopyFile(path), f"a copy of {path} with its owner and mode"),
        Step(ops.WriteFile(new_name(path), new), f"{why_new} (into the copy)"),
    ]
    if path == FSTAB:
        steps.append(
            Step(
                ops.VerifyFstab(),
                "check the new fstab before it is kept (findmnt parses every line and checks "
                "sources, targets and types)",
            )
        )
    if in_place:
        keep = Step(
            ops.OverwriteFile(path),
            f"write the checked copy into {path} in place: {path} is a mount point here "
            f"(bind-mounted), and a rename over a mount point fails (the backup is {backup})",
        )
        steps += [keep, Step(ops.RemoveCopy(path), f"remove the copy: its text is in {path} now")]
        return steps
    steps.append(
        Step(
            ops.ReplaceFile(path),
            f"rename it over {path} in one step (readers see the old file or the new one)",
        )
    )
    return steps


def mount_point(mountinfo: str | None, path: str) -> bool:
    """Whether a line of /proc/self/mountinfo mounts something on ``path`` (a container's or
    virtme-ng's bind-mounted /etc/fstab). Unparsable lines are skipped; at most MAX_MOUNTS."""
    for line in (mountinfo or "").splitlines()[:MAX_MOUNTS]:
        try:
            if parse_mountinfo_line(line).mountpoint == path:
                return True
        except ParseError:
            continue
    return False


def mounts_point(mounts: str | None, path: str) -> bool:
    """The same from /proc/mounts (the mount point is its second field, escaped alike)."""
    for line in (mounts or "").splitlines()[:MAX_MOUNTS]:
        fields = line.split(" ")
        if len(fields) > 1 and unescape(fields[1]) == path:
            return True
    return False


def _read(backend: Backend, path: str) -> str | None:
    try:
        return backend.read_text(path)
    except Exception:  # a backend must not raise; unread is None
        return None


def file_now(backend: Backend, path: str) -> tuple[str | None, bool]:
    """(the text of ``path`` as read now through the backend, or None; whether ``path`` is
    itself a mount point, from the machine's /proc/self/mountinfo, else its /proc/mounts).
    Neither readable: not a mount point — the rename then fails safely, nothing written."""
    text = backend.read_text(path)
    info = _read(backend, "/proc/self/mountinfo")
    if info is not None:
        return text, mount_point(info, path)
    return text, mounts_point(_read(backend, "/proc/mounts"), path)
