""" "Boost this sync": raise the md speed limits (and stripe cache) while an array syncs, then put
the previous values back when the sync ends — even if raidman was closed in between.

What must be restored is written to ``<state dir>/boost.json`` *before* anything is raised, so a
crash between the two leaves a record that restores to the values read beforehand. Building plans
is pure; running them is the executor's job.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from app import statefiles
from app.format import human_bytes
from app.model import Machine, MdArray, levels, sync_model
from app.model.live import LiveSample
from app.parsers.meminfo import mem_available_bytes
from app.parsers.safe import load_json
from app.paths import BOOST_FILE, state_file
from app.plans import ops
from app.plans.geometry import STRIPE_CACHE_ENTRIES, stripe_cache_devices, stripe_cache_memory
from app.plans.plan import Plan, Step
from app.plans.shapes import SPEED_LIMIT_RANGE
from app.statefiles import StateFileError

ReadText = Callable[[str], str | None]

SYSCTL_MIN = "dev.raid.speed_limit_min"
SYSCTL_MAX = "dev.raid.speed_limit_max"
DEFAULT_BOOST_MIN_KIB = 200_000  # the source article's values (echo 200000 > speed_limit_min)
# the max where the members' speed is unknown (seed 000's echo 500000); else boost_ceiling()
DEFAULT_BOOST_MAX_KIB = sync_model.BOOST_UNKNOWN_KIB_S
DEFAULT_BOOST_STRIPE_CACHE = STRIPE_CACHE_ENTRIES  # the audit's value too (app.plans.geometry)
BOOST_MAX_DEPTH = 4  # a list of records holding objects of strings: 3 levels
# a stripe cache may take at most this share of MemAvailable (issue 22)
STRIPE_CACHE_MEM_SHARE = 8
MEMINFO = "/proc/meminfo"


def sysctl_path(key: str) -> str:
    return "/proc/sys/" + key.replace(".", "/")


def stripe_cache_path(array: str) -> str:
    return f"/sys/block/{array}/md/stripe_cache_size"


def array_limit_path(array: str, which: str) -> str:
    """``md/sync_speed_min`` or ``md/sync_speed_max`` of ``array`` (which: "min" | "max")."""
    return f"/sys/block/{array}/md/sync_speed_{which}"


@dataclass(frozen=True, slots=True)
class Setting:
    """One tunable: a sysctl key or a sysfs file."""

    kind: str  # "sysctl" | "sysfs"
    key: str  # "dev.raid.speed_limit_max" | "/sys/block/md127/md/stripe_cache_size"

    @property
    def path(self) -> str:
        return sysctl_path(self.key) if self.kind == "sysctl" else self.key

    @property
    def is_global(self) -> bool:
        return self.kind == "sysctl"

    def step(self, value: str, why: str) -> Step:
        """The step that writes ``value`` (a number ``check_setting`` accepted) to it."""
        n = int(value)
        if self.kind == "sysctl":
            bound = "min" if self.key.endswith("_min") else "max"
            return Step(ops.SetSystemSpeed(bound, n), why)
        m = _STRIPE_CACHE_KEY.fullmatch(self.key)
        if m is not None:
            return Step(ops.SetStripeCache(m.group(1), n), why)
        lim = _ARRAY_LIMIT_KEY.fullmatch(self.key)
        if lim is None:
            raise ValueError(f"{self.key!r} is not a setting boost changes")
        bound = "min" if self.key.endswith("_min") else "max"
        return Step(ops.SetArraySpeed(lim.group(1), bound, n), why)

    def as_str(self) -> str:
        return f"{self.kind}:{self.key}"

    @classmethod
    def parse(cls, s: str) -> Setting:
        kind, _, key = s.partition(":")
        if kind not in ("sysctl", "sysfs") or not key:
            raise ValueError(f"not a setting: {s!r}")
        return cls(kind, key)


_MD_NAME = re.compile(r"md[0-9]{1,4}")
_ACTION = re.compile(r"[a-z-]{1,16}")
_STRIPE_CACHE_KEY = re.compile(r"/sys/block/(md[0-9]{1,4})/md/stripe_cache_size")
_ARRAY_LIMIT_KEY = re.compile(r"/sys/block/(md[0-9]{1,4})/md/sync_speed_(?:min|max)")
# The only settings a boost raises, with the values the kernel accepts for them (md.rst:
# stripe_cache_size 17..32768; the speed limits: app.plans.shapes.SPEED_LIMIT_RANGE).
ALLOWED_RANGES: dict[str, tuple[int, int]] = {
    f"sysctl:{SYSCTL_MIN}": SPEED_LIMIT_RANGE,
    f"sysctl:{SYSCTL_MAX}": SPEED_LIMIT_RANGE,
}
STRIPE_CACHE_RANGE = (17, 32768)


def check_setting(key: str, value: str, array: str) -> None:
    """Raise ValueError unless ``key`` is a setting boost raises (for ``array``) and ``value`` a
    number in the kernel's range for it. A restore record is written by root: nothing else."""
    rng = ALLOWED_RANGES.get(key)
    if rng is None:
        kind, _, path = key.partition(":")
        m = _STRIPE_CACHE_KEY.fullmatch(path) if kind == "sysfs" else None
        lim = _ARRAY_LIMIT_KEY.fullmatch(path) if kind == "sysfs" else None
        if m is None and lim is None:
            raise ValueError(f"{key!r} is not a setting boost changes")
        owner = (m or lim).group(1)  # type: ignore[union-attr]
        if owner != array:
            raise ValueError(f"{key!r} belongs to {owner}, not to the record's {array}")
        rng = STRIPE_CACHE_RANGE if m is not None else SPEED_LIMIT_RANGE
    if not (isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 10):
        raise ValueError(f"{key}: value {value!r} is not a number")
    lo, hi = rng
    if not lo <= int(value) <= hi:
        raise ValueError(f"{key}: value {value} outside {lo}..{hi}")


