"""fio's ``--output-format=json``: the bandwidth and IOPS of one run, parsed, never scraped.

raidman runs fio with ``--group_reporting`` (or one job of its own), so the document holds one
job whose ``read`` and ``write`` objects carry ``bw_bytes`` (bytes/s), ``iops``, ``io_bytes`` and
the completion latencies ``clat_ns`` (``max`` and ``percentile`` with keys like ``"99.000000"``,
seen with fio 3.33; a write with ``--verify`` puts its verify pass under ``read``).
fio may print warnings before the JSON ("fio: ..."): the document starts at the first ``{``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.parsers.errors import ParseError
from app.parsers.safe import load_json, only_parse_errors

SOURCE = "fio"
MAX_TEXT = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class FioResult:
    read_bw: float  # bytes/s
    read_iops: float
    write_bw: float
    write_iops: float
    error: int = 0
    read_bytes: int = 0
    write_bytes: int = 0
    read_p99_ms: float | None = None  # 99th percentile completion latency
    write_p99_ms: float | None = None
    read_max_ms: float | None = None
    write_max_ms: float | None = None


def _num(d: Any, key: str, where: str) -> float:
    v = d.get(key) if isinstance(d, dict) else None
    if isinstance(v, bool) or not isinstance(v, int | float) or v < 0 or v > 2**63:
        raise ParseError(SOURCE, f"{where}.{key}: not a number: {str(v)[:40]!r}")
    return float(v)


def _lat(side: Any, key: str) -> float | None:
    """A completion latency in ms: ``clat_ns.max``, or the percentile ``key`` (None: absent)."""
    clat = side.get("clat_ns") if isinstance(side, dict) else None
    if not isinstance(clat, dict):
        return None
    v = clat.get("max") if key == "max" else None
    if key != "max":
        pct = clat.get("percentile")
        v = pct.get(key) if isinstance(pct, dict) else None
    if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < 2**63:
        return None
    return float(v) / 1e6


@only_parse_errors(SOURCE)
def parse_fio_json(text: str) -> FioResult:
    if len(text) > MAX_TEXT:
        raise ParseError(SOURCE, "output larger than 4 MiB")
    start = text.find("{")
    if start < 0:
        raise ParseError(SOURCE, "no JSON document in fio's output")
    doc = load_json(text[start:], SOURCE)
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    if not isinstance(jobs, list) or len(jobs) != 1:
        raise ParseError(SOURCE, "'jobs': one job expected (raidman runs --group_reporting)")
    job = jobs[0]
    if not isinstance(job, dict):
        raise ParseError(SOURCE, "'jobs[0]' is not an object")
    err = job.get("error", 0)
    if not isinstance(err, int) or isinstance(err, bool):
        raise ParseError(SOURCE, "'jobs[0].error' is not a number")
    r, w = job.get("read"), job.get("write")
    return FioResult(
        _num(r, "bw_bytes", "read"),
        _num(r, "iops", "read"),
        _num(w, "bw_bytes", "write"),
        _num(w, "iops", "write"),
        err,
        int(_num(r, "io_bytes", "read")) if isinstance(r, dict) and "io_bytes" in r else 0,
        int(_num(w, "io_bytes", "write")) if isinstance(w, dict) and "io_bytes" in w else 0,
        _lat(r, "99.000000"),
        _lat(w, "99.000000"),
        _lat(r, "max"),
        _lat(w, "max"),
    )
