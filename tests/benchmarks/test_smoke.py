"""The benchmark scripts still run (``--quick``) and print their figures. Timings are not checked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "script",
    [
        "bench_probe.py",
        "bench_watch.py",
        "bench_side_by_side.py",
        "bench_hosts.py",
        "bench_fleet_watch.py",
        "bench_scale.py",
    ],
)
def test_benchmark_runs_and_prints_figures(script: str) -> None:
    p = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr
    assert "BENCH-JSON: [" in p.stdout
    assert "could not be measured" not in p.stderr, p.stderr
