"""The shape of an edit of a system file (``app.plans.file_edit`` builds it), checked on a plan's
operations: for each file a plan writes (/etc/fstab, mdadm.conf),

1. ``cmp FILE -`` with the text the plan was made from comes first (a file changed since, or a
   plan run twice, stops there: nothing written, no backup overwritten);
2. ``cp -p FILE BACKUP`` (a name of this edit's own) before anything is written;
3. the new text: written to the copy (``cp -p`` then ``tee``), for fstab verified by ``findmnt``,
   then renamed over the file; or written in place (the file is a mount point);
4. the new text is the compared text changed the way raidman changes that file: /etc/fstab with
   one line of raidman's shape appended; mdadm.conf less whole ARRAY entries.

An mdadm.conf line appended (``tee -a``: a MAILADDR line, the ARRAY line of an array the plan
creates) is its own operation and not an edit.
"""

from __future__ import annotations

from app.plans import ops
from app.plans.lifecycle_shapes import fstab_line_problem
from app.plans.mdconf_edit import new_text_problem
from app.plans.ops.system_files import EDITED, FSTAB, new_name
from app.plans.plan import Plan


def _fstab_problem(old: str, new: str) -> str | None:
    if not new.startswith(old):
        return "the new /etc/fstab must be the old one with one line added at its end"
    added = new[len(old) :].splitlines()
    if len(added) != 1 or not new.endswith("\n"):
        return "the new /etc/fstab adds exactly one line"
    return fstab_line_problem(added[0])


def _content_problem(path: str, old: str, new: str) -> str | None:
    if path == FSTAB:
        return _fstab_problem(old, new)
    return new_text_problem(old, new)


def file_edit_problems(plan: Plan) -> list[str]:
    out: list[str] = []
    for path in EDITED:
        where: dict[str, int] = {}
        old: str | None = None
        new: str | None = None
        for i, s in enumerate(plan.steps):
            op = s.op
            if isinstance(op, ops.CompareFile) and op.path == path:
                where.setdefault("cmp", i)
                old = op.text if old is None else old
            elif isinstance(op, ops.BackupFile) and op.path == path:
                where.setdefault("backup", i)
            elif isinstance(op, ops.CopyFile) and op.path == path:
                where.setdefault("copy", i)
            elif isinstance(op, ops.WriteFile) and op.path in (path, new_name(path)):
                if "write" in where:
                    out.append(f"{path}: written twice")
                where["write"] = i
                where["in_place"] = int(op.path == path)
                new = op.text
            elif isinstance(op, ops.VerifyFstab) and path == FSTAB:
                where.setdefault("verify", i)
            elif isinstance(op, ops.ReplaceFile) and op.path == path:
                where.setdefault("replace", i)
        if not where:
            continue
        if "write" not in where:
            if set(where) - {"cmp"}:
                out.append(f"{path}: steps of an edit without the new text")
            continue
        order = ["cmp", "backup"]
        order += [] if where["in_place"] else ["copy", "write"]
        if where["in_place"]:
            order.append("write")
        elif path == FSTAB:
            order += ["verify", "replace"]
        else:
            order.append("replace")
        at = [where.get(k) for k in order]
        if any(x is None for x in at) or at != sorted(at):  # type: ignore[type-var]
            out.append(
                f"{path}: compared first, then backed up, then written"
                + ("" if where["in_place"] else " to a copy and renamed into place")
            )
            continue
        bad = _content_problem(path, old or "", new or "")
        if bad is not None:
            out.append(f"{path}: {bad}")
    return out
