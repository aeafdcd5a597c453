"""md's own operations: create an array, put members in and take them out, grow it, move its
bitmap, stop, assemble and retire it, and test its alerts (all ``mdadm``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from app.model import levels
from app.model.md_names import level_name
from app.plans.ops.base import MD_DEV, Op, OpError, device, number, shown, token
from app.plans.shapes import created_file_problem

METADATA = ("0.9", "0.90", "1.0", "1.1", "1.2", "default")
_SIZE = r"[0-9]{1,9}[KMG]?"
_UUID = r"[0-9a-fA-F]{8}(?::[0-9a-fA-F]{8}){3}"


def _bitmap(value: str, what: str) -> str:
    if value in ("internal", "none"):
        return value
    bad = created_file_problem(value) if isinstance(value, str) else "not a path"
    if bad is not None:
        raise OpError(f"{what}: bitmap file {bad}")
    return value


@dataclass(frozen=True, slots=True)
class CreateArray(Op):
    """``mdadm --create PATH --level=L --raid-devices=N [--spare-devices=S] [--chunk=C]
    [--layout=X] [--bitmap=B] [--metadata=M] [--name=NAME] [--run] [--assume-clean] DEVS``
    (the options in this order; a plan file's order is free, ``app.plans.ops.decode``)."""

    KIND = "md-create"
    path: str
    level: str
    devices: tuple[str, ...]
    spares: tuple[str, ...] = ()
    chunk: str | None = None
    layout: str | None = None
    bitmap: str | None = None
    metadata: str | None = None
    name: str | None = None
    run: bool = False
    assume_clean: bool = False
    # where the options go: before the level (the benchmark's order), or after it
    run_first: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        device(self.path, "mdadm --create", md=True)
        lvl = level_name(self.level) if re.fullmatch(r"[a-z0-9]{1,8}", self.level or "") else None
        if lvl is None or lvl not in levels.LEVELS:
            raise OpError(f"mdadm --create: level {shown(self.level)} is not one raidman plans")
        if not self.devices:
            raise OpError("mdadm --create: no member devices")
        number(len(self.devices), "mdadm --create: --raid-devices", 1, 999)
        number(len(self.spares), "mdadm --create: --spare-devices", 0, 999)
        every = (*self.devices, *self.spares)
        for d in every:
            device(d, "mdadm --create")
        if len(set(every)) != len(every):
            raise OpError("mdadm --create: a device is named twice")
        if self.chunk is not None:
            token(self.chunk, "mdadm --create: --chunk", _SIZE)
        if self.layout is not None:
            token(self.layout, "mdadm --create: --layout", r"[a-z0-9-]{1,24}")
        if self.bitmap is not None:
            _bitmap(self.bitmap, "mdadm --create")
        if self.metadata is not None and self.metadata not in METADATA:
            raise OpError(f"mdadm --create: --metadata={shown(self.metadata)} is not planned")
        if self.name is not None:
            token(self.name, "mdadm --create: --name", r"[A-Za-z0-9_.:-]{1,32}")

    def options(self) -> tuple[str, ...]:
        head = [f"--level={self.level}", f"--raid-devices={len(self.devices)}"]
        if self.spares:
            head.append(f"--spare-devices={len(self.spares)}")
        if self.chunk is not None:
            head.append(f"--chunk={self.chunk}")
        if self.layout is not None:
            head.append(f"--layout={self.layout}")
        if self.bitmap is not None:
            head.append(f"--bitmap={self.bitmap}")
        meta = [f"--metadata={self.metadata}"] if self.metadata is not None else []
        name = [f"--name={self.name}"] if self.name is not None else []
        run = ["--run"] if self.run else []
        clean = ["--assume-clean"] if self.assume_clean else []
        if self.run_first:  # app.plans.builders.benchmark's order
            return (*run, *meta, *head, *name, *clean)
        return (*head, *meta, *name, *run, *clean)

    def argv(self) -> tuple[str, ...]:
        return ("mdadm", "--create", self.path, *self.options(), *self.devices, *self.spares)

    def destroys(self) -> str:
        return self.path

    def overwrites(self) -> tuple[str, ...]:
        return (*self.devices, *self.spares)

    def creates(self) -> str:
        return self.path

    def names(self) -> tuple[str, ...]:
        return (self.path, *self.devices, *self.spares)

    @property
    def raid_devices(self) -> int:
        return len(self.devices)


@dataclass(frozen=True, slots=True)
class _Member(Op):
    array_path: str
    device: str
    VERB: ClassVar[str] = ""

    def __post_init__(self) -> None:
        device(self.array_path, f"mdadm --{self.verb()}", md=True)
        device(self.device, f"mdadm --{self.verb()}")

    def verb(self) -> str:
        return self.VERB

    def argv(self) -> tuple[str, ...]:
        return ("mdadm", self.array_path, f"--{self.verb()}", self.device)

    def array(self) -> str:
        return self.array_path

    def names(self) -> tuple[str, ...]:
        return (self.array_path, self.device)


@dataclass(frozen=True, slots=True)
class AddMember(_Member):
    """``mdadm ARRAY --add DEV`` (``spare``: ``--add-spare``): a new superblock on DEV; md
    recovers onto it at once when a slot is vacant (md.c remove_and_add_spares), whichever
    option added it."""

    KIND = "md-add"
    spare: bool = False

    def verb(self) -> str:
        return "add-spare" if self.spare else "add"

    def destroys(self) -> str:
        return self.device


@dataclass(frozen=True, slots=True)
class FailMember(_Member):
    """``mdadm ARRAY --fail DEV``."""

    KIND = "md-fail"
    VERB = "fail"


@dataclass(frozen=True, slots=True)
class RemoveMember(_Member):
    """``mdadm ARRAY --remove DEV`` (a faulty or spare member; its superblock stays)."""

    KIND = "md-remove"
    VERB = "remove"


@dataclass(frozen=True, slots=True)
class ReAddMember(_Member):
    """``mdadm ARRAY --re-add DEV``: a former member back in its slot (with a bitmap, only the
    chunks written meanwhile are resynced)."""

    KIND = "md-re-add"
    VERB = "re-add"

    def writes(self) -> tuple[str, ...]:
        return (self.device,)


@dataclass(frozen=True, slots=True)
class ReplaceMember(Op):
    """``mdadm ARRAY --replace OLD --with NEW``: md copies OLD onto NEW (already a spare) while
    OLD stays active, then marks OLD faulty."""

    KIND = "md-replace"
    array_path: str
    old: str
    new: str

    def __post_init__(self) -> None:
        device(self.array_path, "mdadm --replace", md=True)
        device(self.old, "mdadm --replace")
        device(self.new, "mdadm --replace --with")
        if self.old == self.new:
            raise OpError("mdadm --replace: a device replaced with itself")

    def argv(self) -> tuple[str, ...]:
        return ("mdadm", self.array_path, "--replace", self.old, "--with", self.new)

    def writes(self) -> tuple[str, ...]:
        return (self.new,)

    def array(self) -> str:
        return self.array_path

    def names(self) -> tuple[str, ...]:
        return (self.array_path, self.old, self.new)


@dataclass(frozen=True, slots=True)
class GrowDevices(Op):
    """``mdadm --grow ARRAY --raid-devices=N [--backup-file=F]``: a reshape (RAID-1: a new
    mirror resynced, or mirrors dropped)."""

    KIND = "md-grow"
    array_path: str
    raid_devices: int
    backup_file: str | None = None

    def __post_init__(self) -> None:
        device(self.array_path, "mdadm --grow", md=True)
        number(self.raid_devices, "mdadm --grow: --raid-devices", 1, 999)
        if self.backup_file is not None:
            bad = created_file_problem(self.backup_file)
            if bad is not None:
                raise OpError(f"mdadm --grow: --backup-file {bad}")

    def argv(self) -> tuple[str, ...]:
        extra = (f"--backup-file={self.backup_file}",) if self.backup_file is not None else ()
        return ("mdadm", "--grow", self.array_path, f"--raid-devices={self.raid_devices}", *extra)

    def array(self) -> str:
        return self.array_path

    def grows(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class SetBitmap(Op):
    """``mdadm --grow ARRAY --bitmap=internal|none|FILE [--bitmap-chunk=NK]`` (md changes a
    bitmap only by removing it first: a plan that moves one has two of these)."""

    KIND = "md-bitmap"
    array_path: str
    location: str
    chunk_kib: int | None = None

    def __post_init__(self) -> None:
        device(self.array_path, "mdadm --grow --bitmap", md=True)
        _bitmap(self.location, "mdadm --grow")
        if self.chunk_kib is not None:
            if self.location == "none":
                raise OpError("mdadm --grow: --bitmap-chunk needs a bitmap")
            number(self.chunk_kib, "mdadm --grow: --bitmap-chunk (KiB)", 4, 999_999_999)

    def argv(self) -> tuple[str, ...]:
        extra = (f"--bitmap-chunk={self.chunk_kib}K",) if self.chunk_kib is not None else ()
        return ("mdadm", "--grow", self.array_path, f"--bitmap={self.location}", *extra)

    def array(self) -> str:
        return self.array_path

    def grows(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class TestAlerts(Op):
    """``mdadm --monitor --scan --oneshot --test``: one TestMessage per array through
    mdadm.conf's MAILADDR/PROGRAM."""

    KIND = "md-test-alerts"

    def argv(self) -> tuple[str, ...]:
        return ("mdadm", "--monitor", "--scan", "--oneshot", "--test")


@dataclass(frozen=True, slots=True)
class StopArray(Op):
    """``mdadm --stop ARRAY`` (md.c do_md_stop refuses an array still open)."""

    KIND = "md-stop"
    array_path: str

    def __post_init__(self) -> None:
        device(self.array_path, "mdadm --stop", md=True)

    def argv(self) -> tuple[str, ...]:
        return ("mdadm", "--stop", self.array_path)

    def stops(self) -> str:
        return self.array_path


@dataclass(frozen=True, slots=True)
class Assemble(Op):
    """``mdadm --assemble --scan`` (``path`` None), or one array: ``mdadm --assemble PATH
    --uuid=UUID``."""

    KIND = "md-assemble"
    path: str | None = None
    uuid: str | None = None

    def __post_init__(self) -> None:
        if (self.path is None) != (self.uuid is None):
            raise OpError("mdadm --assemble: an array path with its --uuid, or --scan")
        if self.path is not None:
            if MD_DEV.fullmatch(self.path) is None or self.path.startswith("/dev/md_"):
                raise OpError(f"mdadm --assemble: {shown(self.path)} is not an md device path")
            token(self.uuid or "", "mdadm --assemble: --uuid", _UUID)

    def argv(self) -> tuple[str, ...]:
        if self.path is None:
            return ("mdadm", "--assemble", "--scan")
        return ("mdadm", "--assemble", self.path, f"--uuid={self.uuid}")

    def creates(self) -> str | None:
        return self.path


@dataclass(frozen=True, slots=True)
class ZeroSuperblock(Op):
    """``mdadm --zero-superblock DEV...``: the md superblocks erased (the device no longer
    belongs to an array)."""

    KIND = "md-zero-superblock"
    devices: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.devices:
            raise OpError("mdadm --zero-superblock: no device")
        number(len(self.devices), "mdadm --zero-superblock: devices", 1, 64)
        for d in self.devices:
            device(d, "mdadm --zero-superblock")
        if len(set(self.devices)) != len(self.devices):
            raise OpError("mdadm --zero-superblock: a device is named twice")

    def argv(self) -> tuple[str, ...]:
        return ("mdadm", "--zero-superblock", *self.devices)

    def destroys(self) -> str:
        return self.devices[0]

    def overwrites(self) -> tuple[str, ...]:
        return ()

    def erases(self) -> tuple[str, ...]:
        return self.devices
