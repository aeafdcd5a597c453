"""Block queue settings per disk: I/O scheduler, NCQ queue depth, volatile write cache.

The source articles advise ``none`` or ``mq-deadline`` for SSDs (bfq's per-process fairness costs
CPU and latency at SSD speeds) and a real elevator (mq-deadline or bfq) for rotating disks.
"""

from __future__ import annotations

from collections.abc import Iterator

from app.model.devices import Disk, Machine
from app.plans.plan import Plan, Step
from app.rules.finding import Finding
from app.rules.inputs import AuditInputs, SchedulerState

SSD_OK = ("none", "mq-deadline", "kyber", "noop", "deadline")
HDD_OK = ("mq-deadline", "bfq", "deadline", "cfq", "kyber")


def _role(machine: Machine, d: Disk) -> str:
    arrays = machine.arrays_of_disk(d.name)
    return f" (member of {', '.join(a.name for a in arrays)})" if arrays else ""


def _scheduler_fix(d: Disk, st: SchedulerState, want: str) -> Plan:
    return Plan(
        f"Use the {want} scheduler on {d.name}",
        (
            Step(
                ("tee", f"/sys/block/{d.name}/queue/scheduler"),
                f"I/O scheduler {st.current} -> {want}",
                stdin=f"{want}\n",
            ),
        ),
        target=d.name,
        kind="audit-scheduler",
        notes=(
            "Not persistent: add a udev rule, e.g. "
            f'ACTION=="add|change", KERNEL=="{d.name}", ATTR{{queue/scheduler}}="{want}"',
        ),
    )


def _in_use(machine: Machine, d: Disk) -> bool:
    return bool(machine.children_of(d.name)) or machine.filesystem(d.name) is not None


def check(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    for d in machine.disks:
        if d.kind != "disk" or d.rotational is None or not _in_use(machine, d):
            continue
        st = inputs.scheduler(d.name)
        if st is None and d.scheduler:
            st = SchedulerState.parse(d.scheduler)
        if st is not None and st.current is not None:
            ok = SSD_OK if d.is_ssd else HDD_OK
            if st.current not in ok:
                if d.is_ssd:
                    prefer = (
                        ("none", "mq-deadline")
                        if d.transport == "nvme"
                        else (
                            "mq-deadline",
                            "none",
                        )
                    )
                else:
                    prefer = ("mq-deadline", "bfq")
                want = next((s for s in prefer if s in st.available), None)
                kind = "SSD" if d.is_ssd else "rotating disk"
                yield Finding(
                    "advice",
                    "scheduler",
                    d.name,
                    f"{d.name}: I/O scheduler {st.current} on a {kind}",
                    f"{d.name}{_role(machine, d)} is a {kind} using {st.current} "
                    f"(available: {' '.join(st.available) or 'unknown'}). "
                    + (
                        "For SSDs none or mq-deadline keep latency low; bfq's fairness "
                        "bookkeeping costs CPU at SSD speeds."
                        if d.is_ssd
                        else "Without an elevator, rotating disks seek between interleaved "
                        "streams; mq-deadline (or bfq for desktops) sorts and merges requests."
                    ),
                    _scheduler_fix(d, st, want) if want is not None else None,
                )
        depth = inputs.queue_depth.get(d.name)
        if depth == 1 and d.transport in ("sata", "ata", "sas"):
            yield Finding(
                "advice",
                "ncq-off",
                d.name,
                f"{d.name}: queue depth 1 (NCQ off)",
                f"{d.name}{_role(machine, d)} accepts one command at a time "
                f"(/sys/block/{d.name}/device/queue_depth = 1): native command queuing is off, "
                "which costs SSDs most of their random-I/O speed. Causes: the controller in "
                "IDE/legacy mode (switch the firmware to AHCI), or libata.force=noncq after "
                "NCQ errors (then check the cable and SMART first).",
            )
        wc = inputs.write_cache.get(d.name)
        if wc == "write through" and d.transport in ("sata", "ata", "usb"):
            yield Finding(
                "advice",
                "write-cache-off",
                d.name,
                f"{d.name}: volatile write cache is off",
                f"{d.name}{_role(machine, d)} runs with its write cache disabled (write "
                "through). md and the filesystems issue flushes, so the cache is safe to use "
                "on drives that honour them; disabled, writes are much slower — especially "
                "on SSDs without power-loss protection. If it was turned off on purpose, "
                f"ignore this; hdparm -W1 /dev/{d.name} turns it on.",
            )