@dataclass(frozen=True, slots=True)
class BoostRecord:
    array: str
    action: str  # the sync being boosted
    started_at: float  # wall clock
    previous: dict[str, str] = field(default_factory=dict)  # Setting.as_str() -> value to restore
    applied: dict[str, str] = field(default_factory=dict)
    # written before the steps run (BoostStore.begin); the run may have raised any of ``applied``
    pending: bool = False

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def validate(self) -> None:
        """Raise ValueError unless every part is something boost itself writes."""
        if not _MD_NAME.fullmatch(self.array):
            raise ValueError(f"array {self.array!r} is not an md device name")
        if not _ACTION.fullmatch(self.action):
            raise ValueError(f"action {self.action!r} is not a sync action")
        for key, value in (*self.previous.items(), *self.applied.items()):
            check_setting(key, value, self.array)

    @classmethod
    def from_json(cls, d: object) -> BoostRecord:
        """A validated record; ValueError naming what is out of shape otherwise."""
        if not isinstance(d, dict):
            raise ValueError("a record is not an object")
        unknown = set(d) - {"array", "action", "started_at", "previous", "applied", "pending"}
        if unknown:
            raise ValueError(f"unknown fields {sorted(map(str, unknown))}")
        prev = d.get("previous") or {}
        applied = d.get("applied") or {}
        if not isinstance(prev, dict) or not isinstance(applied, dict):
            raise ValueError("previous/applied are not objects")
        for k, v in (*prev.items(), *applied.items()):
            if not isinstance(k, str) or not isinstance(v, str):
                raise ValueError("settings and values must be strings")
        array, action = d.get("array"), d.get("action", "")
        started, pending = d.get("started_at", 0.0), d.get("pending", False)
        if not isinstance(array, str) or not isinstance(action, str):
            raise ValueError("array/action are not strings")
        if isinstance(started, bool) or not isinstance(started, (int, float)):
            raise ValueError("started_at is not a number")
        if not isinstance(pending, bool):
            raise ValueError("pending is not true/false")
        rec = cls(array, action, float(started), dict(prev), dict(applied), pending)
        rec.validate()
        return rec


