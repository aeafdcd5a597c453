"""Qualify a new disk before it joins an array (``raidman plan qualify --device D``): burn-in in
one plan, with a verdict kept per serial.

1. SMART as it is (``smartctl -j -a``);
2. the drive's short self-test, then its extended one, each held until the drive has finished
   (ATA/SCSI: smartctl's captive mode; NVMe: ``nvme device-self-test --wait``); left out, with
   the reason, where the drive has no self-tests;
3. a full-surface write + verify pass: **fio with verify, not badblocks -w**. fio writes each
   1 MiB block once with a crc32c checksum and a header holding its offset, then reads every
   block back and checks both (fio verify.c): one write of the disk, where badblocks -w writes
   four patterns over the whole disk (four full drive writes of an SSD's rated endurance); the
   offset in every block catches a drive that maps two places to one (a fake capacity), which a
   repeated pattern cannot; fio reports throughput and latency percentiles as JSON, per zone,
   where badblocks reports only bad block numbers; and it has no 32-bit block count (badblocks
   needs ``-b 4096`` past 16 TiB). The disk is cut into zones (whole MiB), one fio run each, so
   each zone's speed and latency are seen (an HDD slows towards its inner tracks; a weak region
   stands out) and the plan's progress moves zone by zone;
4. SMART again: bad sectors counted after against before, the self-tests' results.

``app.plans.qualify_verdict.collect`` judges the run; ``app.plans.qualify_store`` keeps the
verdict by serial. Refused on any disk in use: a member (or a member's partition), a superblock
carrier (``outcome.lost.carrier_refusals``), mounted, held, the system disk — and on a disk with
neither serial nor WWN (a renamed disk would be another one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.format import duration
from app.model import Disk, Machine
from app.model.endurance import TB, rated_tbw
from app.model.sizes import human_bytes
from app.plans import ops
from app.plans.disk_facts import SelfTestSupport
from app.plans.geometry import PlanError
from app.plans.guards.in_use import write_refusals
from app.plans.guards.preflight import strip_dev
from app.plans.ops.disk_tests import MIB
from app.plans.outcome.lost import carrier_refusals
from app.plans.plan import Plan, Step
from app.plans.qualify_verdict import Verdict
from app.plans.superblocks import Superblocks

DEFAULT_ZONES = 10
MAX_ZONES = 50
SHORT_TEST_S = 120.0  # the NVMe base specification bounds a short self-test to 2 minutes
# typical 1 MiB sequential rates at queue depth 1 (MB/s, write / read) when nothing better is
# known: said as such in the plan
TYPICAL_MB_S = {"nvme": (1000.0, 1500.0), "ssd": (450.0, 500.0), "hdd": (150.0, 150.0)}
TYPICAL_WORD = {"nvme": "an NVMe SSD", "ssd": "a SATA SSD", "hdd": "an HDD"}


def _kind(d: Disk) -> str:
    if d.name.startswith("nvme") or d.transport == "nvme":
        return "nvme"
    return "hdd" if d.rotational else "ssd"


@dataclass(frozen=True, slots=True)
class Speeds:
    write_mb_s: float
    read_mb_s: float
    source: str  # where the figures come from, in words


def speeds_for(d: Disk, support: SelfTestSupport, same_model: Sequence[Verdict] = ()) -> Speeds:
    """Measured (this model's kept verdicts), else rated (the drive's own time for an extended
    test reads every sector), else typical for its kind."""
    w = [x for v in same_model if (x := v.median("write_mb_s"))]
    r = [x for v in same_model if (x := v.median("read_mb_s"))]
    if w and r:
        n = len(w)
        return Speeds(
            sorted(w)[n // 2],
            sorted(r)[len(r) // 2],
            f"measured: the median of {n} kept verdict{'s' if n != 1 else ''} of the model {d.model}",
        )
    if support.extended_minutes:
        rate = d.size_bytes / (support.extended_minutes * 60) / 1e6
        return Speeds(
            rate,
            rate,
            f"rated: the drive reads every sector in {support.extended_minutes} min by its own "
            "extended self-test time",
        )
    tw, tr = TYPICAL_MB_S[_kind(d)]
    return Speeds(tw, tr, f"typical for {TYPICAL_WORD[_kind(d)]} (nothing measured or rated)")


def zone_spans(size_bytes: int, zones: int) -> list[tuple[int, int]]:
    """(offset, size) of each zone, whole MiB; the last one takes what is left."""
    whole = size_bytes // MIB
    if whole < 1:
        raise PlanError("the disk is smaller than 1 MiB: nothing to test")
    n = max(1, min(zones, whole))
    per = whole // n
    out = [(i * per * MIB, per * MIB) for i in range(n)]
    last_off = out[-1][0]
    out[-1] = (last_off, (whole * MIB) - last_off)
    return out


def forecast(
    d: Disk, tests: tuple[str, ...], spans: list[tuple[int, int]], sp: Speeds,
    support: SelfTestSupport,
) -> tuple[float, int, list[str]]:  # fmt: skip
    """(seconds, bytes written, lines) of the whole qualify."""
    written = sum(s for _, s in spans)
    # at least a second: a small disk's pass at a rated speed rounds to "about 0s" otherwise
    surface = max(1.0, written / (sp.write_mb_s * 1e6) + written / (sp.read_mb_s * 1e6))
    secs = surface
    lines = []
    if "short" in tests:
        secs += SHORT_TEST_S
    if "long" in tests:
        long_s = (support.extended_minutes or 0) * 60 or max(
            1.0, d.size_bytes / (sp.read_mb_s * 1e6)
        )
        secs += long_s
        lines.append(f"extended self-test: about {duration(long_s)}")
    lines.append(
        f"surface pass: about {duration(surface)} (write {human_bytes(written)} at "
        f"{sp.write_mb_s:.0f} MB/s, verify at {sp.read_mb_s:.0f} MB/s; {sp.source})"
    )
    return secs, written, lines


def tbw_share(d: Disk, written: int) -> str:
    if d.rotational:
        return "a spinning disk: no write endurance to spend"
    r = rated_tbw(d.model)
    if r is None:
        return f"its rated write endurance (TBW) is not known for {d.model or 'this model'}"
    pct = written / (r.tbw * TB) * 100
    return f"{pct:.2f} % of its rated {r.tbw} TBW ({r.family})"


def _in_use(machine: Machine, name: str, sbs: Superblocks | None) -> list[str]:
    why = [str(i) for i in write_refusals(machine, name)]
    devs = [name, *(p.name for p in machine.partitions if p.parent == name)]
    why += [str(i) for i in carrier_refusals(machine, sbs, devs)]
    if sbs is None:
        why.append(
            f"{name}: its md superblocks were not read (mdadm --examine): whether it carries "
            "an array is not known"
        )
    return why


def build_qualify(
    machine: Machine,
    device: str,
    support: SelfTestSupport,
    *,
    superblocks: Superblocks | None,
    smart_readable: bool = True,
    zones: int = DEFAULT_ZONES,
    same_model: Sequence[Verdict] = (),
    peers_of: str | None = None,
) -> Plan:
    name = strip_dev(device)
    d = machine.disk(name)
    if d is None:
        part = machine.partition(name)
        hint = f": qualify tests a whole disk ({part.parent})" if part is not None else ""
        raise PlanError(f"no disk {name!r} on this machine{hint}")
    if d.kind != "disk":
        raise PlanError(f"{name} is a {d.kind}, not a disk to qualify")
    if not 1 <= zones <= MAX_ZONES:
        raise PlanError(f"--zones: from 1 to {MAX_ZONES}")
    if not (d.serial or d.wwn):
        raise PlanError(
            f"{name} reports neither serial nor WWN: its verdict could not be kept by identity, "
            "and a renamed disk could not be told from it"
        )
    used = _in_use(machine, name, superblocks)
    if used:
        raise PlanError(
            f"{name} is in use: qualify writes the whole disk, so it tests only a disk that "
            "holds nothing — " + "; ".join(used)
        )
    if peers_of is not None and machine.array(strip_dev(peers_of)) is None:
        raise PlanError(f"--for: no md array {peers_of!r} on this machine")
    path = f"/dev/{name}"
    nvme = _kind(d) == "nvme"
    steps: list[Step] = []
    notes: list[str] = []
    if smart_readable:
        steps.append(
            Step(ops.SmartReport(path), f"SMART of {name} before: bad sectors, self-test log")
        )
    else:
        notes.append(f"{name}'s SMART cannot be read: the verdict rests on the surface pass alone")
    tests: tuple[str, ...] = ()
    if support.supported and smart_readable:
        tests = ("short", "long")
        for t in tests:
            op = ops.NvmeSelfTest(path, t) if nvme else ops.CaptiveSelfTest(path, t)
            word = "short" if t == "short" else "extended (reads every sector)"
            how = "nvme device-self-test waits for it" if nvme else "captive: smartctl waits for it"
            steps.append(Step(op, f"the drive's {word} self-test ({how})"))
    elif support.supported is False:
        notes.append(f"{name} does not support SMART self-tests (its capabilities): none planned")
    else:
        notes.append(f"{name}'s self-test support was not read ({support.why}): none planned")
    spans = zone_spans(d.size_bytes, zones)
    for i, (off, size) in enumerate(spans, 1):
        steps.append(
            Step(
                ops.SurfaceTest(path, off, size),
                f"zone {i} of {len(spans)}: write {human_bytes(size)} from {human_bytes(off)} "
                "with checksums, then read it back and verify",
            )
        )
    if smart_readable:
        steps.append(Step(ops.SmartReport(path), f"SMART of {name} after: what the pass changed"))
    sp = speeds_for(d, support, same_model)
    secs, written, lines = forecast(d, tests, spans, sp, support)
    tail = d.size_bytes - written
    notes[:0] = [
        f"forecast: about {duration(secs)} in all; writes {human_bytes(written)} "
        f"({tbw_share(d, written)})",
        *lines,
    ]
    if tail:
        notes.append(f"the last {tail} bytes past the last whole MiB are not written")
    notes.append(
        "why fio and not badblocks -w: one write of the disk instead of four patterns (an SSD's "
        "endurance), every block's offset checked (a fake capacity fails), throughput and "
        "latency per zone, no 32-bit block limit"
    )
    if peers_of is not None:
        notes.append(
            f"its verdict is compared with the kept verdicts of {strip_dev(peers_of)}'s members"
        )
    ident = ", ".join(x for x in (d.serial and f"serial {d.serial}", d.wwn and f"WWN {d.wwn}") if x)
    return Plan(
        title=f"qualify /dev/{name} ({d.model or 'model unknown'}, {ident})",
        steps=tuple(steps),
        kind="qualify",
        params={
            "device": name,
            "serial": d.serial,
            "wwn": d.wwn,
            "model": d.model,
            "size_bytes": d.size_bytes,
            "rotational": d.rotational,
            "zones": len(spans),
            "for": strip_dev(peers_of) if peers_of else None,
            "forecast_s": round(secs),
            "bytes_written": written,
        },
        notes=tuple(notes),
        warnings=(f"everything on {name} is overwritten",),
    )
