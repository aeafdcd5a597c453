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
* the I/O scheduler: ``/etc/udev/rules.d/65-raidman-scheduler.rules``, one line per disk, keyed
  on its serial (udev's ``ID_SERIAL_SHORT``), not its kernel name.

Atomic: the whole new file goes to a hidden temporary name in the same directory (``tee``, the
file-writing step mdadm.conf uses), then ``mv -f`` renames it over the old one (rename(2): a
reader sees the old file or the new one, never half of one; udev reads only ``*.rules`` and
systemd-sysctl only ``*.conf``, so the temporary name is never read). Removal is ``rm -f``.

The content is built here and checked again by the allowlist with ``content_problem``: only
lines of the shapes below (and ``#`` comments) are ever written.
"""

from __future__ import annotations

import re

from app.plans import ops
from app.plans.geometry import PlanError
from app.plans.ops.system_files import (
    HEADER,
    PERSIST,
    PERSIST_BY_PATH,
    PERSIST_BY_TEMP,
    SCHEDULER_RULES,
    SERIAL,
    SPEED_LIMITS_CONF,
    STRIPE_CACHE_RULES,
    PersistFile,
    content_problem,
)
from app.plans.plan import Plan, Step

__all__ = ["SCHEDULER_RULES", "SPEED_LIMITS_CONF", "STRIPE_CACHE_RULES", "content_problem"]

FILES = PERSIST
BY_PATH = PERSIST_BY_PATH
BY_TEMP = PERSIST_BY_TEMP


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


def scheduler_key(serial: str | None) -> str | None:
    """The key a disk's scheduler rule matches on: its serial as udev's ID_SERIAL_SHORT holds
    it (kernel names like sda change between boots); None where the disk reports none a rule
    can match safely."""
    return serial if serial is not None and re.fullmatch(SERIAL, serial) else None


def scheduler_line(serial: str, scheduler: str) -> str:
    if scheduler_key(serial) is None:
        raise PlanError(f"serial {serial!r} cannot key a udev rule")
    return (
        f'ACTION=="add|change", SUBSYSTEM=="block", ENV{{DEVTYPE}}=="disk", '
        f'ENV{{ID_SERIAL_SHORT}}=="{serial}", ATTR{{queue/scheduler}}="{scheduler}"'
    )


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
        Step(ops.WriteFile(f.temp, text), f"{why}: the new {f.path} under a temporary name"),
        Step(
            ops.ReplaceFile(f.path, force=True),
            f"rename it over {f.path} in one step (readers see the old file or the new one)",
        ),
    )


def remove_step(f: PersistFile) -> Step:
    return Step(ops.RemoveFile(f.path), f"remove {f.path}: the setting is no longer made at boot")


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
