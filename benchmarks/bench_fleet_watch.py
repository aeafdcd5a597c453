"""Issue 29: watching 20 hosts over ssh costs at most 2 × watching one, on raidman's side.

A real OpenSSH server on loopback (tests/hosts/sshd.py: one alias per address 127.0.0.1 …
127.0.0.20, each its own connection and ControlMaster, as 20 machines would have) and two TUIs
started together, each on its own 200×60 pseudo-terminal, measured over the same window:

* ``raidman --host fleet1``: one host (its main view: a probe every 10 s, a sample each second);
* ``raidman --host @fleet``: the hosts view of the 20 aliases (each host probed every 10 s,
  audited now and then).

raidman's side is its process tree (psutil: the process, its ssh clients and the children it
reaped) plus its ControlMasters (ControlPersist daemons, not its children: found with
``ssh -O check``); each TUI has a control directory of its own, so no master is shared. The
sshd side (the server and every session it forked: the probe scripts run there) is measured
apart, for both TUIs together, and reported: on a real fleet it runs on the 20 machines.

The window opens ``--warmup`` seconds after both drew their first frame (start-up probes and the
first audits are not counted). Nothing is asserted.

Run: ``.venv/bin/python benchmarks/bench_fleet_watch.py [--quick] [--window S] [--json]``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import Figure, at_most, child_env, emit, guard, info
from bench_hosts import _cpu_of, _sshd_path
from bench_side_by_side import COLS, RAIDMAN, ROWS, Contestant, side_by_side, tree_cpu

from tests.hosts.sshd import LocalSshd

TARGET_RATIO = 2.0


def masters(server: LocalSshd, control_dir: Path, aliases: list[str]) -> list[int]:
    """The ControlMaster pids of ``aliases`` under ``control_dir``."""
    pids = []
    for a in aliases:
        p = subprocess.run(
            [
                *("ssh", "-F", str(server.ssh_config)),
                *("-o", f"ControlPath={control_dir}/%C", "-O", "check", a),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if m := re.search(r"pid=(\d+)", p.stderr):
            pids.append(int(m.group(1)))
    return pids


def stop_masters(server: LocalSshd, control_dir: Path) -> None:
    for a in server.aliases:
        subprocess.run(
            [
                *("ssh", "-F", str(server.ssh_config)),
                *("-o", f"ControlPath={control_dir}/%C", "-O", "exit", a),
            ],
            capture_output=True,
            check=False,
            timeout=10,
        )


def sshd_cpu(server: LocalSshd) -> float:
    return sum(tree_cpu(p.pid) for p in server.procs)


def measure(n_hosts: int, window: float, warmup: float) -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp_s:
        tmp = Path(tmp_s)
        server = LocalSshd(_sshd_path(), tmp, aliases=n_hosts)
        server.start()
        server.hosts_toml(tmp / "config")
        dirs = {"one": tmp / "cm-one", "fleet": tmp / "cm-fleet"}

        def env(name: str) -> dict[str, str]:
            e = child_env()
            e["XDG_CONFIG_HOME"] = str(tmp / "config")
            e["RAIDMAN_SSH_CONTROL_DIR"] = str(dirs[name])
            e["RAIDMAN_STATE_DIR"] = str(tmp / f"state-{name}")
            e.setdefault("LC_ALL", "C")
            return e

        for d in dirs.values():
            d.mkdir(mode=0o700)
        one = Contestant("one", [RAIDMAN, "--host", "fleet1"], "fleet1", env=env("one"))
        fleet = Contestant(
            "fleet", [RAIDMAN, "--host", "@fleet"], f"fleet{n_hosts}", env=env("fleet")
        )
        got: dict[str, list[float]] = {
            "one": [],
            "fleet": [],
            "sshd": [],
            "py-one": [],
            "py-fleet": [],
        }

        def at_window_edge() -> None:
            for c in (one, fleet):
                assert c.proc is not None
                got[f"py-{c.name}"].append(_cpu_of([c.proc.pid]))  # the Python process alone
            got["one"].append(_cpu_of(masters(server, dirs["one"], ["fleet1"])))
            got["fleet"].append(_cpu_of(masters(server, dirs["fleet"], server.aliases)))
            got["sshd"].append(sshd_cpu(server))

        try:
            wall = side_by_side([one, fleet], window, warmup, edge=at_window_edge)
        finally:
            for d in dirs.values():
                stop_masters(server, d)
            server.stop()
    # masters: their CPU at the window's two edges; a master that started inside the window
    # counts from zero (it was not there at the start)
    own = {c.name: (c.cpu[1] - c.cpu[0]) + (got[c.name][1] - got[c.name][0]) for c in (one, fleet)}
    pct = {k: v / wall * 100 for k, v in own.items()}
    sshd = (got["sshd"][1] - got["sshd"][0]) / wall * 100
    py = {k: (got[f"py-{k}"][1] - got[f"py-{k}"][0]) / wall * 100 for k in ("one", "fleet")}
    how = f"{wall:.0f} s window after {warmup:g} s warm-up, {COLS}×{ROWS} pty"
    return [
        info("raidman --host fleet1 (one host)", pct["one"], "% core", how + "; + its master"),
        info(
            f"raidman --host @fleet ({n_hosts} hosts)",
            pct["fleet"],
            "% core",
            "the hosts view; + its masters",
        ),
        info(
            "  of which raidman's Python process, one / fleet",
            py["one"],
            "% core",
            f"fleet: {py['fleet']:.2f} % core; the rest: ssh clients and ControlMasters",
        ),
        at_most(
            f"{n_hosts} hosts / 1 host (raidman's side)",
            pct["fleet"] / pct["one"] if pct["one"] > 0 else float("nan"),
            "×",
            TARGET_RATIO,
            "same window",
        ),
        info(
            "sshd side, both together",
            sshd,
            "% core",
            "the servers and their sessions (the probe scripts): a fleet's 20 machines",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="5 hosts, a 10 s window")
    ap.add_argument("--hosts", type=int, default=None)
    ap.add_argument("--window", type=float, default=None, help="s (default 60)")
    ap.add_argument("--warmup", type=float, default=None, help="s after both first frames")
    ap.add_argument("--json", action="store_true", help="end with a JSON line (for run_all.py)")
    args = ap.parse_args(argv)
    n = args.hosts or (5 if args.quick else 20)
    window = args.window or (10.0 if args.quick else 60.0)
    warmup = args.warmup if args.warmup is not None else (5.0 if args.quick else 20.0)
    os.environ.setdefault("LC_ALL", "C")
    figs = guard("fleet", lambda: measure(n, window, warmup))
    emit(figs, f"bench_fleet_watch: watching {n} hosts over ssh vs one (issue 29)", args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
