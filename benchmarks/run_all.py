"""Run every benchmark and print one table (``make bench``).

Each script runs in its own process with ``--json``; its own table is shown as it finishes and the
figures are collected into the summary at the end. Nothing is asserted: "NOT MET" is information.

    .venv/bin/python benchmarks/run_all.py [--quick] [--vm]

``--quick`` shortens every run (for the smoke test); ``--vm`` adds the probe inside a QEMU VM with
md and LVM (bench_probe.py --vm, a few minutes).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import BENCH_DIR, Figure, child_env, parse_json_line, python, table

SCRIPTS = (
    "bench_side_by_side.py",
    "bench_probe.py",
    "bench_watch.py",
    "bench_hosts.py",
    "bench_fleet_watch.py",
    "bench_scale.py",
)


def run_script(name: str, extra: list[str]) -> tuple[list[Figure], float]:
    t0 = time.perf_counter()
    p = subprocess.run(
        [python(), str(BENCH_DIR / name), "--json", *extra],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=1800,
        check=False,
    )
    took = time.perf_counter() - t0
    body = "\n".join(line for line in p.stdout.splitlines() if not line.startswith("BENCH-JSON"))
    print(body, flush=True)
    if p.stderr.strip():
        print(p.stderr.rstrip(), file=sys.stderr, flush=True)
    figs = parse_json_line(p.stdout)
    if not figs:
        figs = [Figure(name, float("nan"), "", "", False, f"no figures (exit {p.returncode})")]
    print(f"({name}: {took:.1f} s)\n", flush=True)
    return figs, took


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Run every raidman benchmark and print a table.")
    ap.add_argument("--quick", action="store_true", help="short runs (checks they still work)")
    ap.add_argument("--vm", action="store_true", help="also the probe inside a QEMU VM")
    args = ap.parse_args(argv)
    everything: list[Figure] = []
    total = 0.0
    for name in SCRIPTS:
        extra = ["--quick"] if args.quick else []
        if args.vm and name == "bench_probe.py":
            extra.append("--vm")
        figs, took = run_script(name, extra)
        everything += figs
        total += took
    print(table(everything, f"raidman benchmarks — summary ({total:.0f} s)"))
    unmet = [f.name.strip() for f in everything if f.met is False]
    print(f"\ntargets not met: {', '.join(unmet) if unmet else 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
