"""Sync actions and tuning as plans: sysfs/sysctl writes go through the same preview and executor.

* ``sync_action``: ``tee /sys/block/mdX/md/sync_action`` with ``check``/``repair``/``idle``/``frozen``
* speed limits: ``sysctl -w dev.raid.speed_limit_min=N`` (global, KiB/s) or per array
  ``tee /sys/block/mdX/md/sync_speed_min|max`` (``system`` = back to the global value)
* ``stripe_cache_size`` (RAID-4/5/6): memory = entries × 4 KiB page × members
None of these survive a reboot; the notes say so.
"""

from __future__ import annotations

from app.format import human_bytes
from app.model import Machine, MdArray, levels
from app.plans import ops
from app.plans.builders import persist
from app.plans.geometry import (
    PlanError,
    parse_size,
    stripe_cache_devices,
    stripe_cache_memory,
)
from app.plans.guards.preflight import strip_dev
from app.plans.outcome.consequences import with_consequences
from app.plans.plan import Plan, Step
from app.plans.shapes import SPEED_LIMIT_RANGE, created_file_problem

SYNC_ACTIONS = ("check", "repair", "idle", "frozen")
# drivers/md/Kconfig MD_BITMAP_FILE: "(deprecated)"; md-bitmap.c refuses a file bitmap without it
FILE_BITMAP_DEPRECATED = (
    "mdadm(8): file bitmaps are known to work on ext2/ext3 only; newer kernels treat file "
    "bitmaps as deprecated (CONFIG_MD_BITMAP_FILE) and may be built without them"
)
_WHY = {
    "check": "read every stripe and count mismatches (md/mismatch_cnt); nothing is rewritten",
    "repair": "read every stripe and rewrite parity/mirror copies that disagree",
    "idle": "interrupt the running sync: a check or repair ends there; md starts a resync or a "
    "rebuild again at once from where it stopped (md.c action_store, md_check_recovery)",
    "frozen": "stop every sync: the running one stops where it is and none starts (no rebuild "
    "either) until the action is set back to idle",
}


def _array(machine: Machine, array: str) -> MdArray:
    name = strip_dev(array)
    a = machine.array(name)
    if a is None:
        raise PlanError(f"no md array {name!r} on this machine")
    return a


def _sysfs(a: MdArray, attr: str) -> str:
    return f"/sys/block/{a.name}/md/{attr}"


def repair_note(level: str) -> str:
    """What md's repair really does for the level (drivers/md raid1/raid10 vs raid5 handle_parity_checks)."""
    if level in levels.PARITY:
        return (
            "run a check first and look at mismatch_cnt; on RAID-4/5/6 repair recomputes parity "
            "from the data blocks and rewrites the parity: data is never changed, so if a data "
            "block is what went wrong, repair makes the parity agree with the bad data"
        )
    return (
        "run a check first and look at mismatch_cnt; on a mirror repair copies one readable "
        "copy (md takes the first in-sync one) over the others: md cannot tell which copy is right"
    )


def busy_with(a: MdArray) -> str | None:
    """The sync action ``a`` is running (md answers EBUSY to a check or repair meanwhile)."""
    return a.sync.action if a.sync is not None and a.sync.active else None


def offered_actions(a: MdArray | None) -> tuple[str, ...]:
    """What the sync wizard offers for ``a`` (None: the global limits only): check and repair
    only on an idle array with redundancy, the stripe cache only on RAID-4/5/6 (md has it for
    raid456 alone), idle/frozen and the speed limits on any array."""
    if a is None:
        return ("limits",)
    out: list[str] = []
    if a.has_redundancy and not busy_with(a):
        out += ["check", "repair"]
    out += ["idle", "frozen", "limits"]
    if a.level in levels.PARITY:
        out.append("stripe-cache")
    return tuple(out)


def build_sync_action(machine: Machine, array: str, action: str) -> Plan:
    a = _array(machine, array)
    if action not in SYNC_ACTIONS:
        raise PlanError(f"sync action {action!r}: choose one of {', '.join(SYNC_ACTIONS)}")
    if action in ("check", "repair") and not a.has_redundancy:
        raise PlanError(f"{a.level} has no redundancy: nothing to {action}")
    busy = busy_with(a)
    if action in ("check", "repair") and busy:
        # md.c action_store: check/repair while MD_RECOVERY_RUNNING is -EBUSY; refused here,
        # before a plan, as the bitmap plan is (the run printed the kernel's EBUSY three times)
        raise PlanError(
            f"{a.name} is running a {busy}: md refuses a {action} (EBUSY) until it ends"
        )
    warnings: list[str] = []
    notes: list[str] = []
    if action == "repair":
        notes.append(repair_note(a.level))
    plan = Plan(
        title=f"{action} {a.path}",
        steps=(Step(ops.SetSyncAction(a.name, action), f"{a.name}: {_WHY[action]}"),),
        target=a.name,
        warnings=tuple(warnings),
        kind="sync-action",
        params={"array": a.name, "action": action},
        notes=tuple(notes),
    )
    return with_consequences(plan, machine)


