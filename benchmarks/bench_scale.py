"""``report`` at scale (issue 23, item 12): a simulated machine of 1,000 and of 5,000 disks.

For each size, in a fresh process: ``SimulatedBackend.big(disks=N, arrays=N // 4)`` (arrays of
four whole disks, 16 of them syncing), then the parts of ``raidman report`` timed one by one —
the probe, SMART for every disk, the audit (``report_findings``: the rules' inputs and every
rule) and the text rendering — and their sum, which is what ``report`` spends after start-up.
The audit alone is timed again on the same model (``audit()`` without gathering its inputs).

Targets: at 5,000 disks ``report`` ≤ 5 s and the audit ≤ 2 s; the growth from 1,000 to 5,000
disks ≤ 6× (linear would be 5×; the audit used to grow ~n^1.7: 44 s at 5,000 disks).

Run: ``.venv/bin/python benchmarks/bench_scale.py [--quick] [--json] [--sizes 1000,5000]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, Figure, at_most, child_env, emit, guard, info, median, python

REPORT_TARGET_S = 5.0
AUDIT_TARGET_S = 2.0
GROWTH_TARGET = 6.0

_CHILD = r"""
import json, sys, time
from backends.simulated.backend import SimulatedBackend
from app.report import machine_to_text, read_smart, report_findings
from app.rules.engine import audit
from app.rules.inputs import gather

n = int(sys.argv[1])
backend = SimulatedBackend.big(disks=n, arrays=n // 4)
t0 = time.perf_counter()
machine = backend.probe()
t1 = time.perf_counter()
readings = read_smart(backend, machine)
t2 = time.perf_counter()
findings = report_findings(backend, machine, readings, None)
t3 = time.perf_counter()
text = machine_to_text(machine, smart=readings, findings=findings)
t4 = time.perf_counter()
inputs = gather(backend, machine)
t5 = time.perf_counter()
audit(machine, inputs)
t6 = time.perf_counter()
print(json.dumps({
    "disks": len(machine.disks), "arrays": len(machine.arrays), "findings": len(findings),
    "lines": text.count("\n"), "probe": t1 - t0, "smart": t2 - t1, "audit": t3 - t2,
    "render": t4 - t3, "report": t4 - t0, "rules_only": t6 - t5,
}))
"""


def run_size(n: int) -> dict[str, Any]:
    p = subprocess.run(
        [python(), "-c", _CHILD, str(n)],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=ROOT,
        check=False,
        timeout=900,
    )
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed")
    return dict(json.loads(p.stdout.strip().splitlines()[-1]))


def run_median(n: int, repeat: int) -> dict[str, Any]:
    """Each part's median over ``repeat`` fresh processes (the machine is shared: one run can
    land on a busy second)."""
    got = [run_size(n) for _ in range(repeat)]
    out = dict(got[0])
    for k in ("probe", "smart", "audit", "render", "report", "rules_only"):
        out[k] = median([g[k] for g in got])
    return out


def measure(sizes: list[int], repeat: int) -> list[Figure]:
    runs = {n: run_median(n, repeat) for n in sizes}
    figs: list[Figure] = []
    for n, r in runs.items():
        note = f"{r['disks']} disks, {r['arrays']} arrays, {r['findings']} findings"
        big = n == max(sizes) and n >= 5000
        for part in ("probe", "smart", "render"):
            figs.append(info(f"{part} @{n}", r[part], "s", note if part == "probe" else ""))
        if big:
            figs.append(at_most(f"audit @{n}", r["audit"], "s", AUDIT_TARGET_S, "report_findings"))
            figs.append(at_most(f"report @{n}", r["report"], "s", REPORT_TARGET_S, "sum of parts"))
        else:
            figs.append(info(f"audit @{n}", r["audit"], "s", "report_findings"))
            figs.append(info(f"report @{n}", r["report"], "s", "sum of parts"))
        figs.append(info(f"rules only @{n}", r["rules_only"], "s", "audit() on gathered inputs"))
    lo, hi = min(sizes), max(sizes)
    if hi > lo:
        for part in ("audit", "report"):
            growth = runs[hi][part] / runs[lo][part] if runs[lo][part] else float("nan")
            figs.append(
                at_most(
                    f"{part} growth {lo}->{hi}",
                    growth,
                    "x",
                    GROWTH_TARGET * hi / lo / 5,
                    f"{hi / lo:g}x the disks",
                )
            )
    return figs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="200 and 1,000 disks")
    ap.add_argument("--json", action="store_true", help="end with a JSON line (for run_all.py)")
    ap.add_argument("--sizes", default=None, help="comma-separated disk counts")
    ap.add_argument("--runs", type=int, default=None, help="processes per size (median)")
    args = ap.parse_args(argv)
    repeat = args.runs or (1 if args.quick else 3)
    default = "200,1000" if args.quick else "1000,5000"
    sizes = sorted({int(s) for s in (args.sizes or default).split(",")})
    figs = guard("scale", lambda: measure(sizes, repeat))
    title = f"bench_scale: report on {' and '.join(map(str, sizes))} simulated disks"
    emit(figs, f"{title} (median of {repeat} runs)", args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
