"""mdadm.conf without its stale ARRAY lines, written through the executor like every other change.

A stale ARRAY line names a UUID that no running array has and no device's md superblock carries
(``mdadm --examine --scan``): an array that was deleted or whose disks are gone. The audit
(app/rules/md.py, ``md-conf-stale``) and ``plan delete`` offer this plan for them: a whole-file
edit (``app.plans.builders.file_edit``: compared with the text the plan was made from, backed up, written
as a copy, renamed into place), then ``update-initramfs -u`` (Debian's /etc/mdadm/mdadm.conf) or
``dracut -f``: the initramfs holds its own copy of mdadm.conf, which assembles the arrays at boot.

The guard (``app.plans.guards.file_edits``) takes a new text only if it is the compared text
with whole ARRAY entries removed; pre-flight refuses to remove the entry of an array that runs or
whose superblock a device still carries (``live_entries``).
"""

from __future__ import annotations

from collections.abc import Iterable

from app.plans import ops
from app.plans.builders.file_edit import edit_steps
from app.plans.ops.system_files import MAX_TEXT, backup_name
from app.plans.plan import Plan, Step
from app.plans.shapes import MDADM_CONF

DEBIAN_CONF = "/etc/mdadm/mdadm.conf"


def norm_uuid(uuid: str | None) -> str | None:
    """md UUIDs compared across spellings (mdadm ``a:b:c:d``, sysfs ``a-b-...``)."""
    u = (uuid or "").replace(":", "").replace("-", "").strip().lower()
    return u or None


def initramfs_step(conf_path: str) -> Step:
    """Rebuild the initramfs after ``conf_path`` changed: it carries its own copy of
    mdadm.conf. Debian's tool where the conf is Debian's, dracut elsewhere."""
    why = "the initramfs holds its own copy of mdadm.conf (it assembles the arrays at boot): "
    if conf_path == DEBIAN_CONF:
        return Step(
            ops.UpdateInitramfs("update-initramfs"), why + "copy the new mdadm.conf into it"
        )
    return Step(ops.UpdateInitramfs("dracut"), why + "rebuild it with the new mdadm.conf")


def array_entries(text: str) -> list[tuple[tuple[int, ...], str | None]]:
    """Each ARRAY entry of an mdadm.conf: the indices of its lines (the ARRAY line and the lines
    that continue it: starting with white space) and its normalised UUID. Comments and blank
    lines between belong to no entry, as app.parsers.mdadm.parse_scan reads the file."""
    out: list[tuple[list[int], str]] = []  # line indices, the logical line
    current: tuple[list[int], str] | None = None
    for i, raw in enumerate(text.splitlines()):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if raw[:1].isspace() and current is not None:
            current[0].append(i)
            current = (current[0], f"{current[1]} {line.strip()}")
            out[-1] = current
            continue
        current = ([i], line.strip())
        out.append(current)
    entries: list[tuple[tuple[int, ...], str | None]] = []
    for lines, logical in out:
        words = logical.split()
        if not words or words[0].upper() != "ARRAY":
            continue
        uuid = next(
            (w.split("=", 1)[1] for w in words[1:] if w.split("=", 1)[0].lower() == "uuid"), None
        )
        entries.append((tuple(lines), norm_uuid(uuid)))
    return entries


def without_uuids(text: str, uuids: Iterable[str]) -> tuple[str, list[str]]:
    """``text`` without the ARRAY entries of ``uuids`` (normalised); and the lines removed."""
    gone = {norm_uuid(u) for u in uuids}
    drop: set[int] = set()
    for lines, uuid in array_entries(text):
        if uuid is not None and uuid in gone:
            drop.update(lines)
    raw = text.splitlines(keepends=True)
    kept = "".join(line for i, line in enumerate(raw) if i not in drop)
    return kept, [raw[i].rstrip("\n") for i in sorted(drop)]


def build_remove_stale(conf_path: str, text: str, uuids: Iterable[str]) -> Plan:
    """The plan that rewrites ``conf_path`` (now ``text``) without the ARRAY entries of
    ``uuids``. ValueError when there is nothing to remove or the file is not one raidman edits."""
    if conf_path not in MDADM_CONF:
        raise ValueError(f"{conf_path}: not an mdadm.conf raidman edits")
    if len(text) > MAX_TEXT:
        raise ValueError(f"{conf_path}: over {MAX_TEXT // 1024} KiB: not rewritten")
    if not text.endswith("\n"):
        raise ValueError(f"{conf_path}: its last line has no newline: not rewritten")
    new, removed = without_uuids(text, uuids)
    if not removed:
        raise ValueError(f"{conf_path}: no ARRAY line to remove")
    shown = "\n".join(f"- {line}" for line in removed)
    steps = (
        *edit_steps(
            conf_path,
            text,
            new,
            why_new=f"the new text: {conf_path} less the {len(removed)} line(s) the notes list",
        ),
        initramfs_step(conf_path),
    )
    n = len({u for u in (norm_uuid(x) for x in uuids) if u})
    return Plan(
        title=f"Remove {n} stale ARRAY entr{'y' if n == 1 else 'ies'} from {conf_path}",
        steps=steps,
        kind="audit-mdadm-conf",
        params={"conf": conf_path, "remove_uuids": sorted(u for u in map(norm_uuid, uuids) if u)},
        notes=(
            f"lines removed from {conf_path}:\n{shown}",
            f"the old file stays as {backup_name(conf_path, text)}",
        ),
    )


def new_text_problem(old: str, new: str) -> str | None:
    """None when ``new`` is ``old`` less whole ARRAY entries (at least one), else why not."""
    gone = {u for _, u in array_entries(old) if u} - {u for _, u in array_entries(new) if u}
    if not gone or without_uuids(old, gone)[0] != new:
        return "the new text must be the old one less whole ARRAY entries"
    return None


def removed_uuids(old: str, new: str) -> set[str]:
    """The UUIDs (normalised) whose ARRAY entries ``new`` no longer has."""
    return {u for _, u in array_entries(old) if u} - {u for _, u in array_entries(new) if u}
