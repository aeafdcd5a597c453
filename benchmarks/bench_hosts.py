"""Many hosts over ssh (issue 14, "Done when": probing 20 hosts takes ≤ 2 × one host).

A real OpenSSH server on loopback (tests/hosts/sshd.py: generated keys, one alias per address
127.0.0.1 … 127.0.0.20, so each alias has its own connection and ControlMaster, as 20 machines
would) and the real console path: ``raidman report --json --host fleet1`` against
``raidman report --json --host @fleet`` (the 20 aliases, probed at once: one thread and one ssh
round trip per host). Medians of N runs with the ControlMasters up (one warm-up run first, shown
as "cold"). All 20 "machines" are this one: their lsblk/lvm/smartctl runs share its CPUs, which a
real fleet would not — the ratio here is an upper bound.

Run: ``.venv/bin/python benchmarks/bench_hosts.py [--quick] [--json] [--hosts N]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import Figure, at_most, child_env, emit, guard, info, median, python

TARGET_RATIO = 2.0


def _sshd_path() -> str:
    for p in ("/usr/sbin/sshd", "/usr/bin/sshd"):
        if Path(p).exists():
            return p
    raise RuntimeError("sshd not installed (make tool-deps: openssh-server)")


def _report(env: dict[str, str], host: str) -> float:
    t0 = time.perf_counter()
    p = subprocess.run(
        [python(), "-m", "app.cli", "report", "--json", "--host", host],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    took = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"report --host {host}: exit {p.returncode}: {p.stderr[-300:]}")
    return took


def measure(n_hosts: int, runs: int) -> list[Figure]:
    from tests.hosts.sshd import LocalSshd

    with tempfile.TemporaryDirectory(prefix="bench-hosts-") as tmp:
        server = LocalSshd(_sshd_path(), Path(tmp), aliases=n_hosts)
        server.start()
        try:
            env = child_env()
            env["XDG_CONFIG_HOME"] = str(Path(tmp) / "config")
            env["RAIDMAN_SSH_CONTROL_DIR"] = server.control_dir
            env["RAIDMAN_STATE_DIR"] = str(Path(tmp) / "state")
            server.hosts_toml(Path(tmp) / "config")
            cold_many = _report(env, "@fleet")
            cold_one = _report(env, "fleet1")
            one, many = [], []
            for _ in range(runs):
                one.append(_report(env, "fleet1"))
                many.append(_report(env, "@fleet"))
        finally:
            server.stop()
    m1, mn = median(one), median(many)
    how = f"medians of {runs}, ControlMasters up"
    return [
        info("report --host fleet1", m1, "s", how),
        info(f"report --host @fleet ({n_hosts} hosts)", mn, "s", how),
        at_most(f"{n_hosts} hosts / 1 host", mn / m1, "×", TARGET_RATIO, "probed at once"),
        info(f"cold: {n_hosts} hosts / 1 host", cold_many / cold_one, "×", "first connections"),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="fewer runs and hosts")
    ap.add_argument("--json", action="store_true", help="end with a JSON line (for run_all.py)")
    ap.add_argument("--hosts", type=int, default=None)
    ap.add_argument("--runs", type=int, default=None)
    args = ap.parse_args(argv)
    n = args.hosts or (5 if args.quick else 20)
    runs = args.runs or (1 if args.quick else 5)
    os.environ.setdefault("LC_ALL", "C")
    figs = guard("hosts", lambda: measure(n, runs))
    emit(figs, f"bench_hosts: {n} hosts over ssh vs one (issue 14)", args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