def _shown(value: object) -> str:
    """Text from the file, safe to put in a note (control characters escaped, bounded)."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(value))
    return text if len(text) <= 160 else text[:157] + "..."


class BoostStore:
    """The boost records on disk (``<state dir>/boost.json``), read and written only through
    :mod:`app.statefiles` (owner and mode checked, no symlink followed, atomic replace).

    A record naming anything but the settings boost raises, or values out of range, is refused
    as a whole and reported in ``notes``: it is never restored (nothing is written for it) and is
    kept in the file for the admin to look at. An unsafe file or directory is refused (note) and
    the store is read-only: ``begin``/``add``/... then raise :class:`StateFileError`. Unparseable
    JSON is moved aside under a fresh name (note). Never fatal.

    Order for a boost: ``begin(record)`` (persisted, pending) → run the plan → ``commit(record)``
    (or ``forget(array)`` when nothing ran). A pending record left by a crash is restored like a
    committed one by ``due_restores``/``restore_plan``.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_file(BOOST_FILE)
        self.notes: list[str] = []
        self._refused: list[object] = []  # raw records refused at load, written back untouched
        self._unsafe: str | None = None
        self._records: list[BoostRecord] = self._load()

    def _load(self) -> list[BoostRecord]:
        try:
            text = statefiles.read_text(self.path)
        except StateFileError as e:
            self._unsafe = str(e)
            self.notes.append(f"{e}; boost records ignored, no boost will be restored or saved")
            return []
        if text is None:
            return []
        try:  # nesting, NaN/Infinity, 1e999 and 400-digit numbers refused here, not crashing later
            raw = load_json(text, str(self.path), max_depth=BOOST_MAX_DEPTH)
            if not isinstance(raw, list):
                raise ValueError("not a list")
        except ValueError as e:
            try:
                aside = statefiles.move_aside(self.path, "corrupt")
                where = f"moved to {aside}"
            except OSError:
                where = "left in place"
            self.notes.append(f"{self.path} was unreadable ({e}); {where}; no boost to restore")
            return []
        out: list[BoostRecord] = []
        for i, item in enumerate(raw, 1):
            try:
                out.append(BoostRecord.from_json(item))
            except (ValueError, TypeError) as e:
                self._refused.append(item)
                who = _shown(item.get("array")) if isinstance(item, dict) else "?"
                self.notes.append(
                    f"{self.path}: refused boost record #{i} (array {who}): {_shown(e)}; "
                    "it is not restored and nothing was written for it (remove it from the file)"
                )
        return out

    def _save(self) -> None:
        if self._unsafe is not None:
            raise StateFileError(self._unsafe)
        data = [r.to_json() for r in self._records] + self._refused
        statefiles.write_text(self.path, json.dumps(data, indent=1))

    @property
    def records(self) -> tuple[BoostRecord, ...]:
        return tuple(self._records)

    def active_for(self, array: str) -> BoostRecord | None:
        for r in self._records:
            if r.array == array:
                return r
        return None

    def _put(self, record: BoostRecord) -> None:
        record.validate()
        before = self._records
        self._records = [r for r in self._records if r.array != record.array] + [record]
        try:
            self._save()
        except StateFileError:
            self._records = before
            raise

    def begin(self, record: BoostRecord) -> BoostRecord:
        """Persist ``record`` as pending BEFORE anything is raised; raises StateFileError (or
        ValueError for a record boost would never make) when it cannot, and then the caller must
        not run the boost. Returns the stored (pending) record."""
        pending = dataclasses.replace(record, pending=True)
        self._put(pending)
        return pending

    def commit(self, record: BoostRecord) -> None:
        """After the run: keep ``record`` (what to restore for the steps that ran), no longer
        pending. Use ``forget`` when no step ran."""
        self._put(dataclasses.replace(record, pending=False))

    def forget(self, array: str) -> None:
        """Drop the record of ``array`` (a boost cancelled before any step ran, or restored)."""
        self.remove(array)

    def add(self, record: BoostRecord) -> None:
        self._put(record)

    def remove(self, array: str) -> None:
        before = self._records
        self._records = [r for r in self._records if r.array != array]
        if self._records != before:
            try:
                self._save()
            except StateFileError:
                self._records = before
                raise


