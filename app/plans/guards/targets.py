"""Whether the arrays and members a plan's operations name are on the machine it is about to run on.

A member or sync plan saved on one machine (a demo's md127 and its nvme1n1) and applied on
another passed ``apply --dry-run``'s checks: pre-flight looks at the devices a plan overwrites,
and a fail/remove/re-add overwrites nothing. Here every member operation, every grow and every
md sysfs write is checked: the array must exist (or be made by an earlier step of the plan), a
device failed or removed must be its member, a device added, re-added or put in by a replace
must exist. From the operations alone, never the plan's params."""

from __future__ import annotations

from app.model import Machine
from app.plans import ops
from app.plans.guards.in_use import Issue
from app.plans.guards.plan_devices import resolve_device
from app.plans.plan import Plan


def missing_targets(plan: Plan, machine: Machine) -> list[Issue]:
    out: list[Issue] = []
    created: set[str] = set()

    def array_of(path: str) -> str | None:
        name = resolve_device(machine, path)
        if machine.array(name) is not None or path in created or name in created:
            return name
        out.append(Issue("unknown", name, "no such md array on this machine", "no such array"))
        return None

    for step in plan.steps:
        op = step.op
        if isinstance(op, ops.CreateArray):
            created.add(op.path)
            continue
        path = op.array()
        if path is None:
            continue
        name = array_of(path)
        a = machine.array(name) if name is not None else None
        members: tuple[str, ...]
        devices: tuple[str, ...]
        if isinstance(op, (ops.FailMember, ops.RemoveMember)):
            members, devices = (op.device,), ()
        elif isinstance(op, (ops.AddMember, ops.ReAddMember)):
            members, devices = (), (op.device,)
        elif isinstance(op, ops.ReplaceMember):
            members, devices = (op.old,), (op.new,)
        else:
            continue
        for dev in members:
            d = resolve_device(machine, dev)
            if a is not None and a.member(d) is None:
                out.append(
                    Issue(
                        "unknown", d, f"is not a member of {a.name} on this machine", "not a member"
                    )
                )
            elif a is None and machine.device(d) is None:
                out.append(Issue("unknown", d, "no such block device on this machine"))
        for dev in devices:
            d = resolve_device(machine, dev)
            if machine.device(d) is None:
                out.append(Issue("unknown", d, "no such block device on this machine"))
    return list(dict.fromkeys(out))
