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

from app.backend import Backend
from app.plans import ops
from app.plans.builders.file_edit import edit_steps
from app.plans.ops.system_files import MAX_TEXT, backup_name
from app.plans.plan import Plan, Step
from app.plans.shapes import MDADM_CONF

DEBIAN_CONF = "/etc/mdadm/mdadm.conf"


def read_mdadm_conf(backend: Backend) -> tuple[str, str] | None:
    """mdadm.conf's path and text, where one is read (Debian's path first)."""
    for path in MDADM_CONF:
        try:
            text = backend.read_text(path)
        except Exception:
            text = None
        if text is not None:
            return path, text
    return None


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


def _device_words(line: str) -> tuple[str, list[str]] | None:
    """(kind, device paths) a physical line names: an ARRAY line's ``devices=`` list, or a
    DEVICE line's words (None: it names none)."""
    body = line.split("#", 1)[0]
    words = body.split()
    if not words:
        return None
    if words[0].upper() == "DEVICE":
        return "device", [w for w in words[1:] if w.startswith("/dev/")]
    for w in words:
        k, eq, v = w.partition("=")
        if eq and k.lower() == "devices":
            return "array", [x for x in v.split(",") if x]
    return None


def named_devices(text: str) -> set[str]:
    """Every device path mdadm.conf names in ``devices=`` lists and DEVICE lines."""
    out: set[str] = set()
    for line in text.splitlines():
        found = _device_words(line)
        if found is not None:
            out.update(found[1])
    return out


def without_devices(text: str, devices: Iterable[str]) -> tuple[str, list[str]]:
    """``text`` with the paths ``devices`` taken out of every ``devices=`` list (the key dropped
    when it names nothing else) and every DEVICE line (the line dropped when it names nothing
    else); and the lines changed, as they were. A glob (``/dev/sd*``) is left alone."""
    gone = set(devices)
    out: list[str] = []
    changed: list[str] = []
    for raw in text.splitlines(keepends=True):
        line = raw.rstrip("\n")
        found = _device_words(line)
        if found is None or not gone & set(found[1]):
            out.append(raw)
            continue
        changed.append(line)
        body, hash_, comment = line.partition("#")
        lead = body[: len(body) - len(body.lstrip())]
        words = body.split()
        if found[0] == "device":
            kept = [w for w in words[1:] if w not in gone]
            if not kept:
                continue
            words = [words[0], *kept]
        else:
            new_words = []
            for w in words:
                k, eq, v = w.partition("=")
                if eq and k.lower() == "devices":
                    left = [x for x in v.split(",") if x and x not in gone]
                    if left:
                        new_words.append(f"{k}={','.join(left)}")
                    continue
                new_words.append(w)
            words = new_words
            if not words and not hash_:
                continue  # a continuation line that held only the list
        rebuilt = lead + " ".join(words) + (f" {hash_}{comment}" if hash_ else "")
        out.append(rebuilt + ("\n" if raw.endswith("\n") else ""))
    return "".join(out), changed


def new_text_problem(old: str, new: str) -> str | None:
    """None when ``new`` is ``old`` less whole ARRAY entries (at least one), or ``old`` less the
    device paths a retired disk had (``without_devices``), else why not."""
    gone = {u for _, u in array_entries(old) if u} - {u for _, u in array_entries(new) if u}
    if gone and without_uuids(old, gone)[0] == new:
        return None
    devs = named_devices(old) - named_devices(new)
    if not gone and devs and without_devices(old, devs)[0] == new:
        return None
    return (
        "the new text must be the old one less whole ARRAY entries, or less the device paths "
        "of a retired disk"
    )


def removed_uuids(old: str, new: str) -> set[str]:
    """The UUIDs (normalised) whose ARRAY entries ``new`` no longer has."""
    return {u for _, u in array_entries(old) if u} - {u for _, u in array_entries(new) if u}
