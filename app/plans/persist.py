"""Settings made permanent as plan steps: the files raidman writes, atomically, and removes.

A setting written to sysfs or sysctl is lost at reboot. raidman makes it permanent with a file the
system reads at boot, written by the executor like every other change:

* the stripe cache: a udev rule in ``/etc/udev/rules.d/65-raidman-stripe-cache.rules``, one line
  per array, matched by ``ENV{MD_UUID}`` (set by mdadm's 63-md-raid-arrays.rules, hence 65) and
  guarded with ``TEST=="md/stripe_cache_size"``: the attribute exists only while a RAID-4/5/6
  personality runs the array (drivers/md/raid5.c ``raid5_attrs``), so the rule never writes to an
  array that has none (a RAID-1, or an array still being assembled);
* the resync speed limits: ``/etc/sysctl.d/60-raidman-md.conf`` (``dev.raid.speed_limit_min`` /
  ``_max``, read by systemd-sysctl at boot);
* the I/O scheduler: ``/etc/udev/rules.d/65-raidman-scheduler.rules``, one line per disk.

Atomic: the whole new file goes to a hidden temporary name in the same directory (``tee``, the
file-writing step mdadm.conf uses), then ``mv -f`` renames it over the old one (rename(2): a
reader sees the old file or the new one, never half of one; udev reads only ``*.rules`` and
systemd-sysctl only ``*.conf``, so the temporary name is never read). Removal is ``rm -f``.

The content is built here and checked again by the allowlist with ``content_problem``: only
lines of the shapes below (and ``#`` comments) are ever written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.plans.geometry import PlanError
from app.plans.plan import Plan, Step

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
_SCHED_LINE = re.compile(
    rf'ACTION=="add\|change", SUBSYSTEM=="block", KERNEL=="(?P<key>{_KNAME})", '
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


FILES = {
    f.what: f
    for f in (
        PersistFile("stripe-cache", STRIPE_CACHE_RULES, _STRIPE_LINE),
        PersistFile("speed-limits", SPEED_LIMITS_CONF, _SPEED_LINE),
        PersistFile("scheduler", SCHEDULER_RULES, _SCHED_LINE),
    )
}
BY_PATH = {f.path: f for f in FILES.values()}
BY_TEMP = {f.temp: f for f in FILES.values()}


def mdadm_uuid(uuid: str) -> str | None:
    """An md UUID in mdadm's spelling (``a:b:c:d``, what udev's MD_UUID holds), or None."""
    u = uuid.replace(":", "").replace("-", "").strip().lower()
    if len(u) != 32 or any(c not in "0123456789abcdef" for c in u):
        return None
    return ":".join(u[i : i + 8] for i in range(0, 32, 8))


def stripe_cache_line(uuid: str, entries: int) -> str:
    return (
        f'ACTION=="add|change", SUBSYSTEM=="block", KERNEL=="md*", ENV{{MD_UUID}}=="{uuid}", '
        f'TEST=="md/stripe_cache_size", ATTR{{md/stripe_cache_size}}="{entries}"'
    )


def speed_limit_line(key: str, kib_s: int) -> str:
    return f"{key} = {kib_s}"


def scheduler_line(disk: str, scheduler: str) -> str:
    return (
        f'ACTION=="add|change", SUBSYSTEM=="block", KERNEL=="{disk}", '
        f'ATTR{{queue/scheduler}}="{scheduler}"'
    )


def content_problem(f: PersistFile, text: str) -> str | None:
    """None when ``text`` is a whole file raidman writes to ``f``, else why not."""
    if len(text) > 64 * 1024 or not text.endswith("\n"):
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


def merged(f: PersistFile, existing: str | None, lines: dict[str, str]) -> str:
    """The file's new text: raidman's lines already there for other keys, then ``lines``
    (key -> line). Lines of the existing file that raidman did not write are dropped only if
    they are not raidman's shape (the file is raidman's own; its header says so)."""
    kept: list[str] = []
    for line in (existing or "").splitlines():
        m = f.line.fullmatch(line)
        if m is not None and m.group("key") not in lines:
            kept.append(line)
    return "\n".join([HEADER.format(what=f.what), *kept, *lines.values()]) + "\n"


def write_steps(f: PersistFile, text: str, why: str) -> tuple[Step, Step]:
    """Write ``text`` as ``f`` atomically: the temporary file, then the rename over the old."""
    bad = content_problem(f, text)
    if bad is not None:
        raise ValueError(bad)
    return (
        Step(("tee", f.temp), f"{why}: the new {f.path} under a temporary name", stdin=text),
        Step(
            ("mv", "-f", f.temp, f.path),
            f"rename it over {f.path} in one step (readers see the old file or the new one)",
        ),
    )


def remove_step(f: PersistFile) -> Step:
    return Step(("rm", "-f", f.path), f"remove {f.path}: the setting is no longer made at boot")


def build_remove(what: str) -> Plan:
    """The plan that removes one of raidman's boot-time settings files (the values in force
    stay until the next boot)."""
    f = FILES.get(what)
    if f is None:
        raise PlanError(f"nothing raidman keeps is called {what!r}: one of {', '.join(FILES)}")
    return Plan(
        title=f"stop keeping the {what} setting at boot",
        steps=(remove_step(f),),
        target="",
        kind="persist-remove",
        params={"what": what},
        notes=("the values in force now stay until the next boot",),
    )
