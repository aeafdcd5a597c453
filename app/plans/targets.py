"""Whether the arrays and members a plan's argv names are on the machine it is about to run on.

A member or sync plan saved on one machine (a demo's md127 and its nvme1n1) and applied on
another passed ``apply --dry-run``'s checks: pre-flight looks at the devices a plan overwrites,
and a fail/remove/re-add overwrites nothing. Here every ``mdadm ARRAY --op DEVICE``, every
``mdadm --grow ARRAY`` and every ``tee /sys/block/mdX/md/...`` is checked: the array must exist
(or be made by an earlier step of the plan), a device failed or removed must be its member, a
device added or re-added must exist. From the argv alone, never the plan's params."""

from __future__ import annotations

import itertools

from app.model import Machine
from app.plans.allowlist import MD_SYSFS
from app.plans.in_use import Issue
from app.plans.plan import Plan
from app.plans.plan_devices import resolve_device

MEMBER_OPS = frozenset({"--fail", "--remove"})  # the device must be the array's member
DEVICE_OPS = frozenset({"--add", "--add-spare", "--re-add", "--replace", "--with"})


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
        argv = step.argv
        if argv[0] == "tee" and len(argv) > 1:
            m = MD_SYSFS.fullmatch(argv[-1])
            if m is not None:
                array_of(f"/dev/{m.group(1)}")
            continue
        if argv[0] != "mdadm" or len(argv) < 3:
            continue
        if argv[1] == "--create":
            created.add(argv[2])
            continue
        if argv[1] == "--grow":  # mdadm --grow [options] ARRAY [options]
            path = next((x for x in argv[2:] if x.startswith("/dev/")), None)
            if path is not None:
                array_of(path)
            continue
        if not argv[1].startswith("/dev/"):
            continue  # --detail, --examine: they read
        name = array_of(argv[1])
        a = machine.array(name) if name is not None else None
        for op, dev in itertools.pairwise(argv[2:]):
            if not dev.startswith("/dev/"):
                continue
            d = resolve_device(machine, dev)
            if op in MEMBER_OPS and a is not None and a.member(d) is None:
                out.append(
                    Issue(
                        "unknown", d, f"is not a member of {a.name} on this machine", "not a member"
                    )
                )
            elif (op in DEVICE_OPS | MEMBER_OPS and machine.device(d) is None and a is None) or (
                op in DEVICE_OPS and machine.device(d) is None
            ):
                out.append(Issue("unknown", d, "no such block device on this machine"))
    return list(dict.fromkeys(out))
