"""Replace a member, in one plan (``raidman plan member replace``), fitted to the member's state:
``mdadm --replace`` while it works, a recovery onto the new device when it is faulty; the new
disk's qualify verdict checked (``qualification``), the old disk's fault LED lit, and the check
to run once the rebuild is done offered with its forecast."""

from __future__ import annotations

import time

from app.model import Machine
from app.plans import ops
from app.plans.builders.check_offer import check_offer
from app.plans.builders.members import _array, _plan, _refuse_role, _take_out, rebuild_cost
from app.plans.disk_facts import EnclosureSlot
from app.plans.geometry import PlanError
from app.plans.guards.eligibility import disk_of
from app.plans.guards.preflight import strip_dev
from app.plans.outcome.staging import Staging
from app.plans.plan import Plan, Step
from app.plans.qualify_verdict import NewDiskCheck

REPLACE_METHODS = ("auto", "hot", "fail-remove-add")


def qualification(c: NewDiskCheck | None) -> tuple[list[str], list[str]]:
    """(notes, warnings) the new disk's kept verdict adds to a replace; PlanError when it has
    none that passed and the admin did not type its serial to use it anyway."""
    if c is None:
        return [], []
    v = c.verdict
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(v.taken_at)) if v is not None else ""
    if v is not None and v.passed:
        notes = [f"{c.disk}'s qualification ({when}): {v.summary()}"]
        if c.peers:
            notes.append(f"compared with its future peers' verdicts: {', '.join(c.peers)}")
        return notes, [f"{c.disk}: {o}" for o in (*v.outliers, *c.outliers)]
    why = "was never qualified" if v is None else f"FAILED its qualification ({when})"
    if v is not None and v.reasons:
        why += f": {v.reasons[0]}"
    what = "serial" if c.serial else "WWN" if c.wwn else "name"
    if c.overridden:
        return [], [f"{c.disk} ({c.override_word}) {why}; used anyway: its {what} was typed"]
    hint = (
        f"qualify it first (raidman plan qualify --device {c.disk}), or type its {what} to use "
        f"it anyway (--unqualified {c.override_word})"
    )
    raise PlanError(f"{c.disk} ({c.ident or 'no serial or WWN'}) {why}: {hint}")