def _limit_value(v: int | str | None, what: str) -> str | None:
    if v is None:
        return None
    if isinstance(v, str) and v == "system":
        return v
    try:
        n = int(v)
    except ValueError:
        raise PlanError(f"{what}: a speed in KiB/s (or 'system' per array), not {v!r}") from None
    lo, hi = SPEED_LIMIT_RANGE
    if not lo <= n <= hi:
        raise PlanError(f"{what}: a number of KiB/s from {lo} to {hi}")
    return str(n)


def build_speed_limits(
    machine: Machine,
    *,
    min_kib_s: int | str | None = None,
    max_kib_s: int | str | None = None,
    array: str | None = None,
    persist_file: str | bool | None = False,
) -> Plan:
    """``persist_file``: False = runtime only; else also keep the global limits at boot in
    /etc/sysctl.d (app.plans.builders.persist), given that file's current text (None: no file yet)."""
    lo = _limit_value(min_kib_s, "minimum")
    hi = _limit_value(max_kib_s, "maximum")
    if lo is None and hi is None:
        raise PlanError("give a minimum and/or a maximum speed")
    if lo not in (None, "system") and hi not in (None, "system") and int(lo) > int(hi):
        raise PlanError("the minimum speed is above the maximum")
    steps: list[Step] = []
    if array is not None and persist_file is not False:
        raise PlanError("--persist keeps the global limits (sysctl.d), not one array's")
    if array is None:
        if "system" in (lo, hi):
            raise PlanError("'system' is only for per-array limits")
        if lo is not None:
            steps.append(
                Step(
                    ops.SetSystemSpeed("min", int(lo)),
                    f"all arrays resync at least {lo} KiB/s even when other I/O competes",
                )
            )
        if hi is not None:
            steps.append(
                Step(
                    ops.SetSystemSpeed("max", int(hi)),
                    f"all arrays resync at most {hi} KiB/s",
                )
            )
        target, title = "", "resync speed limits (all arrays)"
        if persist_file is not False:
            f = persist.FILES["speed-limits"]
            wanted = {
                k: persist.speed_limit_line(k, int(v))
                for k, v in (("dev.raid.speed_limit_min", lo), ("dev.raid.speed_limit_max", hi))
                if v is not None
            }
            existing = persist_file if isinstance(persist_file, str) else None
            text = persist.merged(f, existing, wanted)
            steps += persist.write_steps(f, text, "keep these limits at boot")
    else:
        a = _array(machine, array)
        for bound, v, word in (
            ("min", lo, "at least"),
            ("max", hi, "at most"),
        ):
            if v is None:
                continue
            why = (
                f"{a.name}: back to the global dev.raid limit"
                if v == "system"
                else f"{a.name} resyncs {word} {v} KiB/s"
            )
            kib = None if v == "system" else int(v)
            steps.append(Step(ops.SetArraySpeed(a.name, bound, kib), why))
        target, title = a.name, f"resync speed limits of {a.path}"
    plan = Plan(
        title=title,
        steps=tuple(steps),
        target=target,
        kind="sync-limits",
        params={"array": array, "min": lo, "max": hi},
        notes=(
            (
                f"kept at boot by {persist.SPEED_LIMITS_CONF}; remove it with: raidman plan "
                "persist --remove speed-limits"
            )
            if persist_file is not False and array is None
            else "not persistent: lost at reboot (--persist writes /etc/sysctl.d for the "
            "global limits)",
        ),
    )
    return with_consequences(plan, machine)


def build_stripe_cache(machine: Machine, array: str, entries: int) -> Plan:
    a = _array(machine, array)
    if a.level not in levels.PARITY:
        raise PlanError(f"stripe_cache_size exists only for RAID-4/5/6, not {a.level}")
    if not 17 <= entries <= 32768:
        raise PlanError("stripe_cache_size: 17 … 32768 entries")
    members = stripe_cache_devices(a)
    mem = stripe_cache_memory(entries, members)
    notes = [
        f"memory: {entries} entries × 4 KiB × {members} members = {human_bytes(mem, trim=True)} of RAM"
    ]
    if a.stripe_cache_size:
        before = stripe_cache_memory(a.stripe_cache_size, members)
        notes.append(f"now: {a.stripe_cache_size} entries = {human_bytes(before, trim=True)}")
    notes.append("not persistent: lost at reboot (a udev rule makes it permanent)")
    plan = Plan(
        title=f"stripe_cache_size {entries} on {a.path}",
        steps=(
            Step(
                ops.SetStripeCache(a.name, entries),
                f"{a.name}: cache {entries} stripes (fewer read-modify-writes; costs {human_bytes(mem, trim=True)} RAM)",
            ),
        ),
        target=a.name,
        kind="stripe-cache",
        params={"array": a.name, "entries": entries, "memory_bytes": mem},
        notes=tuple(notes),
    )
    return with_consequences(plan, machine)


