"""What every operation is: one step of a plan as typed data, its argv rendered from it.

An operation (``Op``) names its fields (the array, the device, the value written); it checks
them when it is made, whoever makes it — a builder, or the decoder reading a plan file
(``app.plans.ops.decode``, the only module that reads an argv by position). Everything that
judges a step (allowlist, pre-flight, what it destroys, disk identities, consequences, the
executor) reads the operation's fields and the answers below, never the argv:

* ``argv()`` / ``stdin()`` / ``stdin_from()``: what runs (rendered; never parsed back here);
* ``destroys()``: the path whose content the step overwrites (None: it overwrites nothing);
* ``overwrites()``: devices whose content is lost (pre-flight checks they are unused);
* ``writes()``: devices written but not overwritten (a re-added member, a replacement): their
  health is checked, not their emptiness;
* ``array()``: the md array the step works on; ``stops()``: the array it stops;
  ``erases()``: devices whose signatures it erases; ``creates()``: what it makes (an array, an
  LV: nothing on it to lose); ``grows()``: an ``mdadm --grow`` (md answers EBUSY while a sync
  runs); ``identifies()``: disks it reads or lights but does not write (a self-test, a blink):
  they must still be the disks the plan was made for (serial/WWN); ``names()``: every device
  path it names.

Paths are as the argv names them (``/dev/md/127``, ``/dev/sdb1``); resolving them to kernel
names on a machine is the guards' and the staging's work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from app.escape import escape_controls
from app.plans.geometry import PlanError


class OpError(PlanError):
    """An operation whose fields are not ones raidman plans; ``str()`` is one line saying why.
    A builder handed such a value (a device name from the machine that is no plain kernel name)
    refuses its plan with it, as any other PlanError."""


_NAME = r"[A-Za-z0-9][A-Za-z0-9._+:-]{0,127}"  # a kernel device name (nvme0n1, sda1, md127, dm-0)
LVM = r"[A-Za-z0-9+_.][A-Za-z0-9+_.-]{0,127}"  # LVM's own rule (no leading '-')
DEV = re.compile(rf"/dev/{_NAME}")
MD_DEV = re.compile(
    r"/dev/md[0-9]{1,9}|/dev/md_[A-Za-z0-9_.-]{1,64}|/dev/md/[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}"
)
FS_DEV = re.compile(
    rf"/dev/{_NAME}|/dev/md/[A-Za-z0-9_][A-Za-z0-9_.:-]{{0,63}}|/dev/(mapper/)?{LVM}(/{LVM})?"
)
LVM_NAME = re.compile(LVM)
MD_NAME = re.compile(r"md[0-9]{1,9}|md_[A-Za-z0-9_.-]{1,64}")  # a kernel name in /sys/block
DISK_NAME = re.compile(_NAME)


def shown(value: object) -> str:
    """A value for an error message: escaped and cut short."""
    return repr(escape_controls(str(value))[:120])


def device(path: str, what: str, *, md: bool = False, fs: bool = False) -> str:
    """``path`` when it is a device path of the kind asked for (``md``: an array's path;
    ``fs``: anything a filesystem goes on, an LV's path too), else OpError naming ``what``."""
    pattern = MD_DEV if md else FS_DEV if fs else DEV
    ok = isinstance(path, str) and pattern.fullmatch(path) is not None
    if not ok or ".." in path.split("/"):
        kind = "an md device path" if md else "a device path"
        raise OpError(f"{what}: {shown(path)} is not {kind}")
    return path


def number(value: int, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise OpError(f"{what}: {shown(value)} is not a number from {lo} to {hi}")
    return value


def token(value: str, what: str, pattern: str) -> str:
    if not isinstance(value, str) or re.fullmatch(pattern, value) is None:
        raise OpError(f"{what}: {shown(value)} is not one raidman plans")
    return value


@dataclass(frozen=True, slots=True)
class Op:
    """One operation; subclasses are frozen dataclasses with named fields (see the module doc)."""

    KIND: ClassVar[str] = ""

    def argv(self) -> tuple[str, ...]:  # pragma: no cover - every operation renders its own
        raise NotImplementedError

    def program(self, *, producer: bool = False) -> str:
        """The program the step runs, or the one feeding its stdin (for messages)."""
        feeder = self.stdin_from() if producer else None
        return (feeder or self.argv())[0]

    def stdin(self) -> str | None:
        return None

    def stdin_from(self) -> tuple[str, ...] | None:
        return None

    def destroys(self) -> str | None:
        return None

    def overwrites(self) -> tuple[str, ...]:
        d = self.destroys()
        return (d,) if d is not None else ()

    def writes(self) -> tuple[str, ...]:
        return ()

    def array(self) -> str | None:
        return None

    def stops(self) -> str | None:
        return None

    def erases(self) -> tuple[str, ...]:
        return ()

    def creates(self) -> str | None:
        return None

    def grows(self) -> bool:
        return False

    def identifies(self) -> tuple[str, ...]:
        return ()

    def accepts(self, returncode: int) -> bool:
        """Whether the program ended well: exit status 0, unless the operation knows better."""
        return returncode == 0

    def names(self) -> tuple[str, ...]:
        """Every device path (and sysfs kernel name) the step names."""
        out = [*self.overwrites(), *self.writes(), *self.erases(), *self.identifies()]
        for x in (self.array(), self.stops(), self.creates()):
            if x is not None:
                out.append(x)
        return tuple(dict.fromkeys(out))


@dataclass(frozen=True, slots=True)
class ErasesDevice(Op):
    """An operation that erases the whole of ``device`` (its signatures, or every block): it
    destroys and erases it and overwrites nothing it then uses (``wipefs -a``, a retired
    disk's sanitize or secure erase)."""

    device: str

    def destroys(self) -> str:
        return self.device

    def overwrites(self) -> tuple[str, ...]:
        return ()

    def erases(self) -> tuple[str, ...]:
        return (self.device,)