def _read_int(read_text: ReadText, path: str) -> str | None:
    text = read_text(path)
    if text is None:
        return None
    value = text.strip().split()[0] if text.strip() else ""
    return value if value.isdigit() else None


def members_rotational(machine: Machine, array: str) -> bool | None:
    """True if any whole disk under ``array`` spins, False if all are known SSD/NVMe, None if
    that is not known for some of them (or no disk is found)."""
    kinds = [getattr(machine.disk(n), "rotational", None) for n in machine.disks_under(array)]
    if any(k is True for k in kinds):
        return True
    if not kinds or any(k is None for k in kinds):
        return None
    return False


ROTATIONAL_MIN_NOTE = (
    "some member is a rotational disk: raising dev.raid.speed_limit_min makes md keep the sync "
    "at that speed even while other I/O waits, which starves foreground I/O on spinning disks "
    "(the kernel's low default exists to keep the extra load on running work small; on a "
    "RAID-10 of SSDs raising it is harmless). So only the ceiling{cache} is raised; raising the "
    "minimum as well has to be asked for explicitly."
)


def boost_ceiling(machine: Machine, array: MdArray, action: str) -> tuple[int, str]:
    """The speed_max a boost of ``array``'s ``action`` sets, from what its slowest member disk
    can do (:func:`app.model.sync_model.boost_max_kib_s`), and why in words."""
    member = sync_model.members_rated_kib_s(machine, [array.name])
    return sync_model.boost_max_kib_s(
        array.level, array.raid_disks or len(array.members), array.layout, action, member
    )


def plan_boost_for(
    machine: Machine, read_text: ReadText, array: MdArray, store: BoostStore
) -> tuple[Plan, BoostRecord]:
    """:func:`plan_boost` for a probed, syncing array: its level, stripe-cache devices, whether
    a member spins, and the ceiling its members allow."""
    action = array.sync.action if array.sync is not None else "resync"
    ceiling, why = boost_ceiling(machine, array, action)
    return plan_boost(
        read_text,
        array.name,
        action,
        level=array.level,
        members=stripe_cache_devices(array),
        store=store,
        rotational=members_rotational(machine, array.name),
        max_kib=ceiling,
        max_why=why,
    )


def _is_local(text: str | None) -> bool:
    """md shows an array's own sync_speed_min/max as "<n> (local)", the system's as "(system)"."""
    return text is not None and text.strip().endswith("(local)")


