"""A qualified disk's verdict: what ``plan qualify`` found, judged from its steps' output.

``collect`` reads the executed plan's outcomes in order: the SMART report before and after
(``smartctl -j -a``), the self-tests (each step passes or fails with the drive's test), and one
fio write + verify per zone (its JSON: bytes, throughput, the 99th percentile and maximum
completion latency of the write and of the verify read, fio's error). The verdict is:

* **failed** when a self-test failed, a zone's verify or write failed, a step did not run, the
  SMART health is FAILED after, or the drive counts more bad sectors after than before
  (reallocated, pending, offline uncorrectable; NVMe media errors), or any pending after;
* **passed** otherwise, with the **outliers** it shows beside it: a zone much slower or with
  much longer latency than the disk's own other zones, a disk slower or with longer latency
  than the verdicts kept for its model (other serials) or for its future peers (the members of
  the array it is meant for, where they were qualified), and a latency no disk of its kind
  should have (a new disk with 140 ms write latency turned one rebuild into months).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from app.model.sizes import human_bytes
from app.model.smart import SmartReading
from app.parsers.errors import ParseError
from app.parsers.fio import parse_fio_json
from app.parsers.smartctl_json import reading_from_smartctl_json
from app.plans import ops

# ATA attributes that count sectors the drive could not handle (app/rules/smart.py reads the
# same three): reallocated, pending reallocation, offline uncorrectable
BAD_SECTOR_ATTRS = (5, 197, 198)
PENDING = 197
ZONE_SLOW = 0.5  # a zone slower than half the disk's median zone is an outlier
ZONE_LATENCY = 5.0  # a zone whose p99 latency is over 5x the disk's median zone's
PEER_SLOW = 0.5  # slower than half its model's / peers' median
PEER_LATENCY = 3.0  # p99 latency over 3x its model's / peers' median
# a 1 MiB sequential write at queue depth 1 that takes longer than this at the 99th percentile
# is no healthy disk of its kind (a CMR HDD's is a few ms to a few tens: a seek and a track)
ABSOLUTE_P99_MS = {"hdd": 100.0, "ssd": 20.0}


@dataclass(frozen=True, slots=True)
class Zone:
    offset: int
    size: int
    write_mb_s: float = 0.0
    read_mb_s: float = 0.0
    write_p99_ms: float | None = None
    write_max_ms: float | None = None
    read_p99_ms: float | None = None
    error: str = ""  # why this zone failed ("" passed)


@dataclass(frozen=True, slots=True)
class Verdict:
    device: str  # the kernel name it had
    serial: str | None
    wwn: str | None
    model: str | None
    size_bytes: int
    rotational: bool | None
    taken_at: float
    passed: bool
    reasons: tuple[str, ...] = ()  # why it failed
    outliers: tuple[str, ...] = ()  # what stands out (it may still pass)
    self_tests: tuple[str, ...] = ()  # "short: passed", "long: not run (no self-test support)"
    bad_sectors_before: int | None = None
    bad_sectors_after: int | None = None
    zones: tuple[Zone, ...] = ()
    bytes_written: int = 0
    peers: tuple[str, ...] = ()  # the array members it was compared with
    notes: tuple[str, ...] = field(default=())

    @property
    def word(self) -> str:
        if not self.passed:
            return "FAILED"
        return "passed with outliers" if self.outliers else "passed"

    def median(self, attr: str) -> float | None:
        vals = [getattr(z, attr) for z in self.zones if getattr(z, attr) is not None]
        return statistics.median(vals) if vals else None

    def summary(self) -> str:
        """One line: the verdict, the disk, its speed and latency."""
        w = self.median("write_mb_s")
        p99 = self.median("write_p99_ms")
        speed = f", write {w:.0f} MB/s" if w else ""
        lat = f", p99 {p99:.1f} ms" if p99 is not None else ""
        bad = f", {self.bad_sectors_after} bad sectors" if self.bad_sectors_after else ""
        ident = self.serial or self.wwn or "no serial"
        wrote = f", wrote {human_bytes(self.bytes_written)}" if self.bytes_written else ""
        model = self.model or "model unknown"
        return f"{self.word}: {self.device} ({model}, {ident}){speed}{lat}{bad}{wrote}"

    def lines(self) -> list[str]:
        out = [self.summary()]
        out += [f"why: {r}" for r in self.reasons]
        out += [f"outlier: {o}" for o in self.outliers]
        out += [f"self-test {t}" for t in self.self_tests]
        for i, z in enumerate(self.zones):
            p99 = f"{z.write_p99_ms:.1f}" if z.write_p99_ms is not None else "?"
            err = f"  {z.error}" if z.error else ""
            out.append(
                f"zone {i + 1}: write {z.write_mb_s:.0f} MB/s, verify {z.read_mb_s:.0f} MB/s, "
                f"p99 {p99} ms{err}"
            )
        return out

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["zones"] = [asdict(z) for z in self.zones]
        return d


def _bad_sectors(r: SmartReading | None) -> int | None:
    if r is None or not r.available:
        return None
    found = [a.raw for a in r.attributes if a.id in BAD_SECTOR_ATTRS and a.raw is not None]
    media = r.nvme.get("media_errors")
    if not found and media is None:
        return 0 if r.attributes or r.nvme else None
    return sum(found) + (media or 0)


def _pending(r: SmartReading | None) -> int:
    a = r.attribute(PENDING) if r is not None else None
    return a.raw or 0 if a is not None else 0


@dataclass(frozen=True, slots=True)
class StepOutput:
    """One step as it ran: its operation, whether it passed, its output and why it failed."""

    op: ops.Op
    status: str  # "ok", "failed", "not-run"
    stdout: str = ""
    message: str = ""


def _zone(op: ops.SurfaceTest, out: StepOutput) -> Zone:
    if out.status == "not-run":
        return Zone(op.offset, op.size, error="not run")
    try:
        r = parse_fio_json(out.stdout)
    except ParseError as e:
        why = out.message or f"fio's output is unreadable: {e}"
        return Zone(op.offset, op.size, error=why)
    error = ""
    if out.status != "ok" or r.error:
        error = out.message or f"fio reports error {r.error}"
    elif r.write_bytes < op.size or r.read_bytes < op.size:
        error = f"wrote {r.write_bytes} and verified {r.read_bytes} of its {op.size} bytes"
    return Zone(
        op.offset,
        op.size,
        r.write_bw / 1e6,
        r.read_bw / 1e6,
        r.write_p99_ms,
        r.write_max_ms,
        r.read_p99_ms,
        error,
    )


def _test(o: StepOutput) -> str:
    return str(getattr(o.op, "test", "self-test"))


def _self_test_results(
    planned: Sequence[StepOutput], after: SmartReading | None, reasons: list[str]
) -> list[str]:
    """What each self-test found, from the drive's self-test log read after them (a captive
    test that fails may still end its step well: atacmds.cpp ``ataSmartTest``)."""
    ran = [o for o in planned if o.status == "ok"]
    out = [f"{_test(o)}: not run" for o in planned if o.status == "not-run"]
    if not ran:
        return out + [f"{_test(o)}: FAILED ({o.message})" for o in planned if o.status == "failed"]
    log = after.self_tests if after is not None else None
    if not log:
        reasons.append("the self-tests' results were not read (the drive's self-test log)")
        return out + [f"{_test(o)}: ran, result not read" for o in ran]
    newest = list(log[: len(ran)])  # newest first: the tests this plan ran, last one first
    for o, t in reversed(list(zip(reversed(ran), newest, strict=False))):
        lba = f" at LBA {t.lba_first_error}" if t.lba_first_error is not None else ""
        word = "passed" if t.passed else "FAILED" if t.passed is False else "did not finish"
        out.append(f"{_test(o)}: {word} ({t.status}{lba})")
        if t.passed is not True:
            reasons.append(f"the {_test(o)} self-test ended '{t.status}'{lba}")
    return out


def _outliers_within(zones: Sequence[Zone]) -> list[str]:
    out: list[str] = []
    speeds = [z.write_mb_s for z in zones if z.write_mb_s > 0]
    lats = [z.write_p99_ms for z in zones if z.write_p99_ms is not None]
    med_speed = statistics.median(speeds) if speeds else None
    med_lat = statistics.median(lats) if lats else None
    for i, z in enumerate(zones, 1):
        if med_speed and 0 < z.write_mb_s < ZONE_SLOW * med_speed:
            out.append(
                f"zone {i} writes at {z.write_mb_s:.0f} MB/s, under half the disk's median "
                f"{med_speed:.0f} MB/s"
            )
        if med_lat and z.write_p99_ms is not None and z.write_p99_ms > ZONE_LATENCY * med_lat:
            out.append(
                f"zone {i}'s write latency (p99) is {z.write_p99_ms:.1f} ms, over "
                f"{ZONE_LATENCY:.0f} x the disk's median {med_lat:.1f} ms"
            )
    return out


def compare(v: Verdict, others: Iterable[Verdict], what: str) -> list[str]:
    """Outliers of ``v`` against ``others`` (verdicts of other disks: its model's, its peers')."""
    others = list(others)
    speeds = [s for o in others if (s := o.median("write_mb_s"))]
    lats = [x for o in others if (x := o.median("write_p99_ms")) is not None]
    mine_s, mine_l = v.median("write_mb_s"), v.median("write_p99_ms")
    out: list[str] = []
    if speeds and mine_s and mine_s < PEER_SLOW * statistics.median(speeds):
        out.append(
            f"it writes at {mine_s:.0f} MB/s, under half of {what} ({statistics.median(speeds):.0f}"
            f" MB/s, {len(speeds)} disk{'s' if len(speeds) != 1 else ''})"
        )
    if lats and mine_l is not None and mine_l > PEER_LATENCY * statistics.median(lats):
        out.append(
            f"its write latency (p99) is {mine_l:.1f} ms, over {PEER_LATENCY:.0f} x {what}'s "
            f"{statistics.median(lats):.1f} ms"
        )
    return out


def collect(
    disk: dict[str, Any],
    steps: Sequence[StepOutput],
    taken_at: float,
    *,
    same_model: Sequence[Verdict] = (),
    peers: Sequence[Verdict] = (),
) -> Verdict:
    """The verdict from a qualify plan's steps as they ran (in plan order). ``disk``: the
    disk's name, serial, wwn, model, size, rotational (as probed when the plan was made)."""
    reports = [
        reading_from_smartctl_json(o.stdout, str(disk["name"]), now=taken_at)
        for o in steps
        if isinstance(o.op, ops.SmartReport) and o.status == "ok"
    ]
    before = reports[0] if reports else None
    after = reports[-1] if len(reports) > 1 else None
    reasons: list[str] = []
    zones: list[Zone] = []
    planned: list[StepOutput] = []  # the self-test steps
    for i, o in enumerate(steps, 1):
        op = o.op
        if isinstance(op, (ops.CaptiveSelfTest, ops.NvmeSelfTest)):
            planned.append(o)
            if o.status == "failed":
                reasons.append(f"the {op.test} self-test failed: {o.message or 'see the step'}")
        elif isinstance(op, ops.SurfaceTest):
            zones.append(_zone(op, o))
        elif o.status == "failed":
            reasons.append(f"step {i} failed: {o.message}")
    tests = _self_test_results(planned, after, reasons)
    bad = [z for z in zones if z.error and z.error != "not run"]
    if bad:
        reasons.append(f"the surface test failed in {len(bad)} zone(s): {bad[0].error}")
    left = [z for z in zones if z.error == "not run"]
    if left:
        reasons.append(
            f"the surface test did not finish: {len(left)} of {len(zones)} zones not run"
        )
    if not zones:
        reasons.append("no surface test ran")
    b0, b1 = _bad_sectors(before), _bad_sectors(after)
    smart_planned = any(isinstance(o.op, ops.SmartReport) for o in steps)
    if after is None and smart_planned:
        reasons.append("SMART was not read after the test")
    elif after is not None:
        if (after.health or "").upper() == "FAILED":
            reasons.append("SMART health is FAILED after the test")
        if b0 is not None and b1 is not None and b1 > b0:
            reasons.append(
                f"the drive counts {b1 - b0} more bad sectors after the test ({b0} → {b1})"
            )
        if _pending(after):
            reasons.append(f"{_pending(after)} sectors wait for reallocation after the test")
    v = Verdict(
        device=str(disk["name"]),
        serial=disk.get("serial"),
        wwn=disk.get("wwn"),
        model=disk.get("model"),
        size_bytes=int(disk.get("size_bytes") or 0),
        rotational=disk.get("rotational"),
        taken_at=taken_at,
        passed=not reasons,
        reasons=tuple(reasons),
        self_tests=tuple(tests) or ("none: the plan had no self-test (the drive has none)",),
        bad_sectors_before=b0,
        bad_sectors_after=b1,
        zones=tuple(zones),
        bytes_written=sum(z.size for z in zones if z.error != "not run"),
        peers=tuple(p.device for p in peers),
    )
    outliers = _outliers_within(v.zones)
    p99 = v.median("write_p99_ms")
    limit = ABSOLUTE_P99_MS["hdd" if v.rotational else "ssd"]
    if p99 is not None and p99 > limit:
        outliers.append(
            f"its write latency (p99) is {p99:.1f} ms: over {limit:.0f} ms, more than a "
            f"healthy {'HDD' if v.rotational else 'SSD'} takes for a 1 MiB write"
        )
    mine = [m for m in same_model if m.serial != v.serial]
    outliers += compare(v, mine, f"its model's kept verdicts ({v.model})")
    outliers += compare(v, peers, "its future peers")
    return Verdict(**{**_fields(v), "outliers": tuple(outliers)})


