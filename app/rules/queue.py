"""Block queue settings per disk: I/O scheduler, NCQ queue depth, volatile write cache.

Advice depends on the medium and on the layer above the disk:

- SSDs: ``none`` or ``mq-deadline`` (article 000: deadline/noop; bfq's per-process fairness costs
  CPU and latency at SSD speeds).
- Rotating disks under md: article 002 measured CFQ (fair queuing; on blk-mq kernels bfq) as
  the best scheduler for software RAID 1 ("in allen Disziplinen genauso gut oder besser") and
  software RAID 5 ("definitiv CFQ"), ahead of deadline.
- Other rotating disks: a real elevator (mq-deadline or bfq); article 002's hardware RAID-1 ran
  best with deadline.
- NCQ: article 002 found software RAID 1 on HDDs reading *faster* with NCQ off (Tabelle 8,
  a weaker effect for RAID 5), while single disks and hardware RAID profited from NCQ; SSDs
  lose most of their random-I/O speed at queue depth 1.
- Write cache: article 004's write-back result (sequential writes on a RAID-1 doubled, 400 to
  about 850 MB/s, while small random I/O lost 10,000–15,000 IOPS) is the 1 GB cache of a
  MegaRAID *controller* in write-back mode; the ``write-cache-off`` rule is about the drive's own
  volatile cache (/sys/block/X/queue/write_cache, hdparm -W), which md never replaces: with it
  off every write waits for the medium. The rule says which cache is which.
"""

from __future__ import annotations

from collections.abc import Iterator

from app.model.devices import Disk, Machine
from app.plans import ops
from app.plans.builders import persist
from app.plans.plan import Plan, Step
from app.rules.finding import Finding
from app.rules.inputs import AuditInputs, SchedulerState

SSD_OK = ("none", "mq-deadline", "kyber", "noop", "deadline")
HDD_OK = ("mq-deadline", "bfq", "deadline", "cfq", "kyber")
HDD_MD_OK = ("bfq", "cfq")  # fair queuing: article 002's best for md on HDDs


def _role(machine: Machine, d: Disk) -> str:
    arrays = machine.arrays_of_disk(d.name)
    return f" (member of {', '.join(a.name for a in arrays)})" if arrays else ""


