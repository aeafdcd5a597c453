"""``raidman plan assemble``: start an array whose superblocks are on disks but which the kernel
is not running (a stray: app.plans.superblocks), or every array mdadm finds.

One array is named the way an admin knows it (issue 39): its md device (``md127``,
``/dev/md127``, ``/dev/md/127``), the name in its superblock (``oldhost:backup``, or the part
after the host, ``backup``, when no other array has it) or its UUID in any of mdadm's spellings
(``8:8:8:8``, udev/blkid's ``8-4-4-4-12``, 32 hex digits). mdadm names an array created as
``/dev/md127`` "HOST:127" and assembles a numeric name back as md127 (mdadm's util.c
``create_mddev``), so ``md127`` and ``/dev/md/127`` both mean the superblock name ``127``. A name
that fits several arrays (a stray and a running one included) or none is refused in one line
that names what matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.escape import escape_controls
from app.model import Machine, MdArray
from app.plans import ops
from app.plans.builders.persist import mdadm_uuid
from app.plans.geometry import PlanError
from app.plans.ops.base import MD_DEV
from app.plans.outcome.consequences import with_consequences
from app.plans.plan import Plan, Step
from app.plans.superblocks import hex_uuid

MAX_NAME = 200  # characters of --array looked at


@dataclass(frozen=True, slots=True)
class StrayArray:
    """An array whose superblocks are on disks but which is not running (what assemble needs)."""

    uuid: str
    name: str | None = None  # "host:0" from the superblock (untrusted: validated before use)
    devices: tuple[str, ...] = ()


_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}")
_MD_NUMBER = re.compile(r"md([0-9]{1,6})")


def md_path_for(stray: StrayArray) -> str:
    """/dev/md/NAME from the superblock's name (the part after "host:"), when it is a plain name;
    else /dev/md/ + the UUID's first 8 hex digits."""
    short = (stray.name or "").rsplit(":", 1)[-1]
    if not _SAFE_NAME.fullmatch(short):
        short = hex_uuid(stray.uuid)[:8]
    path = f"/dev/md/{short}"
    if not MD_DEV.fullmatch(path):  # pragma: no cover - the two spellings above always match
        raise PlanError(f"cannot name an md device for {stray.uuid}")
    return path


def _name_spellings(name: str | None) -> set[str]:
    """What a superblock name answers to: "host:127" → host:127, 127, /dev/md/127, md127,
    /dev/md127; "host:backup" → host:backup, backup, /dev/md/backup."""
    if not name:
        return set()
    short = name.rsplit(":", 1)[-1]
    out = {name, short, f"/dev/md/{short}"} if short else {name}
    if short.isascii() and short.isdigit():
        out |= {f"md{short}", f"/dev/md{short}"}
    elif _MD_NUMBER.fullmatch(short):
        out |= {f"/dev/{short}", f"/dev/md/{short[2:]}"}
    return out


def _kernel_spellings(kernel: str) -> set[str]:
    """A running array's kernel name: md127 → md127, /dev/md127, /dev/md/127."""
    out = {kernel, f"/dev/{kernel}"}
    m = _MD_NUMBER.fullmatch(kernel)
    if m:
        out.add(f"/dev/md/{m.group(1)}")
    return out


def _answers(want: str, uuid: str | None, spellings: set[str]) -> bool:
    wanted_uuid = mdadm_uuid(want)
    if wanted_uuid is not None:
        return uuid is not None and mdadm_uuid(uuid) == wanted_uuid
    return want in spellings


def _stray_text(s: StrayArray) -> str:
    return f"{escape_controls(s.name or '(no name)')} ({escape_controls(s.uuid)}, not assembled)"


def _running_text(a: MdArray) -> str:
    named = f"{escape_controls(a.array_name)}, " if a.array_name else ""
    return f"{a.name} ({named}running)"


def find_stray(machine: Machine, strays: tuple[StrayArray, ...], array: str) -> StrayArray:
    """The one stray array ``array`` names, else PlanError naming what it matched (or, when it
    matched nothing, the arrays not assembled)."""
    want = array.strip()[:MAX_NAME]
    shown = repr(escape_controls(want))
    if not want:
        raise PlanError("--array is empty: name the array (md127, its name or its UUID)")
    hit = [s for s in strays if _answers(want, s.uuid, _name_spellings(s.name) | {md_path_for(s)})]
    running = [
        a
        for a in machine.arrays
        if _answers(want, a.uuid, _kernel_spellings(a.name) | _name_spellings(a.array_name))
    ]
    if len(hit) == 1 and not running:
        return hit[0]
    if not hit and len(running) == 1:
        raise PlanError(f"{shown} is {_running_text(running[0])}: it is assembled already")
    if hit or running:
        matched = "; ".join([*(_stray_text(s) for s in hit), *map(_running_text, running)])
        raise PlanError(
            f"{shown} names {len(hit) + len(running)} arrays: {matched}; "
            "give the UUID of the one to assemble"
        )
    known = "; ".join(_stray_text(s) for s in strays) or "none"
    raise PlanError(f"no array {shown} among the arrays not assembled (they are: {known})")


def build_assemble(
    machine: Machine, strays: tuple[StrayArray, ...], array: str | None = None
) -> Plan:
    """``mdadm --assemble --scan`` (``array`` None) or one stray array by any of its names."""
    if array is None:
        listed = escape_controls(", ".join(s.name or s.uuid for s in strays)) or "none found now"
        return with_consequences(
            Plan(
                title="assemble every array mdadm finds",
                steps=(
                    Step(
                        ops.Assemble(),
                        f"start every array mdadm.conf or the superblocks describe ({listed})",
                    ),
                ),
                kind="array-assemble",
                params={"scan": True},
            ),
            machine,
        )
    s = find_stray(machine, strays, array)
    path = md_path_for(s)
    uuid = mdadm_uuid(s.uuid)
    if uuid is None:
        raise PlanError(f"the superblock's UUID {escape_controls(s.uuid)!r} is not an md UUID")
    on = f" from {', '.join(s.devices)}" if s.devices else ""
    return with_consequences(
        Plan(
            title=f"assemble {path} ({uuid})",
            steps=(
                Step(
                    ops.Assemble(path, uuid),
                    f"start the array {escape_controls(s.name or uuid)}{on}",
                ),
            ),
            kind="array-assemble",
            params={"uuid": uuid, "devices": list(s.devices)},
        ),
        machine,
    )