def _fields(v: Verdict) -> dict[str, Any]:
    return {k: getattr(v, k) for k in Verdict.__dataclass_fields__}


@dataclass(frozen=True, slots=True)
class NewDiskCheck:
    """What the kept verdicts say about a replace's new disk, and the admin's override."""

    disk: str
    serial: str | None
    wwn: str | None
    verdict: Verdict | None
    override: str | None = None  # what was typed to use it without a passing verdict
    peers: tuple[str, ...] = ()  # the array's members that were qualified
    outliers: tuple[str, ...] = ()  # the verdict against its future peers' verdicts

    @property
    def ident(self) -> str | None:
        return self.serial or self.wwn

    @property
    def override_word(self) -> str:
        """What the admin types to use it unqualified: its serial (else WWN; a disk with
        neither, its kernel name)."""
        return self.ident or self.disk

    @property
    def overridden(self) -> bool:
        typed = (self.override or "").strip()
        return bool(typed) and typed in {self.serial, self.wwn, self.override_word} - {None}


def verdict_from_json(d: Any) -> Verdict:
    """A kept verdict read back (a file raidman wrote: checked, bounded); ValueError if not one."""
    if not isinstance(d, dict):
        raise ValueError("not an object")
    zones_raw = d.get("zones") or []
    if not isinstance(zones_raw, list) or len(zones_raw) > 1000:
        raise ValueError("zones: not a list")
    zones = []
    for z in zones_raw:
        if not isinstance(z, dict):
            raise ValueError("a zone is not an object")
        zones.append(Zone(**{k: z[k] for k in Zone.__dataclass_fields__ if k in z}))
    kw = {k: d[k] for k in Verdict.__dataclass_fields__ if k in d and k != "zones"}
    for k in ("reasons", "outliers", "self_tests", "peers", "notes"):
        v = kw.get(k, ())
        if not isinstance(v, list | tuple) or not all(isinstance(x, str) for x in v):
            raise ValueError(f"{k}: not a list of texts")
        kw[k] = tuple(x[:500] for x in v[:100])
    if not isinstance(kw.get("passed"), bool) or not isinstance(kw.get("device"), str):
        raise ValueError("passed/device missing")
    return Verdict(zones=tuple(zones), **kw)