def plan_boost(
    read_text: ReadText,
    array: str,
    action: str,
    *,
    level: str | None,
    members: int,
    store: BoostStore,
    rotational: bool | None = None,
    raise_min: bool | None = None,
    min_kib: int = DEFAULT_BOOST_MIN_KIB,
    max_kib: int = DEFAULT_BOOST_MAX_KIB,
    max_why: str = "",
    stripe_cache: int | None = DEFAULT_BOOST_STRIPE_CACHE,
    now: float | None = None,
) -> tuple[Plan, BoostRecord]:
    """The plan that raises the limits, and the record that will undo it.

    The limits bound the sync's progress rate (md.c ``md_do_sync()``; see
    :mod:`app.model.sync_model`), and an array's own ``md/sync_speed_min/max`` ("(local)")
    win over the system's ``dev.raid.speed_limit_*`` (md.c ``speed_min()``/``speed_max()``):
    where the array has its own, those are raised and restored, else the sysctls. ``max_kib``:
    the ceiling to set (:func:`boost_ceiling`: what the members can do), ``max_why`` says why.

    ``members``: the devices the stripe cache holds a page for
    (:func:`app.plans.geometry.stripe_cache_devices`), for its memory cost. A stripe cache
    whose memory is more than 1/8 of MemAvailable (``/proc/meminfo``, read through
    ``read_text``), or whose memory cannot be checked, is not raised; the notes give the figures.

    ``rotational``: whether any member is a spinning disk (``None``: not known). Unless
    ``raise_min`` says otherwise, the min limit is raised only on arrays known to be all
    SSD/NVMe; on others the plan raises the max and the stripe cache and its notes say why.

    Global limits already raised by another boost keep *that* boost's previous values, so the
    values from before any boost are the ones restored when the last boosted sync ends. A second
    boost of the same array keeps that array's own earlier previous values too.
    """
    reader = read_text
    inherited: dict[str, str] = {}
    for r in store.records:
        if r.array != array:
            inherited.update({k: v for k, v in r.previous.items() if Setting.parse(k).is_global})
    own = store.active_for(array)
    if own is not None:
        inherited.update(own.previous)

    def limit_setting(which: str, key: str) -> Setting:
        path = array_limit_path(array, which)
        if _is_local(reader(path)) or f"sysfs:{path}" in inherited:
            return Setting("sysfs", path)
        return Setting("sysctl", key)

    min_setting = limit_setting("min", SYSCTL_MIN)
    max_setting = limit_setting("max", SYSCTL_MAX)
    whose = f"{array}'s own " if max_setting.kind == "sysfs" else ""
    min_kib = min(min_kib, max_kib)
    if raise_min is None:
        raise_min = rotational is False
    notes: list[str] = []
    wanted: list[tuple[Setting, str, str]] = []
    if raise_min:
        wanted.append(
            (
                min_setting,
                str(min_kib),
                f"raise {array}'s own guaranteed sync speed (KiB/s of progress)"
                if min_setting.kind == "sysfs"
                else "raise the guaranteed sync speed (KiB/s of progress)",
            )
        )
    wanted.append(
        (
            max_setting,
            str(max_kib),
            f"raise {whose}sync speed ceiling (KiB/s of progress"
            + (f"; {max_why})" if max_why else ")"),
        )
    )
    cache = bool(stripe_cache and level in levels.PARITY)
    if cache and stripe_cache:
        cost = stripe_cache_memory(stripe_cache, members)
        figures = f"{stripe_cache} entries × 4 KiB × {members} devices = {human_bytes(cost)}"
        avail = mem_available_bytes(reader(MEMINFO))
        if avail is None:
            cache = False
            notes.append(
                f"stripe cache not raised: MemAvailable could not be read from {MEMINFO}, so "
                f"its memory ({figures}) cannot be checked against RAM"
            )
        elif cost > avail // STRIPE_CACHE_MEM_SHARE:
            budget = avail // STRIPE_CACHE_MEM_SHARE
            over = (
                f"{figures} is more than 1/{STRIPE_CACHE_MEM_SHARE} of MemAvailable "
                f"({human_bytes(avail)} / {STRIPE_CACHE_MEM_SHARE} = {human_bytes(budget)})"
            )
            fit = fitting_stripe_cache(stripe_cache, members, budget)
            now = _int_or_none(reader(stripe_cache_path(array)))
            if fit is not None and now is not None and fit > now:
                fit_cost = stripe_cache_memory(fit, members)
                notes.append(f"stripe cache raised to {fit} only ({human_bytes(fit_cost)}): {over}")
                wanted.append(
                    (
                        Setting("sysfs", stripe_cache_path(array)),
                        str(fit),
                        f"larger stripe cache speeds RAID-4/5/6 rebuilds (costs "
                        f"{fit_cost // (1024 * 1024)} MiB RAM: the most that fits)",
                    )
                )
            else:
                cache = False
                notes.append(f"stripe cache not raised: {over}")
        else:
            wanted.append(
                (
                    Setting("sysfs", stripe_cache_path(array)),
                    str(stripe_cache),
                    f"larger stripe cache speeds RAID-4/5/6 rebuilds (costs {cost // (1024 * 1024)} MiB RAM)",
                )
            )
    if not raise_min:
        if rotational is None:
            notes.append(
                "whether the members are SSDs is not known, so the min sync speed is left "
                "alone: raising it starves foreground I/O on rotational disks"
            )
        else:
            notes.append(ROTATIONAL_MIN_NOTE.format(cache=" and the stripe cache" if cache else ""))
    elif rotational:
        notes.append(
            "the min sync speed is raised as asked although some member is rotational: "
            "foreground I/O on this array will be starved until the sync ends"
        )

    previous: dict[str, str] = {}
    applied: dict[str, str] = {}
    steps: list[Step] = []
    warnings: list[str] = []
    for setting, value, why in wanted:
        key = setting.as_str()
        current = _read_int(reader, setting.path)
        if key in inherited:
            previous[key] = inherited[key]
        elif current is not None:
            previous[key] = current
        else:
            warnings.append(f"cannot read {setting.path}: it will not be changed")
            continue
        if current is not None and int(current) >= int(value):
            continue  # already at least as high: leave it, but still restore nothing we didn't change
        applied[key] = value
        steps.append(setting.step(value, f"{why}: {current} → {value}"))
    # Only restore what this boost changed (or what an earlier boost changed and we inherit).
    previous = {k: v for k, v in previous.items() if k in applied or k in inherited}
    record = BoostRecord(array, action, time.time() if now is None else now, previous, applied)
    plan = Plan(
        title=f"Boost the {action} of {array} (restored automatically when it ends)",
        steps=tuple(steps),
        target=array,
        warnings=tuple(warnings),
        notes=tuple(notes),
        kind="boost",
        params={"array": array, "action": action},
    )
    return plan, record


