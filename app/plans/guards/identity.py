"""Which physical disks a plan was made for, and whether they are still the ones under those names.

A kernel name is not an identity: after a reboot or a hot-swap ``sdb`` may be another disk. When
a plan is built (``raidman plan``, the TUI's wizards and previews) ``record_disks`` notes the
serial and WWN (from the probe's ``Disk``) of every whole disk a step writes to (for a
partition: its disk). ``identity_problems`` compares them with the disk now under that name;
``apply`` checks every recorded disk before asking for confirmation, and the executor checks a
step's disks again right before that step (``app.plans.guards.recheck``). A mismatch refuses with both
identities named.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from app.model import Machine
from app.plans.guards.eligibility import disk_of
from app.plans.guards.plan_devices import argv_devices
from app.plans.guards.preflight import strip_dev
from app.plans.plan import DiskIdentity, Plan, escape_controls


def disks_written(plan: Plan, machine: Machine) -> tuple[str, ...]:
    """The whole disks (kernel names on ``machine``) the plan's steps overwrite, write or erase
    the signatures of (a saved wipe plan must erase the disk it was made for, not whatever disk
    has that name later: issue 37), and those a step tests or lights (``Op.identifies``: a
    self-test or a locate blink must reach the disk it was planned for too)."""
    dev = argv_devices(plan, machine)
    out: dict[str, None] = {}
    shown = [strip_dev(d) for s in plan.steps for d in s.op.identifies()]
    for name in (*dev.overwrites, *dev.written, *dev.erased, *shown):
        disk = disk_of(machine, name)
        if machine.disk(disk) is not None:
            out[disk] = None
    return tuple(out)


def identity_of(machine: Machine, name: str) -> DiskIdentity | None:
    d = machine.disk(name)
    return None if d is None else DiskIdentity(d.name, d.serial, d.wwn)


def record_disks(plan: Plan, machine: Machine) -> Plan:
    """``plan`` with the identity of every disk it writes to, as ``machine`` shows them now."""
    ids = (identity_of(machine, n) for n in disks_written(plan, machine))
    return replace(plan, disks=tuple(i for i in ids if i is not None))


def identity_problems(
    plan: Plan, machine: Machine, names: Iterable[str] | None = None
) -> list[str]:
    """Why the disks under the plan's recorded names (or only ``names``) are not the disks it
    was made for; empty when they are. A disk the plan writes to without a recorded identity
    is a problem too (an entry deleted from the file)."""
    if plan.disks is None:
        return ["the plan records no disk identities (made by an older raidman): re-plan it"]
    recorded = {d.name: d for d in plan.disks}
    wanted = list(dict.fromkeys(names)) if names is not None else list(recorded)
    if names is None:
        wanted += [n for n in disks_written(plan, machine) if n not in recorded]
    out = []
    for name in wanted:
        was = recorded.get(name)
        now = identity_of(machine, name)
        if was is None:
            if now is not None:
                out.append(
                    f"the plan writes to {escape_controls(now.describe())} but records no "
                    "identity for it: re-plan it"
                )
            continue
        if now is None:
            out.append(
                f"{escape_controls(was.describe())}, which the plan was made for, is not on "
                "the machine now: re-plan it"
            )
        elif (now.serial, now.wwn) != (was.serial, was.wwn):
            out.append(
                f"/dev/{escape_controls(name)} is now {escape_controls(now.describe())}, but the "
                f"plan was made for {escape_controls(was.describe())}: another disk has that "
                "name now (a reboot or a swap); re-plan it"
            )
    return out
