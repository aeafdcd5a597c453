"""A SMART self-test as a plan: ``smartctl -t short|long /dev/DISK``.

The drive runs the test itself, in the background, and keeps serving I/O; the step returns at
once ("Testing has begun"). Nothing is written to the disk's data. raidman follows it with
``smartctl -j -c -l selftest`` (the remaining percent; ``app.parsers.smartctl_logs``) and shows
the result from the drive's self-test log.
"""

from __future__ import annotations

from app.model import Machine
from app.plans import ops
from app.plans.geometry import PlanError
from app.plans.guards.preflight import strip_dev
from app.plans.plan import Plan, Step

SMART_TESTS = ("short", "long")
PROGRESS_ARGV = ("smartctl", "-j", "-c", "-l", "selftest")  # + /dev/DISK
_WHY = {
    "short": "the drive's short self-test: its electronics and a sample of the surface "
    "(about 2 minutes; the NVMe specification bounds a short test to 2 minutes)",
    "long": "the drive's extended self-test: it reads every sector (hours on a large "
    "disk: the drive's capabilities give the time)",
}


def progress_argv(disk: str) -> tuple[str, ...]:
    """The read-only command that says how far a running self-test is."""
    return (*PROGRESS_ARGV, f"/dev/{disk}")


def build_smart_test(
    machine: Machine,
    device: str,
    test: str,
    *,
    supported: bool | None = None,
    unreadable: str | None = None,
) -> Plan:
    """``supported``: what the drive's capabilities say (``smartctl -j -c``), None unread;
    ``unreadable``: why the drive's SMART cannot be read (None: it can). A test that cannot
    start is refused with the reason, not planned: a drive without self-tests takes the command
    and starts none (smartctl 7.3 even exits 0 on NVMe)."""
    name = strip_dev(device)
    if test not in SMART_TESTS:
        raise PlanError(f"self-test {test!r}: choose short or long")
    disk = next((d for d in machine.disks if d.name == name), None)
    if disk is None:
        part = next((p for p in machine.partitions if p.name == name), None)
        hint = f" (a partition of {part.parent}: test the whole disk)" if part else ""
        raise PlanError(f"no disk {name!r} on this machine{hint}")
    if disk.kind != "disk":
        raise PlanError(f"{name} is a {disk.kind}, not a drive with SMART self-tests")
    if unreadable is not None:
        raise PlanError(
            f"{name}'s SMART cannot be read ({unreadable}): no self-test can be started"
        )
    if supported is False:
        raise PlanError(
            f"{name} does not support SMART self-tests (its capabilities say so): smartctl -t "
            "would start none (smartctl 7.3 even exits 0 without a word on NVMe)"
        )
    warnings: list[str] = []
    notes = [
        "the test runs inside the drive and does not change data; the array keeps working "
        "(reads may be slower while it runs)",
        f"progress: {' '.join(progress_argv(name))} (the disk's Details show the remaining "
        "percent and then the result from the drive's self-test log)",
    ]
    if supported is None:
        notes.append("the drive's self-test support was not read")
    return Plan(
        title=f"SMART {test} self-test of /dev/{name}",
        steps=(Step(ops.SmartTest(f"/dev/{name}", test), f"{name}: {_WHY[test]}"),),
        target=name,
        warnings=tuple(warnings),
        kind="smart-test",
        params={"device": name, "test": test},
        notes=tuple(notes),
    )