def restore_plan(record: BoostRecord, store: BoostStore) -> Plan:
    """Steps that put back what ``record`` changed. Global limits stay raised while another
    boosted sync still runs; they are then restored by that one."""
    others = [r for r in store.records if r.array != record.array]
    steps = []
    for key, value in sorted(record.previous.items()):
        setting = Setting.parse(key)
        if setting.is_global and any(key in r.applied or key in r.previous for r in others):
            continue
        steps.append(setting.step(value, f"restore {setting.key} to {value} (before the boost)"))
    return Plan(
        title=f"Restore the settings changed for the {record.action} of {record.array}",
        steps=tuple(steps),
        target=record.array,
        kind="boost-restore",
        params={"array": record.array},
    )


def due_restores(store: BoostStore, sample: LiveSample) -> list[BoostRecord]:
    """Boosts whose sync is over: the array is idle, runs a different action, or is gone."""
    records = store.records
    if not records:  # the common case: no map of every array each second
        return []
    wanted = {r.array for r in records}
    live = {a.name: a for a in sample.arrays if a.name in wanted}
    out = []
    for r in records:
        a = live.get(r.array)
        if a is None or a.sync is None or not a.sync.active or a.sync.action != r.action:
            out.append(r)
    return out


def boosted_arrays(store: BoostStore) -> Iterable[str]:
    return (r.array for r in store.records)


def fitting_stripe_cache(wanted: int, members: int, budget: int) -> int | None:
    """The largest power of two <= ``wanted`` whose memory (entries x 4 KiB x devices, raid5.c)
    fits ``budget`` bytes and md accepts (>= 17 entries); None when none does."""
    n = 1 << (max(wanted, 1).bit_length() - 1)
    while n >= STRIPE_CACHE_RANGE[0]:
        if stripe_cache_memory(n, members) <= budget:
            return n
        n //= 2
    return None


def _int_or_none(text: str | None) -> int | None:
    t = (text or "").strip()
    return int(t) if t.isdigit() and len(t) <= 9 else None
