"""The shape of an edit of a system file (``app.plans.builders.file_edit`` builds it), checked on a plan's
operations: for each file a plan writes (/etc/fstab, mdadm.conf),

1. ``cmp FILE -`` with the text the plan was made from comes first (a file changed since, or a
   plan run twice, stops there: nothing written, no backup overwritten);
2. ``cp -p FILE BACKUP`` (a name of this edit's own) before anything is written;
3. the new text: written to the copy (``cp -p`` then ``tee``), for fstab verified by ``findmnt``,
   then renamed over the file (``mv``), or, where the file is a mount point, the checked copy
   written into it in place (``cp COPY FILE``: ``ops.OverwriteFile``, then the copy removed:
   ``ops.RemoveCopy``) -- once, last;
4. the new text is the compared text changed the way raidman changes that file: /etc/fstab with
   one line of raidman's shape appended; mdadm.conf less whole ARRAY entries.

An mdadm.conf line appended (``tee -a``: a MAILADDR line, the ARRAY line of an array the plan
creates) is its own operation and not an edit.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.model import Machine
from app.plans import ops
from app.plans.builders.fstab_lines import fstab_line_problem
from app.plans.builders.mdconf_edit import new_text_problem, removed_uuids
from app.plans.guards.in_use import Issue
from app.plans.ops.system_files import EDITED, FSTAB, MDADM_CONF, new_name
from app.plans.plan import Plan
from app.plans.superblocks import Superblocks, hex_uuid


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
            elif isinstance(op, ops.WriteFile) and op.path == new_name(path):
                if "write" in where:
                    out.append(f"{path}: written twice")
                where["write"] = i
                new = op.text
            elif isinstance(op, ops.VerifyFstab) and path == FSTAB:
                where.setdefault("verify", i)
            elif isinstance(op, (ops.ReplaceFile, ops.OverwriteFile)) and op.path == path:
                if "keep" in where:
                    out.append(f"{path}: kept twice (renamed over, or written in place, once)")
                where["keep"] = i
            elif isinstance(op, ops.RemoveCopy) and op.path == path:
                where.setdefault("clean", i)
        if not where:
            continue
        if "write" not in where:
            if set(where) - {"cmp"}:
                out.append(f"{path}: steps of an edit without the new text")
            continue
        # the same order whether the copy is renamed over the file or written into it in place
        order = ["cmp", "backup", "copy", "write", *(["verify"] if path == FSTAB else []), "keep"]
        at = [where.get(k) for k in order]
        if any(x is None for x in at) or at != sorted(at):  # type: ignore[type-var]
            out.append(
                f"{path}: compared first, then backed up, then written to a copy"
                + (", checked" if path == FSTAB else "")
                + " and renamed over it or written into it in place"
            )
            continue
        if where.get("clean", where["keep"] + 1) <= where["keep"]:
            out.append(f"{path}: its copy removed before the new text was kept")
            continue
        bad = _content_problem(path, old or "", new or "")
        if bad is not None:
            out.append(f"{path}: {bad}")
    return out


def live_entry_refusals(
    plan: Plan,
    machine: Machine,
    sbs: Superblocks | None,
    stopped: Iterable[str],
    erased: Iterable[str],
) -> list[Issue]:
    """Issue 37 item 8: an mdadm.conf edit removes only stale ARRAY entries — of no array the
    kernel runs (once the plan's own stops ran) and none whose superblock a device still
    carries (once the plan's own erasures ran). A plan file removing a live entry is refused
    however it was made; unread superblocks refuse it too (stale is not known)."""
    gone_arrays = set(stopped)
    gone_devices = set(erased)
    out: list[Issue] = []
    for path in MDADM_CONF:
        old = new = None
        for s in plan.steps:
            op = s.op
            if isinstance(op, ops.CompareFile) and op.path == path and old is None:
                old = op.text
            elif isinstance(op, ops.WriteFile) and op.path == new_name(path):
                new = op.text
        if old is None or new is None:
            continue
        removed = removed_uuids(old, new)
        if not removed:
            continue
        if sbs is None:
            out.append(
                Issue(
                    "unchecked",
                    "",
                    f"{path}: the superblocks could not be read, so "
                    "whether the entries removed are stale is not known",
                )
            )
            continue
        running = {hex_uuid(a.uuid): a.name for a in machine.arrays if a.name not in gone_arrays}
        carried: dict[str, list[str]] = {}
        for st in sbs.strays:
            carried.setdefault(hex_uuid(st.uuid), []).extend(sb.device for sb in st.devices)
        for arr, carriers in sbs.outside.items():
            a = machine.array(arr)
            if a is not None:
                carried.setdefault(hex_uuid(a.uuid), []).extend(sb.device for sb in carriers)
        for a in machine.arrays:  # a stopped array's members still carry it unless erased
            if a.name in gone_arrays:
                carried.setdefault(hex_uuid(a.uuid), []).extend(m.device for m in a.members)
        for u in sorted(removed):
            if u in running:
                out.append(
                    Issue(
                        "live-entry",
                        running[u],
                        f"{path}: the ARRAY entry removed is "
                        f"{running[u]}'s, which runs: it is not stale",
                    )
                )
                continue
            left = [d for d in carried.get(u, []) if d not in gone_devices]
            if left:
                out.append(
                    Issue(
                        "live-entry",
                        left[0],
                        f"{path}: the ARRAY entry removed "
                        f"names an array {', '.join(left)} still carry: not stale",
                    )
                )
    return out
