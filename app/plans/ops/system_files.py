"""The system files a plan may write, and what may be in them (one place for the builders and
the operations that check them):

* mdadm.conf (``/etc/mdadm/mdadm.conf`` or ``/etc/mdadm.conf``) and ``/etc/fstab``: edited as
  whole files (``EDITED``): compared with the text the plan was made from, backed up under a
  name of the plan's own, written as a copy and renamed into place (app.plans.ops.files);
* the files that make settings permanent (``PERSIST``: a udev rule for the stripe cache, one for
  the I/O scheduler, a sysctl.d file for the speed limits): written whole under a hidden
  temporary name and renamed, or removed; only lines of their shapes;
* the monitor service's drop-in that sets the check schedule (``DROPIN``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from app.plans.shapes import MDADM_CONF as MDADM_CONF

FSTAB = "/etc/fstab"
EDITED = (*MDADM_CONF, FSTAB)
NEW = ".raidman-new"  # the copy an edit writes before it is renamed over the file
BACKUP = ".raidman-backup"  # + "-" + 12 hex digits of the text backed up: one per plan
MAX_TEXT = 64 * 1024
BACKUP_NAME = re.compile(
    "(" + "|".join(re.escape(p) for p in EDITED) + ")" + re.escape(BACKUP) + "-[0-9a-f]{12}"
)


def new_name(path: str) -> str:
    return path + NEW


def backup_name(path: str, text: str) -> str:
    """Where an edit keeps ``path`` as it was (``text``): a name of its own per text, so a
    later edit never overwrites an earlier one's backup."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{path}{BACKUP}-{digest}"


def text_problem(text: str | None, what: str) -> str | None:
    """A whole file's text: at most MAX_TEXT, whole lines, no control characters but tabs."""
    if text is None:
        return f"{what}: needs the whole text on stdin"
    if len(text) > MAX_TEXT or (text and not text.endswith("\n")):
        return f"{what}: whole lines on stdin, at most {MAX_TEXT // 1024} KiB"
    if not text.replace("\n", "").replace("\t", "").isprintable():
        return f"{what}: the text has control characters"
    return None


# ---- boot-time settings files (app.plans.builders.persist builds them) ------------------------------

STRIPE_CACHE_RULES = "/etc/udev/rules.d/65-raidman-stripe-cache.rules"
SPEED_LIMITS_CONF = "/etc/sysctl.d/60-raidman-md.conf"
SCHEDULER_RULES = "/etc/udev/rules.d/65-raidman-scheduler.rules"
HEADER = "# written by raidman; remove with: raidman plan persist --remove {what}"

_UUID = r"[0-9a-fA-F]{8}(?::[0-9a-fA-F]{8}){3}"
_KNAME = r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,31}"
_SCHED = r"none|mq-deadline|bfq|kyber"
_STRIPE_LINE = re.compile(
    r'ACTION=="add\|change", SUBSYSTEM=="block", KERNEL=="md\*", '
    rf'ENV{{MD_UUID}}=="(?P<key>{_UUID})", TEST=="md/stripe_cache_size", '
    r'ATTR\{md/stripe_cache_size\}="(?P<value>[0-9]{2,5})"'
)
_SPEED_LINE = re.compile(r"(?P<key>dev\.raid\.speed_limit_(?:min|max)) = (?P<value>[0-9]{1,10})")
# a disk's serial as udev's ENV{ID_SERIAL_SHORT} holds it (60-persistent-storage.rules, read
# before 65-raidman-*): stable across boots, unlike sdX; no glob character (* ? [ ]) or quote
SERIAL = r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}"
_SCHED_LINE = re.compile(
    r'ACTION=="add\|change", SUBSYSTEM=="block", ENV\{DEVTYPE\}=="disk", '
    rf'ENV\{{ID_SERIAL_SHORT\}}=="(?P<key>{SERIAL})", '
    rf'ATTR\{{queue/scheduler\}}="(?P<value>{_SCHED})"'
)
_COMMENT = re.compile(r"# [ -~]{0,200}")


@dataclass(frozen=True, slots=True)
class PersistFile:
    what: str  # the name `raidman plan persist --remove` takes
    path: str
    line: re.Pattern[str]

    @property
    def temp(self) -> str:
        d, _, base = self.path.rpartition("/")
        return f"{d}/.{base}.raidman-new"


PERSIST = {
    f.what: f
    for f in (
        PersistFile("stripe-cache", STRIPE_CACHE_RULES, _STRIPE_LINE),
        PersistFile("speed-limits", SPEED_LIMITS_CONF, _SPEED_LINE),
        PersistFile("scheduler", SCHEDULER_RULES, _SCHED_LINE),
    )
}
PERSIST_BY_PATH = {f.path: f for f in PERSIST.values()}
PERSIST_BY_TEMP = {f.temp: f for f in PERSIST.values()}


def content_problem(f: PersistFile, text: str) -> str | None:
    """None when ``text`` is a whole file raidman writes to ``f``, else why not."""
    if len(text) > MAX_TEXT or not text.endswith("\n"):
        return f"{f.path}: whole lines, at most 64 KiB"
    keys: set[str] = set()
    for n, line in enumerate(text.splitlines(), 1):
        if _COMMENT.fullmatch(line):
            continue
        m = f.line.fullmatch(line)
        if m is None:
            return f"{f.path} line {n}: not a line raidman writes there"
        if m.group("key") in keys:
            return f"{f.path} line {n}: {m.group('key')} set twice"
        keys.add(m.group("key"))
    return None


# ---- the check schedule's drop-in (app.plans.builders.check_schedule builds it) ----------------------

MONITOR_SERVICE = "raidman-monitor.service"
DROPIN_DIR = f"/etc/systemd/system/{MONITOR_SERVICE}.d"
DROPIN = f"{DROPIN_DIR}/checks.conf"
DROPIN_TEXT = re.compile(
    r"\[Service\]\nEnvironment=RAIDMAN_CHECK_EVERY=(monthly|off|[0-9]{1,6}[smhdw])\n"
    r"Environment=RAIDMAN_CHECK_WINDOW=([0-9]{1,6}[smhdw])\n"
)

# ---- what each kind of write may target -----------------------------------------------------


def write_target_problem(path: str, text: str | None) -> str | None:
    """None when ``tee PATH`` (a whole file) is one raidman plans with this text."""
    if path in PERSIST_BY_TEMP:
        if text is None:
            return f"tee {path}: needs the whole file on stdin"
        return content_problem(PERSIST_BY_TEMP[path], text)
    if path == DROPIN:
        if text is not None and DROPIN_TEXT.fullmatch(text):
            return None
        return "the check schedule's drop-in: only the two Environment= lines raidman writes"
    if path in {new_name(p) for p in EDITED}:
        return text_problem(text, f"tee {path}")  # its shape: app.plans.guards.file_edits
    if path in EDITED:
        return f"tee {path}: an edit writes its copy ({new_name(path)}), never the file itself"
    return f"tee writes only md tunables and the files raidman keeps, not {path!r}"
