"""mdadm.conf without its stale ARRAY lines, written through the executor like every other change.

A stale ARRAY line names a UUID that no running array has and no device's md superblock carries
(``mdadm --examine --scan``): an array that was deleted or whose disks are gone. The audit
(app/rules/md.py, ``md-conf-stale``) offers this plan for them:

1. ``cp -p CONF CONF.raidman-backup``: the file as it is, kept (owner and mode too);
2. ``cmp CONF.raidman-backup -`` with the text the plan was made from on stdin: cmp exits 1 when
   the file changed since (a plan saved and applied later), and the executor stops there, before
   anything is written;
3. ``cp -p CONF CONF.raidman-new`` and ``tee CONF.raidman-new`` with the whole new text: the
   same file without the stale entries (an ARRAY line and its continuation lines), every other
   line as it was;
4. ``mv CONF.raidman-new CONF``: a rename, so a reader sees the old file or the new, never half
   (the same steps as the fstab write, app.plans.lifecycle_shapes);
5. ``update-initramfs -u`` (Debian's /etc/mdadm/mdadm.conf) or ``dracut -f``: the initramfs holds
   its own copy of mdadm.conf, which assembles the arrays at boot.

The allowlist (``step_problem``, ``plan_problems``) accepts exactly these shapes, and a new text
only if it is the text on cmp's stdin with whole ARRAY entries removed.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.plans.plan import Plan, Step
from app.plans.shapes import MDADM_CONF

BACKUP = ".raidman-backup"
NEW = ".raidman-new"
MAX_TEXT = 64 * 1024
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
        return Step(("update-initramfs", "-u"), why + "copy the new mdadm.conf into it")
    return Step(("dracut", "-f"), why + "rebuild it with the new mdadm.conf")


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
    backup, temp = conf_path + BACKUP, conf_path + NEW
    shown = "\n".join(f"- {line}" for line in removed)
    steps = (
        Step(("cp", "-p", conf_path, backup), f"keep {conf_path} as it is now in {backup}"),
        Step(
            ("cmp", backup, "-"),
            f"stop here if {conf_path} changed since this plan was made (cmp exits 1)",
            stdin=text,
        ),
        Step(("cp", "-p", conf_path, temp), "a copy with the file's owner and mode"),
        Step(
            ("tee", temp),
            f"the new text: {conf_path} less the {len(removed)} line(s) the notes list",
            stdin=new,
        ),
        Step(
            ("mv", temp, conf_path),
            f"rename it over {conf_path} in one step (readers see the old file or the new one)",
        ),
        initramfs_step(conf_path),
    )
    n = len({u for u in (norm_uuid(x) for x in uuids) if u})
    return Plan(
        title=f"Remove {n} stale ARRAY entr{'y' if n == 1 else 'ies'} from {conf_path}",
        steps=steps,
        kind="audit-mdadm-conf",
        params={"conf": conf_path, "remove_uuids": sorted(u for u in map(norm_uuid, uuids) if u)},
        notes=(f"lines removed from {conf_path}:\n{shown}", f"the old file stays as {backup}"),
    )


def _paths(argv: tuple[str, ...]) -> set[str]:
    return {p for c in MDADM_CONF for p in (c + BACKUP, c + NEW) if p in argv}


def names_its_files(argv: tuple[str, ...]) -> bool:
    """``argv`` touches this module's backup or new file (so ``step_problem`` judges it)."""
    return argv[0] in ("cp", "cmp", "tee", "mv") and bool(_paths(argv))


def step_problem(step: Step) -> str | None:
    """None when ``step`` is one of the shapes ``build_remove_stale`` emits."""
    a = step.argv
    if step.stdin_from is not None:
        return "mdadm.conf rewrite: no piped input"
    for conf in MDADM_CONF:
        backup, temp = conf + BACKUP, conf + NEW
        if a in (("cp", "-p", conf, backup), ("cp", "-p", conf, temp), ("mv", temp, conf)):
            return None if step.stdin is None else f"{a[0]}: raidman feeds nothing on its stdin"
        if a == ("cmp", backup, "-") or a == ("tee", temp):
            text = step.stdin
            if text is None or len(text) > MAX_TEXT or (text and not text.endswith("\n")):
                return f"{a[0]} {a[1]}: whole lines on stdin, at most {MAX_TEXT // 1024} KiB"
            return None
    return "mdadm.conf rewrite: not a step raidman plans (cp -p / cmp / tee / mv of its copies)"


def plan_problems(plan: Plan) -> list[str]:
    """The new text a plan writes is the text its cmp step checked, less whole ARRAY entries
    (at least one); the backup is taken and compared before the new file is written."""
    out: list[str] = []
    for conf in MDADM_CONF:
        backup, temp = conf + BACKUP, conf + NEW
        argvs = [s.argv for s in plan.steps]
        if ("tee", temp) not in argvs:
            continue
        i_tee = argvs.index(("tee", temp))
        i_cmp = argvs.index(("cmp", backup, "-")) if ("cmp", backup, "-") in argvs else None
        i_cp = (
            argvs.index(("cp", "-p", conf, backup)) if ("cp", "-p", conf, backup) in argvs else None
        )
        if i_cmp is None or i_cp is None or not i_cp < i_cmp < i_tee:
            out.append(f"{conf}: the backup and its comparison come before the new text")
            continue
        old = plan.steps[i_cmp].stdin or ""
        new = plan.steps[i_tee].stdin or ""
        gone = {u for _, u in array_entries(old) if u} - {u for _, u in array_entries(new) if u}
        if not gone or without_uuids(old, gone)[0] != new:
            out.append(f"{conf}: the new text must be the old one less whole ARRAY entries")
    return out