def _mount_of(machine: Machine, path: str) -> tuple[str, str] | None:
    """(mountpoint, device) of the mounted filesystem holding ``path`` (longest prefix)."""
    best: tuple[str, str] | None = None
    for fs in machine.filesystems:
        for mp in fs.mountpoints:
            inside = path == mp or path.startswith(mp.rstrip("/") + "/")
            if inside and (best is None or len(mp) > len(best[0])):
                best = (mp, fs.device)
    return best


def build_bitmap(machine: Machine, array: str, location: str, *, chunk: str | None = None) -> Plan:
    """Move an array's write-intent bitmap (internal ↔ a file on another disk ↔ none) or change
    its chunk. md changes a bitmap only by removing it and adding the new one, so a plan for an
    array that has one has two steps. Article 001 (/work/shared/seeds/001_*.txt): moving a
    5-disk RAID-6's internal bitmap to a file on the system disk raised writes from 130 to
    165 MB/s (``mdadm -G /dev/md0 -b /var/md0_intent``)."""
    a = _array(machine, array)
    if not a.has_redundancy:
        raise PlanError(f"{a.level} has no redundancy: a write-intent bitmap makes no sense")
    if a.is_external:
        raise PlanError(f"{a.name} is a firmware ({a.metadata}) volume: mdadm cannot add a bitmap")
    loc = location.strip()
    if loc not in ("internal", "none") and not loc.startswith("/"):
        raise PlanError("bitmap: internal, none, or an absolute file path")
    if loc not in ("internal", "none") and (bad := created_file_problem(loc)) is not None:
        raise PlanError(f"bitmap file {bad}")
    chunk_bytes = parse_size(chunk) if chunk else None
    if chunk_bytes is not None:
        if loc == "none":
            raise PlanError("--bitmap-chunk needs a bitmap (internal or a file)")
        if chunk_bytes < 4096 or chunk_bytes & (chunk_bytes - 1):
            raise PlanError(f"bitmap chunk {chunk}: a power of two, at least 4K")
    current = "none" if a.bitmap is None else ("internal" if a.bitmap[:1] in "+-" else a.bitmap)
    if loc == current and chunk_bytes is None:
        raise PlanError(f"{a.name} already has bitmap {current}")
    notes = [
        "moving a 5-disk RAID-6's internal bitmap to a file on another disk has raised "
        "sequential writes from 130 to 165 MB/s; a larger bitmap chunk also means fewer "
        "bitmap updates, at the price of resyncing more after a drop-out"
    ]
    warnings: list[str] = []
    if loc.startswith("/"):
        where = _mount_of(machine, loc)
        if where is None:
            warnings.append(
                f"{loc}: no mounted filesystem found for it; it must not live on {a.name}"
            )
        else:
            mp, dev = where
            if dev == a.name or a.name in machine.ancestors_of(dev):
                raise PlanError(
                    f"{loc} is on {mp}, which lives on {a.name}: the bitmap file "
                    "must be outside the array"
                )
            notes.append(
                f"the file lives on {mp} (/dev/{dev}); {FILE_BITMAP_DEPRECATED}, and if that "
                "disk fails the array keeps running without one"
            )
    steps: list[Step] = []
    if current != "none":
        steps.append(
            Step(
                ops.SetBitmap(a.path, "none"),
                f"remove the current bitmap ({current}): md changes a bitmap only by removing "
                "it first; until the next step a drop-out means a full rebuild",
            )
        )
    if loc != "none":
        chunk_kib = chunk_bytes // 1024 if chunk_bytes is not None else None
        steps.append(
            Step(
                ops.SetBitmap(a.path, loc, chunk_kib),
                f"add a write-intent bitmap ({loc}"
                + (f", {human_bytes(chunk_bytes, trim=True)} per bit" if chunk_bytes else "")
                + ")",
            )
        )
    plan = Plan(
        title=f"bitmap of {a.path}: {current} -> {loc}"
        + (f" ({human_bytes(chunk_bytes, trim=True)} chunk)" if chunk_bytes else ""),
        steps=tuple(steps),
        target=a.name,
        kind="sync-bitmap",
        params={"array": a.name, "bitmap": loc, "chunk": chunk},
        notes=tuple(notes),
        warnings=tuple(warnings),
    )
    return with_consequences(plan, machine)
