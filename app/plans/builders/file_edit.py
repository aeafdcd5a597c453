"""A system file edited as a whole, as plan steps (``edit_steps``): the file compared with the
text the plan was made from (``cmp``: the run stops before anything is written if it changed
since, or if the plan runs twice), kept under a backup name of this edit's own, the new text
written to a copy that keeps the file's owner and mode, verified where a tool can (``findmnt``
for fstab), and renamed over the file in one step — or, where the file is itself a mount point
(a container's bind-mounted /etc/fstab: rename(2) answers EBUSY), written in place after the
backup. ``app.plans.guards.file_edits`` refuses a plan whose edit steps are out of this order or
whose new text is not the old one changed the way raidman changes that file."""

from __future__ import annotations

from app.backend import Backend
from app.parsers.errors import ParseError
from app.parsers.mountinfo import parse_mountinfo_line
from app.plans import ops
from app.plans.ops.system_files import FSTAB, backup_name, new_name
from app.plans.plan import Step

MAX_MOUNTS = 100_000  # lines of mountinfo looked at


def edit_steps(
    path: str, old: str, new: str, *, why_new: str, in_place: bool = False
) -> list[Step]:
    backup = backup_name(path, old)
    steps = [
        Step(
            ops.CompareFile(path, old),
            f"stop here if {path} changed since this plan was made (cmp exits 1): nothing is "
            "written then",
        ),
        Step(ops.BackupFile(path, backup), f"keep {path} as it is now in {backup}"),
    ]
    if in_place:
        steps.append(
            Step(
                ops.WriteFile(path, new),
                f"{why_new}; written in place: {path} is a mount point here, so a rename over "
                f"it fails (the backup is {backup})",
            )
        )
        return steps
    steps += [
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
    steps.append(
        Step(
            ops.ReplaceFile(path),
            f"rename it over {path} in one step (readers see the old file or the new one)",
        )
    )
    return steps


def file_now(backend: Backend, path: str) -> tuple[str | None, bool]:
    """(the text of ``path`` as read now, or None; whether ``path`` is itself a mount point:
    a line of /proc/self/mountinfo mounts something on it, as a container bind-mounts its
    /etc/fstab)."""
    text = backend.read_text(path)
    info = backend.read_text("/proc/self/mountinfo") or ""
    mounted = False
    for line in info.splitlines()[:MAX_MOUNTS]:
        try:
            mounted = mounted or parse_mountinfo_line(line).mountpoint == path
        except ParseError:
            continue
    return text, mounted
