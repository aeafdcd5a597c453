"""fio's ``--output-format=json``: the bandwidth and IOPS of one run, parsed, never scraped.

raidman runs fio with ``--group_reporting``, so the document holds one job whose ``read`` and
``write`` objects carry ``bw_bytes`` (bytes/s), ``iops`` and ``io_bytes`` (seen with fio 3.33).
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


def _num(d: Any, key: str, where: str) -> float:
    v = d.get(key) if isinstance(d, dict) else None
    if isinstance(v, bool) or not isinstance(v, int | float) or v < 0 or v > 2**63:
        raise ParseError(SOURCE, f"{where}.{key}: not a number: {str(v)[:40]!r}")
    return float(v)


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
    )
