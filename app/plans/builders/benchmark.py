"""Measure before you choose: a plan that benchmarks candidate chunk sizes on the disks themselves.

The method (fio with direct I/O, the disks discarded first, three runs each, one disk alone as
the baseline, then per chunk size the array created with ``--assume-clean``, measured, stopped
and its superblocks zeroed; at the end every member discarded again). Each write run starts on
discarded blocks (article 000 trimmed before every test); the reads run after the writes, on
written blocks. Each run ends at ``--size`` or ``--runtime``: the plan's consequences bound its
duration and the bytes it writes to each disk (app.plans.outcome.benchmark_cost).

* patterns: random 4 KiB and 64 KiB reads and writes, sequential 1 MiB reads and writes, each
  with ``numjobs`` 1 and 4 (one job waits for each request: small requests reach one member;
  several jobs keep several members busy);
* ``--direct=1`` so the page cache measures nothing; ``--output-format=json`` so the figures are
  parsed (app.parsers.fio), never scraped; ``--group_reporting`` adds up the jobs;
* the result: MB/s and IOPS per pattern × chunk (the median of the runs), and each as a ratio
  to the one disk.

Every step is an argv the allowlist checks; the plan destroys the members' data (typed
confirmation, consequences, pre-flight: the members must be unused).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from app.format import human_bytes
from app.model import Machine, levels
from app.plans import ops
from app.plans.builders.expectations import expectations, flags
from app.plans.geometry import PlanError, parse_size
from app.plans.plan import MAX_STEPS, Plan, Step

KIB = 1024
PATTERNS: tuple[tuple[str, str], ...] = (
    ("randread", "4k"),
    ("randwrite", "4k"),
    ("randread", "64k"),
    ("randwrite", "64k"),
    ("read", "1m"),
    ("write", "1m"),
)
RW = tuple(dict.fromkeys(rw for rw, _ in PATTERNS))
BLOCKS = tuple(dict.fromkeys(bs for _, bs in PATTERNS))
DEFAULT_CHUNKS = (32 * KIB, 64 * KIB, 512 * KIB)
# which patterns decide the chunk for a workload the admin names
WORKLOADS: dict[str, tuple[tuple[str, str], ...]] = {
    "random-small": (
        ("randread", "4k"),
        ("randwrite", "4k"),
        ("randread", "64k"),
        ("randwrite", "64k"),
    ),
    "sequential-large": (("read", "1m"), ("write", "1m")),
    "mixed": PATTERNS,
}
SIZE_RANGE = (1 << 20, 64 << 30)
MAX_RUNS = 10
RUNTIME_S = 60  # fio --runtime: bounds each run, and so the benchmark's duration
BENCH_ARRAY_FIRST = 120  # the benchmark array takes the first free /dev/mdN from here


@dataclass(frozen=True, slots=True)
class BenchmarkParams:
    devices: tuple[str, ...]
    chunks: tuple[int, ...] = DEFAULT_CHUNKS
    level: str = "10"
    layout: str | None = "n2"
    runs: int = 3
    numjobs: tuple[int, ...] = (1, 4)
    size: str = "256M"  # bytes each fio run covers (per job)
    patterns: tuple[tuple[str, str], ...] = PATTERNS
    runtime: int = RUNTIME_S  # seconds a run may take at most (it ends at ``size`` or here)


def _free_md(machine: Machine) -> str:
    used = {a.name for a in machine.arrays}
    n = BENCH_ARRAY_FIRST
    while f"md{n}" in used:
        n += 1
    return f"/dev/md{n}"


def _discards(machine: Machine, dev: str) -> bool:
    d = machine.device(dev.removeprefix("/dev/"))
    return bool(getattr(d, "discard_max_bytes", 0))


def _check(machine: Machine, p: BenchmarkParams) -> None:
    level = p.level.removeprefix("raid")
    if f"raid{level}" not in levels.STRIPED:
        raise PlanError(f"RAID-{level} has no chunk to choose: benchmark 0, 4, 5, 6 or 10")
    if len(set(p.devices)) != len(p.devices):
        raise PlanError("a device is named twice")
    need = levels.min_devices(f"raid{level}", p.layout if level == "10" else None)
    if len(p.devices) < max(2, need):
        raise PlanError(f"RAID-{level} needs at least {max(2, need)} devices")
    for d in p.devices:
        if machine.disk(d) is None and machine.device(d) is None:
            raise PlanError(f"no device {d!r} on this machine")
    if not p.chunks or any(c < 4 * KIB or c & (c - 1) for c in p.chunks):
        raise PlanError("chunks: powers of two from 4K, e.g. 32K,512K")
    if not 1 <= p.runs <= MAX_RUNS:
        raise PlanError(f"runs: 1 to {MAX_RUNS}")
    if not 1 <= p.runtime <= 3600:
        raise PlanError("runtime: 1 to 3600 seconds per run")
    if not p.numjobs or any(not 1 <= n <= 64 for n in p.numjobs):
        raise PlanError("numjobs: 1 to 64")
    size = parse_size(p.size)
    if not SIZE_RANGE[0] <= size <= SIZE_RANGE[1]:
        raise PlanError("size: 1M to 64G per run")


def build_benchmark(machine: Machine, p: BenchmarkParams) -> Plan:
    _check(machine, p)
    level = p.level.removeprefix("raid")
    devs = tuple(f"/dev/{d.removeprefix('/dev/')}" for d in p.devices)
    md = _free_md(machine)
    members_discard = all(_discards(machine, d) for d in devs)
    # md RAID-0/1/10 pass a discard on to the members; RAID-4/5/6 only with raid456's
    # devices_handle_discard_safely (off by default): blkdiscard of such an array fails
    array_discards = members_discard and f"raid{level}" not in levels.PARITY

    def discards(why: str) -> list[Step]:
        return [Step(ops.Discard(d), f"{why} {d}") for d in devs if _discards(machine, d)]

    steps: list[Step] = discards("discard first (measured from a clean state):")

    def measure(target: str, what: str, discard: bool) -> None:
        # writes first, each run on freshly discarded blocks (article 000 trimmed before each
        # test); then the reads, on the blocks the last write run wrote: a read of discarded
        # blocks measures the SSD's answer of zeroes, not its flash
        order = [x for x in p.patterns if "write" in x[0]] + [
            x for x in p.patterns if "write" not in x[0]
        ]
        for rw, bs in order:
            for nj in p.numjobs:
                for run in range(1, p.runs + 1):
                    if discard and "write" in rw:
                        steps.append(
                            Step(ops.Discard(target), f"{what}: discard before the write run")
                        )
                    steps.append(
                        Step(
                            ops.Fio(target, rw, bs, nj, p.size, p.runtime),
                            f"{what}: {rw} {bs}, {nj} job{'s' if nj > 1 else ''}, run {run} of "
                            f"{p.runs}",
                        )
                    )

    measure(devs[0], f"baseline, {devs[0]} alone", _discards(machine, devs[0]))
    for i, chunk in enumerate(p.chunks):
        if i:
            steps += discards("discard before the next chunk:")
        create = ops.CreateArray(
            md,
            level,
            devs,
            chunk=f"{chunk // KIB}K",
            layout=p.layout if level == "10" and p.layout else None,
            bitmap="none" if level != "0" else None,
            metadata="1.2",
            run=True,
            assume_clean=level != "0",
            run_first=True,
        )
        steps.append(
            Step(
                create,
                f"RAID-{level} with a {human_bytes(chunk, trim=True)} chunk; --assume-clean: no "
                "initial sync competes with the measurement (the data is not redundant yet)",
            )
        )
        measure(md, f"chunk {human_bytes(chunk, trim=True)}", array_discards)
        steps.append(Step(ops.StopArray(md), f"stop the {human_bytes(chunk, trim=True)} array"))
        steps.append(Step(ops.ZeroSuperblock(devs), "remove its superblocks from the members"))
    steps += discards("leave it discarded (empty):")
    if len(steps) > MAX_STEPS:
        raise PlanError(
            f"this benchmark would take {len(steps)} steps, at most {MAX_STEPS}: fewer chunks, "
            "runs, job counts or patterns"
        )
    n_fio = sum(1 for s in steps if isinstance(s.op, ops.Fio))
    no_discard = [d for d in devs if not _discards(machine, d)]
    return Plan(
        title=f"benchmark chunk sizes on {', '.join(d.removeprefix('/dev/') for d in devs)}",
        steps=tuple(steps),
        target=devs[0].removeprefix("/dev/"),
        kind="benchmark",
        params={
            "devices": [d.removeprefix("/dev/") for d in devs],
            "chunks": list(p.chunks),
            "level": level,
            "layout": p.layout if level == "10" else None,
            "runs": p.runs,
            "numjobs": list(p.numjobs),
            "size": p.size,
            "runtime_s": p.runtime,
            "array": md.removeprefix("/dev/"),
            "kernel": machine.kernel,  # figures move with the kernel: kept beside them
        },
        notes=(
            f"{n_fio} fio runs of at most {p.runtime} s each; every member is discarded first "
            "and at the end, each write run starts on discarded blocks, the reads run on the "
            "blocks the writes left, and each test array is stopped and its superblocks "
            "zeroed: the disks are left empty",
            "the result table is printed and kept by raidman apply (report --json: benchmarks)",
            *(
                (
                    f"{', '.join(no_discard)} cannot discard (queue/discard_max_bytes 0): measured "
                    "without a discard first, so earlier writes may slow its writes",
                )
                if no_discard
                else ()
            ),
            *(
                (
                    f"RAID-{level} passes no discard to its members: its write runs start on "
                    "blocks the previous run wrote",
                )
                if members_discard and not array_discards
                else ()
            ),
        ),
    )


# ---- results ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cell:
    """One pattern on one target: the median of its runs."""

    target: str  # "disk" or the chunk in bytes as text
    rw: str
    bs: str
    numjobs: int
    mb_s: float  # MB/s (10^6 bytes), as fio and the articles print them
    iops: float
    runs: int

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "rw": self.rw,
            "bs": self.bs,
            "numjobs": self.numjobs,
            "mb_s": round(self.mb_s, 1),
            "iops": round(self.iops),
            "runs": self.runs,
        }


@dataclass(frozen=True)
class BenchmarkResult:
    devices: tuple[str, ...]
    level: str
    layout: str | None
    chunks: tuple[int, ...]
    cells: tuple[Cell, ...] = field(default=())
    taken_at: float | None = None
    kernel: str | None = None  # the kernel release the figures were measured on

    def cell(self, target: str, rw: str, bs: str, numjobs: int) -> Cell | None:
        for c in self.cells:
            if (c.target, c.rw, c.bs, c.numjobs) == (target, rw, bs, numjobs):
                return c
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "taken_at": self.taken_at,
            "kernel": self.kernel,
            "devices": list(self.devices),
            "level": self.level,
            "layout": self.layout,
            "chunks": list(self.chunks),
            "cells": [c.to_json() for c in self.cells],
        }


def collect(plan: Plan, outputs: list[tuple[ops.Op, str]], taken_at: float) -> BenchmarkResult:
    """The result from the fio steps' operations and their JSON output (in plan order). The
    target of a run is its operation's (the member = the disk baseline, else the array of the
    chunk created last before it), the figures from fio's JSON; a run whose output is not fio's
    JSON raises ParseError (the caller says which step)."""
    from app.parsers.fio import parse_fio_json

    p = plan.params
    devices = tuple(str(d) for d in p.get("devices") or ())
    runs: dict[tuple[str, str, str, int], list[tuple[float, float]]] = {}
    chunk_now: str | None = None
    for op, out in outputs:
        if isinstance(op, ops.CreateArray):
            chunk_now = str(parse_size(op.chunk)) if op.chunk else None
            continue
        if not isinstance(op, ops.Fio):
            continue
        baseline = devices[:1] == (op.filename.removeprefix("/dev/"),)
        target = "disk" if baseline else (chunk_now or "array")
        r = parse_fio_json(out)
        bw, iops = (r.write_bw, r.write_iops) if op.writes_data else (r.read_bw, r.read_iops)
        runs.setdefault((target, op.rw, op.bs, op.numjobs), []).append((bw, iops))
    cells = tuple(
        Cell(
            t,
            rw,
            bs,
            nj,
            statistics.median(b for b, _ in v) / 1e6,
            statistics.median(i for _, i in v),
            len(v),
        )
        for (t, rw, bs, nj), v in runs.items()
    )
    return BenchmarkResult(
        devices=devices,
        level=str(p.get("level") or ""),
        layout=p.get("layout"),
        chunks=tuple(int(c) for c in p.get("chunks") or ()),
        cells=cells,
        taken_at=taken_at,
        kernel=str(p["kernel"])[:128] if p.get("kernel") else None,
    )


def best_chunk(result: BenchmarkResult, workload: str) -> int | None:
    """The chunk whose figures, as ratios to the one disk, are best on average for the patterns
    that decide ``workload`` (random-small, sequential-large, mixed); None without figures."""
    patterns = WORKLOADS.get(workload)
    if patterns is None:
        raise PlanError(f"workload: one of {', '.join(WORKLOADS)}")
    best: tuple[float, int] | None = None
    for chunk in result.chunks:
        ratios = []
        for rw, bs in patterns:
            for c in result.cells:
                if (c.target, c.rw, c.bs) != (str(chunk), rw, bs):
                    continue
                base = result.cell("disk", rw, bs, c.numjobs)
                if base is not None and base.mb_s > 0:
                    ratios.append(c.mb_s / base.mb_s)
        if ratios:
            score = statistics.fmean(ratios)
            if best is None or score > best[0]:
                best = (score, chunk)
    return None if best is None else best[1]


def table(result: BenchmarkResult) -> str:
    """The result as a table: per pattern and job count, the disk alone and each chunk, MB/s,
    IOPS and the ratio to the disk."""
    heads = ["disk", *(human_bytes(c, trim=True) for c in result.chunks)]
    targets = ["disk", *(str(c) for c in result.chunks)]
    lines = [
        f"RAID-{result.level}{' ' + result.layout if result.layout else ''} of "
        f"{len(result.devices)} ({', '.join(result.devices)}): MB/s | IOPS | × one disk"
        + (
            f"; kernel {result.kernel} (figures can change with the kernel: measure again after "
            "an upgrade)"
            if result.kernel
            else ""
        ),
        f"{'pattern':<18}" + "".join(f"{h:>26}" for h in heads),
    ]
    keys = dict.fromkeys((c.rw, c.bs, c.numjobs) for c in result.cells)
    for rw, bs, nj in keys:
        base = result.cell("disk", rw, bs, nj)
        row = f"{f'{rw} {bs} ×{nj}':<18}"
        for t in targets:
            c = result.cell(t, rw, bs, nj)
            if c is None:
                row += f"{'—':>26}"
                continue
            ratio = f"{c.mb_s / base.mb_s:.2f}" if base is not None and base.mb_s > 0 else "—"
            row += f"{f'{c.mb_s:.1f} | {c.iops:.0f} | {ratio}':>26}"
        lines.append(row)
    n, level = len(result.devices), f"raid{result.level}"
    for chunk in result.chunks:
        for text in expectations(level, n, result.layout, chunk):
            lines.append(f"expected ({human_bytes(chunk, trim=True)}): {text}")
        ratios = {}
        for c in result.cells:
            base = result.cell("disk", c.rw, c.bs, c.numjobs)
            if c.target == str(chunk) and base is not None and base.mb_s > 0:
                ratios[(c.rw, c.bs, c.numjobs)] = c.mb_s / base.mb_s
        for text in flags(level, n, result.layout, ratios):
            lines.append(f"FLAG ({human_bytes(chunk, trim=True)}): {text}")
    return "\n".join(lines)


def result_from_json(doc: object) -> BenchmarkResult | None:
    """A stored result read back (the state database's JSON); None when it is not one."""
    if not isinstance(doc, dict):
        return None
    try:
        cells = tuple(
            Cell(
                str(c["target"])[:16],
                str(c["rw"])[:16],
                str(c["bs"])[:8],
                int(c["numjobs"]),
                float(c["mb_s"]),
                float(c["iops"]),
                int(c["runs"]),
            )
            for c in doc["cells"][:10000]
        )
        return BenchmarkResult(
            devices=tuple(str(d)[:64] for d in doc["devices"][:64]),
            level=str(doc["level"])[:8],
            layout=None if doc.get("layout") is None else str(doc["layout"])[:8],
            chunks=tuple(int(c) for c in doc["chunks"][:16]),
            cells=cells,
            taken_at=float(doc["taken_at"]) if doc.get("taken_at") is not None else None,
            kernel=str(doc["kernel"])[:128] if doc.get("kernel") else None,
        )
    except (KeyError, TypeError, ValueError):
        return None