def build_replace(
    machine: Machine,
    array: str,
    old: str,
    new: str,
    *,
    method: str = "auto",
    new_disk: NewDiskCheck | None = None,
    old_slot: EnclosureSlot | None = None,
) -> Plan:
    """Replace this member, in one plan.

    * the member still works (in sync) and the level has redundancy: ``mdadm --replace OLD --with
      NEW`` (NEW added as a spare first): md copies OLD onto NEW while OLD stays active, so the
      array keeps its redundancy during the copy; OLD is marked faulty when done.
    * the member is faulty or rebuilding (or ``method="fail-remove-add"``): fail (unless faulty
      already) + remove + ``--add NEW``: a recovery onto NEW.
    Pre-flight checks NEW (in use, big enough, SMART). ``new_disk``: its kept qualify verdict
    (refused without a passing one unless its serial was typed: ``qualification``);
    ``old_slot``: the old disk's enclosure slot, whose fault LED the plan lights first.

    mdadm(8) ``--replace``: "mark listed devices as requiring replacement. As soon as a spare is
    available, it will be rebuilt and will replace the marked device" (Manage.c
    ``Manage_subdevs``: it sets ``want_replacement`` on the member, which md.c state_store takes
    only for a working member, and raid1/10/5 then copy onto a spare while the member keeps
    serving): a member already faulty has nothing to copy from, so it is fail/remove + add."""
    if method not in REPLACE_METHODS:
        raise PlanError(f"unknown replace method {method!r}; choose {', '.join(REPLACE_METHODS)}")
    a = _array(machine, array)
    o, n = strip_dev(old), strip_dev(new)
    if o == n:
        raise PlanError(f"replace {o} with itself? pick another device (re-add puts it back)")
    mo = a.member(o)
    if mo is None:
        raise PlanError(f"{o} is not a member of {a.name}")
    _refuse_role(a, o, mo, "replace")
    if not a.has_redundancy:
        raise PlanError(f"{a.level} has no redundancy: a member cannot be replaced in place")
    mn = a.member(n)
    if mn is not None and mn.role != "spare":
        raise PlanError(f"{n} is already an active member of {a.name}")
    q_notes, q_warnings = qualification(new_disk)
    old_disk = disk_of(machine, o)
    working = mo.role == "in_sync"
    if method == "hot" and not working:
        raise PlanError(f"{o} is {mo.role}: --replace copies from a working member")
    hot = working and method != "fail-remove-add"
    steps: list[Step] = []
    warnings: list[str] = []
    notes: list[str] = []
    if hot:
        if mn is None:
            steps.append(
                Step(
                    ops.AddMember(a.path, f"/dev/{n}", spare=True),
                    f"add /dev/{n} as a spare: --replace needs the new device in the array first",
                )
            )
        steps.append(
            Step(
                ops.ReplaceMember(a.path, f"/dev/{o}", f"/dev/{n}"),
                f"copy /dev/{o} onto /dev/{n} while {o} stays active (redundancy is kept); "
                f"{o} is marked faulty when done",
            )
        )
        notes.append(rebuild_cost(machine, a, o, how="replace", onto=n))
    else:
        if mn is not None:
            raise PlanError(
                f"{n} is already a spare of {a.name}: md rebuilds onto a spare by itself once "
                f"{o} fails; use fail and remove"
            )
        steps, warnings = _take_out(a, o, mo, "replace")
        add = ops.AddMember(a.path, f"/dev/{n}")
        staged = Staging.of([*(s.op for s in steps), add], machine).arrays.get(a.name)
        placed = staged.member(n) if staged is not None else None
        if placed is not None and placed.role == "spare":
            busy = [m.device for m in staged.members if m.role == "rebuilding"] if staged else []
            why = f"add /dev/{n} to {a.path}: it becomes a spare"
            if busy:
                why += f" ({', '.join(busy)} is already being rebuilt into the vacant slot)"
                notes.append(
                    f"{', '.join(busy)} is already being rebuilt into {o}'s slot: /dev/{n} waits "
                    "as a spare and takes over if another member fails"
                )
        else:
            why = f"add /dev/{n} to {a.path}: recovery onto it starts at once"
        steps.append(Step(add, why))
        if working:
            notes.append(
                f"fail + remove + add by request: mdadm --replace would keep {a.name}'s "
                "redundancy during the copy"
            )
        else:
            notes.append(
                f"{o} is {mo.role}: nothing to copy from it, so the plan is fail/remove + add "
                "(a recovery from the other members), not --replace"
            )
        notes.append(rebuild_cost(machine, a, o, how="recover", onto=n))
    if old_slot is not None:
        steps.insert(
            0,
            Step(
                ops.EnclosureLed(old_slot.enclosure, old_slot.component, "fault", True),
                f"light the fault LED of {old_slot.describe()}, where {o}'s disk sits: the disk "
                "to pull once it is retired",
            ),
        )
        notes.append(
            f"{old_slot.describe()}'s fault LED stays lit until cleared: raidman plan locate "
            f"--device {old_disk} --off"
        )
    offer = check_offer(machine, a.name)
    if offer:
        notes.append(offer)
    notes.append(
        f"then retire the old disk: raidman plan retire --device {old_disk} (takes {o} out of "
        f"{a.name} if it is still listed, erases its superblock and signatures)"
    )
    notes[:0] = q_notes
    warnings += q_warnings
    return _plan(
        machine,
        a,
        "replace",
        steps,
        old=o,
        new=n,
        method="hot" if hot else "fail-remove-add",
        target=n,
        what=f"/dev/{o} with /dev/{n}",
        notes=notes,
        warnings=warnings,
    )