def _scheduler_fix(d: Disk, st: SchedulerState, want: str, inputs: AuditInputs) -> Plan:
    f = persist.FILES["scheduler"]
    now = Step(ops.SetScheduler(d.name, want), f"I/O scheduler {st.current} -> {want}")
    key = persist.scheduler_key(d.serial)
    if key is None:  # no stable name to match at boot: now only, and say so
        return Plan(
            f"Use the {want} scheduler on {d.name}",
            (now,),
            target=d.name,
            kind="audit-scheduler",
            notes=(
                f"not kept at boot: {d.name} "
                + ("has a serial a udev rule cannot match" if d.serial else "reports no serial")
                + ", and its kernel name can change between boots",
            ),
        )
    text = persist.merged(f, inputs.persisted.get(f.path), {key: persist.scheduler_line(key, want)})
    return Plan(
        f"Use the {want} scheduler on {d.name}",
        (now, *persist.write_steps(f, text, f"keep {want} on {d.name} at boot")),
        target=d.name,
        kind="audit-scheduler",
        notes=(
            f"the udev rule matches {d.name}'s serial {key} (udev's ID_SERIAL_SHORT), which "
            "stays when kernel names change between boots",
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
        md_member = bool(machine.arrays_of_disk(d.name))
        if st is not None and st.current is not None:
            yield from _scheduler(machine, d, st, md_member, inputs)
        depth = inputs.queue_depth.get(d.name)
        if depth == 1 and d.transport in ("sata", "ata", "sas"):
            finding = _ncq_off(machine, d, md_member)
            if finding is not None:
                yield finding
        wc = inputs.write_cache.get(d.name)
        if wc == "write through" and d.transport in ("sata", "ata", "usb"):
            yield Finding(
                "advice",
                "write-cache-off",
                d.name,
                f"{d.name}: volatile write cache is off",
                f"{d.name}{_role(machine, d)} runs with the drive's own volatile write cache "
                "disabled (write through): each write is acknowledged only once it is on the "
                "medium. md and the filesystems send cache flushes (and FUA writes) where order "
                "matters, so on a drive that honours them the cache is safe, and it lets the "
                "drive merge and reorder writes: small writes especially, and on rotating disks "
                "most of all, are much faster with it. Figures published for a hardware RAID "
                "controller's 1 GB write-back cache (sequential writes doubled, small random I/O "
                "lost 10,000–15,000 IOPS) are about that controller's cache, a different cache "
                "that md never sees. If the drive cache was turned off on purpose (a drive known "
                "to ignore flushes), leave it; otherwise measure writes before and after: "
                f"hdparm -W1 /dev/{d.name} turns it on (until the next power cycle).",
            )


def _scheduler(
    machine: Machine, d: Disk, st: SchedulerState, md_member: bool, inputs: AuditInputs
) -> Iterator[Finding]:
    assert st.current is not None
    ok: tuple[str, ...]
    prefer: tuple[str, ...]
    if d.is_ssd:
        ok, prefer = (
            SSD_OK,
            (("none", "mq-deadline") if d.transport == "nvme" else ("mq-deadline", "none")),
        )
        kind = "SSD"
        why = (
            "For SSDs none or mq-deadline keep latency low; "
            "bfq's fairness bookkeeping costs CPU at SSD speeds."
        )
    elif md_member:
        ok, prefer = HDD_MD_OK, ("bfq",)
        kind = "rotating md member"
        why = (
            "For software RAID on HDDs fair queuing (CFQ, whose blk-mq "
            "successor is bfq) measured as good as or better than deadline and noop in every "
            "discipline for md RAID-1, and clearly best for md RAID-5 (up to 70–100 MB/s more "
            "sequential reads on RAID-1). That was measured on the single-queue schedulers of "
            "older kernels (CFQ, anticipatory, deadline, noop; their blk-mq successors are "
            "bfq, bfq, mq-deadline and none) with the disks of that time: a hint to "
            "measure on your own disks before and after, not a rule."
            + ("" if "bfq" in st.available else " bfq is not loaded: modprobe bfq first.")
        )
    else:
        ok, prefer = HDD_OK, ("mq-deadline", "bfq")
        kind = "rotating disk"
        why = (
            "Without an elevator, rotating disks seek between interleaved streams; "
            "mq-deadline (or bfq for desktops) sorts and merges requests."
        )
    if st.current in ok:
        return
    want = next((s for s in prefer if s in st.available), None)
    yield Finding(
        "advice",
        "scheduler",
        d.name,
        f"{d.name}: I/O scheduler {st.current} on a {kind}",
        f"{d.name}{_role(machine, d)} is a {kind} using {st.current} "
        f"(available: {' '.join(st.available) or 'unknown'}). " + why,
        _scheduler_fix(d, st, want, inputs) if want is not None else None,
    )


def _ncq_off(machine: Machine, d: Disk, md_member: bool) -> Finding | None:
    where = f"(/sys/block/{d.name}/device/queue_depth = 1)"
    causes = (
        " Causes: the controller in IDE/legacy mode (switch the firmware to AHCI), or "
        "libata.force=noncq after NCQ errors (then check the cable and SMART first). "
        f"echo 31 > /sys/block/{d.name}/device/queue_depth turns NCQ on until the next boot "
        "(dmesg | grep NCQ shows the depth the driver set, e.g. 'NCQ (depth 31/32)'); "
        "'Permission denied' there means the driver or controller does not allow it."
    )
    if d.is_ssd:
        text = (
            f"{d.name}{_role(machine, d)} accepts one command at a time {where}: native "
            "command queuing is off, which costs SSDs most of their random-I/O speed." + causes
        )
    elif md_member:
        # article 002, Tabelle 8: md RAID-1 on HDDs read faster with NCQ off; RAID-5 similar
        return None
    else:
        text = (
            f"{d.name}{_role(machine, d)} accepts one command at a time {where}: native "
            "command queuing is off. Single disks and hardware RAID measure "
            "faster with NCQ in nearly every discipline (only md software RAID read faster "
            "without it)." + causes
        )
    return Finding("advice", "ncq-off", d.name, f"{d.name}: queue depth 1 (NCQ off)", text)
