"""Many hosts over ssh (issue 14, "Done when": probing 20 hosts takes ≤ 2 × one host).

A real OpenSSH server on loopback (tests/hosts/sshd.py: generated keys, one alias per address
127.0.0.1 … 127.0.0.20, so each alias has its own connection and ControlMaster, as 20 machines
would) and the real console path: ``raidman report --json --host fleet1`` against
``raidman report --json --host @fleet`` (the 20 aliases, probed at once: one thread and one ssh
round trip per host). Medians of N runs with the ControlMasters up (one warm-up run first, shown
as "cold").

All 20 "machines" are this one: their probe scripts (sh, lsblk, smartctl, ... per host) share
this machine's cores, and the other helpers' load, which on a real fleet runs on 20 machines at
once. The wall ratio here is therefore an upper bound, and the two sides are also measured apart:

- local (raidman's side): CPU time of the ``raidman report`` process with its ssh clients, plus
  the ControlMaster processes (they encrypt the traffic), for 20 hosts against one — what the
  admin's machine pays per host;
- remote (each machine's side): CPU time of one probe's script and everything it runs there
  (``ssh HOST 'sh -s; times'``: the shell's children's times), alone and 20 at once; 20 of them
  over this machine's cores is the least wall time the remote side can take here, which a
  fleet spreads over 20 machines.

Run: ``.venv/bin/python benchmarks/bench_hosts.py [--quick] [--json] [--hosts N] [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import Figure, at_most, child_env, emit, guard, info, median, python

from tests.hosts.sshd import LocalSshd

TARGET_RATIO = 2.0


def _sshd_path() -> str:
    for p in ("/usr/sbin/sshd", "/usr/bin/sshd"):
        if Path(p).exists():
            return p
    raise RuntimeError("sshd not installed (make tool-deps: openssh-server)")


def _cpu_of(pids: list[int]) -> float:
    """user+sys seconds of running processes (the ControlMasters: not our children)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def _masters(server: LocalSshd) -> list[int]:
    pids = []
    for a in server.aliases:
        p = subprocess.run(
            [
                *("ssh", "-F", str(server.ssh_config)),
                *("-o", f"ControlPath={server.control_dir}/%C", "-O", "check", a),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        m = re.search(r"pid=(\d+)", p.stderr)
        if m:
            pids.append(int(m.group(1)))
    return pids


def _report(env: dict[str, str], host: str, masters: list[int]) -> tuple[float, float]:
    """(wall, local CPU) of one ``raidman report --json --host HOST``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    m0 = _cpu_of(masters)
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
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError(f"report --host {host}: exit {p.returncode}: {p.stderr[-300:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return took, cpu + _cpu_of(masters) - m0


def _times_children(tail: bytes) -> float:
    """The children's line of ``times`` ("0m0.052s 0m0.015s"): user + sys seconds."""
    lines = tail.decode(errors="replace").strip().splitlines()
    got = re.findall(r"(\d+)m([\d.]+)s", lines[-1] if lines else "")
    if len(got) != 2:
        raise RuntimeError(f"no times line in {tail[-80:]!r}")
    return sum(int(m) * 60 + float(sec) for m, sec in got)


def _remote_probe(server: LocalSshd, host: str, env: dict[str, str]) -> float:
    """CPU seconds one probe's script costs the machine it runs on."""
    from backends.linux.ssh import SshSource, SshTarget
    from backends.linux.ssh_batch import parse_batch

    target = SshTarget(host, ssh_config=str(server.ssh_config), control_dir=server.control_dir)
    script = SshSource(target).probe_spec().script()
    p = subprocess.run(
        target.argv("sh -s; times"),
        input=script.encode(),
        capture_output=True,
        env=env,
        timeout=600,
        check=False,
    )
    end = p.stdout.rfind(b"E\0")
    if end < 0 or not parse_batch(p.stdout[: end + 2]).complete:
        raise RuntimeError(f"probe script on {host}: {p.stderr[-300:]!r}")
    return _times_children(p.stdout[end + 2 :])


def _remote(server: LocalSshd, env: dict[str, str], hosts: list[str]) -> list[float]:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(hosts)) as pool:
        return list(pool.map(lambda h: _remote_probe(server, h, env), hosts))


def measure(n_hosts: int, runs: int) -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="bench-hosts-") as tmp:
        server = LocalSshd(_sshd_path(), Path(tmp), aliases=n_hosts)
        server.start()
        try:
            env = child_env()
            env["XDG_CONFIG_HOME"] = str(Path(tmp) / "config")
            env["RAIDMAN_SSH_CONTROL_DIR"] = server.control_dir
            env["RAIDMAN_STATE_DIR"] = str(Path(tmp) / "state")
            server.hosts_toml(Path(tmp) / "config")
            cold_many, _ = _report(env, "@fleet", [])
            cold_one, _ = _report(env, "fleet1", [])
            masters = _masters(server)
            one, many, cpu_one, cpu_many, rem_one, rem_many = [], [], [], [], [], []
            for _ in range(runs):
                w, c = _report(env, "fleet1", masters)
                one.append(w)
                cpu_one.append(c)
                w, c = _report(env, "@fleet", masters)
                many.append(w)
                cpu_many.append(c)
                rem_one.extend(_remote(server, env, server.aliases[:1]))
                rem_many.append(sum(_remote(server, env, server.aliases)))
        finally:
            server.stop()
    m1, mn = median(one), median(many)
    c1, cn = median(cpu_one), median(cpu_many)
    r1, rn = median(rem_one), median(rem_many)
    cores = len(os.sched_getaffinity(0))
    how = f"medians of {runs}, ControlMasters up"
    return [
        info("report --host fleet1", m1, "s", how),
        info(f"report --host @fleet ({n_hosts} hosts)", mn, "s", how),
        at_most(f"{n_hosts} hosts / 1 host", mn / m1, "×", TARGET_RATIO, "wall, probed at once"),
        info(f"cold: {n_hosts} hosts / 1 host", cold_many / cold_one, "×", "first connections"),
        info("local CPU, 1 host", c1, "s", "raidman + ssh clients + ControlMaster"),
        info(f"local CPU, {n_hosts} hosts", cn, "s", "the same, --host @fleet"),
        info(f"local CPU {n_hosts} / 1", cn / c1, "×", "what the admin's machine pays"),
        info("remote CPU of one probe", r1, "s", "sh -s and all it runs (times)"),
        info(
            f"remote CPU of {n_hosts} probes at once",
            rn,
            "s",
            f"one machine here, {n_hosts} on a fleet",
        ),
        info(
            f"{n_hosts} probes on {cores} cores, at least",
            rn / cores,
            "s",
            "the remote wall floor here (a fleet: one probe's)",
        ),
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
