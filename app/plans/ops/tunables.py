"""Values written to the running kernel: md's sysfs attributes of one array, md's system-wide
speed limits (``sysctl``), a disk's I/O scheduler. None of them survives a reboot (the files of
``app.plans.ops.files`` make them permanent)."""

from __future__ import annotations

from dataclasses import dataclass

from app.plans.ops.base import DISK_NAME, MD_NAME, Op, OpError, number, shown
from app.plans.shapes import INT_MAX, SPEED_LIMIT_RANGE

SYNC_ACTIONS = ("check", "repair", "idle", "frozen")
SCHEDULERS = ("none", "mq-deadline", "bfq", "kyber", "deadline", "cfq", "noop")


def _md(name: str, what: str) -> str:
    if not isinstance(name, str) or MD_NAME.fullmatch(name) is None:
        raise OpError(f"{what}: {shown(name)} is not an md array's kernel name")
    return name


def _bound(which: str, what: str) -> None:
    if which not in ("min", "max"):
        raise OpError(f"{what}: {shown(which)} is neither min nor max")


@dataclass(frozen=True, slots=True)
class _MdAttr(Op):
    md: str  # the array's kernel name (md127)

    def attr(self) -> str:  # pragma: no cover - each subclass names its attribute
        raise NotImplementedError

    def value(self) -> str:  # pragma: no cover
        raise NotImplementedError

    @property
    def path(self) -> str:
        return f"/sys/block/{self.md}/md/{self.attr()}"

    def argv(self) -> tuple[str, ...]:
        return ("tee", self.path)

    def stdin(self) -> str:
        return f"{self.value()}\n"

    def array(self) -> str:
        return f"/dev/{self.md}"


@dataclass(frozen=True, slots=True)
class SetSyncAction(_MdAttr):
    """``md/sync_action``: check, repair, idle (stop what runs), frozen (nothing starts)."""

    KIND = "md-sync-action"
    action: str = "idle"

    def __post_init__(self) -> None:
        _md(self.md, "sync_action")
        if self.action not in SYNC_ACTIONS:
            raise OpError(f"sync_action: {shown(self.action)} is not a value raidman writes")

    def attr(self) -> str:
        return "sync_action"

    def value(self) -> str:
        return self.action


@dataclass(frozen=True, slots=True)
class SetArraySpeed(_MdAttr):
    """``md/sync_speed_min|max`` of one array in KiB/s, or ``system`` (back to the global)."""

    KIND = "md-sync-speed"
    bound: str = "max"  # min | max
    kib_s: int | None = None  # None: "system"

    def __post_init__(self) -> None:
        _md(self.md, "sync_speed")
        _bound(self.bound, "sync_speed")
        if self.kib_s is not None:
            number(self.kib_s, f"sync_speed_{self.bound}", *SPEED_LIMIT_RANGE)

    def attr(self) -> str:
        return f"sync_speed_{self.bound}"

    def value(self) -> str:
        return "system" if self.kib_s is None else str(self.kib_s)


@dataclass(frozen=True, slots=True)
class SetStripeCache(_MdAttr):
    """``md/stripe_cache_size`` (RAID-4/5/6): entries of 4 KiB per member."""

    KIND = "md-stripe-cache"
    entries: int = 256

    def __post_init__(self) -> None:
        _md(self.md, "stripe_cache_size")
        number(self.entries, "stripe_cache_size", 17, 32768)

    def attr(self) -> str:
        return "stripe_cache_size"

    def value(self) -> str:
        return str(self.entries)


@dataclass(frozen=True, slots=True)
class SetSyncMin(_MdAttr):
    """``md/sync_min``: the sector a check begins at (md.c min_sync_store; the routine's
    windows resume there)."""

    KIND = "md-sync-min"
    sector: int = 0

    def __post_init__(self) -> None:
        _md(self.md, "sync_min")
        number(self.sector, "sync_min", 0, 2**64 - 1)

    def attr(self) -> str:
        return "sync_min"

    def value(self) -> str:
        return str(self.sector)


@dataclass(frozen=True, slots=True)
class SetSystemSpeed(Op):
    """``sysctl -w dev.raid.speed_limit_min|max=N`` (KiB/s per device, every array without
    its own limit; a C int: drivers/md/md.c raid_table)."""

    KIND = "md-speed-limit"
    bound: str  # min | max
    kib_s: int

    def __post_init__(self) -> None:
        _bound(self.bound, "sysctl dev.raid.speed_limit")
        number(self.kib_s, f"dev.raid.speed_limit_{self.bound}", 1, INT_MAX)

    @property
    def key(self) -> str:
        return f"dev.raid.speed_limit_{self.bound}"

    def argv(self) -> tuple[str, ...]:
        return ("sysctl", "-w", f"{self.key}={self.kib_s}")


@dataclass(frozen=True, slots=True)
class SetScheduler(Op):
    """``queue/scheduler`` of a disk."""

    KIND = "disk-scheduler"
    disk: str
    scheduler: str

    def __post_init__(self) -> None:
        if not isinstance(self.disk, str) or DISK_NAME.fullmatch(self.disk) is None:
            raise OpError(f"scheduler: {shown(self.disk)} is not a disk's kernel name")
        if self.scheduler not in SCHEDULERS:
            raise OpError(f"scheduler: {shown(self.scheduler)} is not a scheduler raidman sets")

    def argv(self) -> tuple[str, ...]:
        return ("tee", f"/sys/block/{self.disk}/queue/scheduler")

    def stdin(self) -> str:
        return f"{self.scheduler}\n"

    def names(self) -> tuple[str, ...]:
        return (self.disk,)
