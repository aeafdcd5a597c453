"""The shipped alerting rules: valid for Prometheus and their unit tests pass (promtool)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.tools import promtool

DIR = Path(__file__).parents[2] / "packaging" / "prometheus"


def test_rules_check() -> None:
    res = subprocess.run(
        [promtool(), "check", "rules", str(DIR / "raidman.rules.yml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "SUCCESS: 9 rules found" in res.stdout


def test_rules_unit_tests() -> None:
    """degraded, slow sync, long ETA, rebuild > 1.5 × capacity (seed 000 numbers), SMART
    failing, a new error finding: raidman.rules.test.yml, each with a case that must not fire;
    a check overdue after 35 days: raidman.rules.days.test.yml (evaluated hourly)."""
    res = subprocess.run(
        [promtool(), "test", "rules", "raidman.rules.test.yml", "raidman.rules.days.test.yml"],
        cwd=DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.count("SUCCESS") == 2, res.stdout  # both files ran
