"""``make test``: the whole suite, in phases, with each phase's wall time and CPU time.

1. install: the venv and its packages, the system packages of the VM and tool tests (in
   parallel: apt waits for its lock);
2. at once, because the real-kernel guests spend much of their time waiting on md and the
   tests without a VM much of theirs waiting on pseudo-terminals and timers:
   * lint (ruff, ruff format, mypy, import contracts), then the tests without a VM on every
     core (pytest-xdist) -- shown as they run;
   * the VM tests (``-m vm``) in ``VM_JOBS`` guests (one per xdist worker, booted once each),
     into ``vm-work/vm-tests.log`` -- shown whole when the other side is done, then followed to
     the end, so that the two logs never interleave.

The exit status is non-zero when any phase failed; every phase runs to its end either way, so
one run shows every failure. Environment: ``JOBS`` (xdist workers without a VM, default
``auto``), ``VM_JOBS`` (guests, default 2), ``PYTHON`` (the interpreter the venv is made from).
Standard library only: it runs before the venv exists.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / ".venv" / "bin"
VM_LOG = REPO / "vm-work" / "vm-tests.log"
ALL = Path(".venv") / ".installed-all"  # the Makefile's stamp: venv with the [test,dev] extras


@dataclass
class Phase:
    name: str
    wall_s: float = 0.0
    cpu_s: float = 0.0  # user + system of the phase's processes and everything they waited for
    rc: int | None = None


def _cpu(ru: resource.struct_rusage) -> float:
    return float(ru.ru_utime + ru.ru_stime)


def machine_busy_s() -> float:
    """CPU seconds every process on this machine has used since boot (/proc/stat: user, nice,
    system, irq, softirq, steal), to tell this run's load from other processes'."""
    with open("/proc/stat") as f:
        fields = f.readline().split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def run(phase: Phase, argv: list[str], log: IO[bytes] | None = None, **kw: Any) -> int:
    """``argv`` to its end, its output to ``log`` (default: this process's): the phase's wall
    time, CPU time (wait4's rusage of the child: its own and its reaped descendants', QEMU
    included) and exit code."""
    head = f"\n===== {phase.name}: {' '.join(argv)}\n"
    if log is None:
        print(head, end="", flush=True)
    else:
        log.write(head.encode())
        log.flush()
        kw.update(stdout=log, stderr=subprocess.STDOUT)
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(argv, cwd=REPO, **kw)
    except OSError as e:  # the program is not there (an install that did not finish): a failure
        msg = f"cannot run {argv[0]}: {e}\n"
        if log is None:
            print(msg, end="", flush=True)
        else:
            log.write(msg.encode())
        rc, ru = 127, None
    else:
        _, status, ru = os.wait4(proc.pid, 0)
        rc = proc.returncode = os.waitstatus_to_exitcode(status)
    phase.wall_s += time.monotonic() - t0
    phase.cpu_s += _cpu(ru) if ru is not None else 0.0
    phase.rc = rc if phase.rc in (None, 0) else phase.rc
    return rc


def _follow(path: Path, done: threading.Event, poll_s: float = 0.5) -> None:
    """Print ``path`` from its start, then what is added to it until ``done`` (like tail -f)."""
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 16)
            if chunk:
                sys.stdout.buffer.write(chunk)
                sys.stdout.flush()
                continue
            if done.is_set():
                rest = f.read()
                sys.stdout.buffer.write(rest)
                sys.stdout.flush()
                return
            time.sleep(poll_s)


def main() -> int:
    t_start, busy_start = time.monotonic(), machine_busy_s()
    jobs = os.environ.get("JOBS", "auto")
    vm_jobs = os.environ.get("VM_JOBS", "2")
    make = os.environ.get("MAKE", "make")
    install, lint, unit, vm = (
        Phase("install"),
        Phase("lint"),
        Phase("tests without a VM"),
        Phase(f"VM tests ({vm_jobs} guests)"),
    )

    run(install, [make, "--no-print-directory", "-j3", str(ALL), "vm-deps", "tool-deps"])
    if install.rc != 0:
        print(f"\ninstall failed (exit {install.rc})", flush=True)
        return 1
    # the guests read the repo over 9p and cannot write it: compiled once here, natively, so that
    # no guest compiles a module (seconds of CPU each under TCG)
    run(
        install,
        [str(BIN / "python"), "-m", "compileall", "-q", "app", "backends", "widgets", "tests"],
    )

    VM_LOG.parent.mkdir(exist_ok=True)
    vm_env = dict(os.environ)
    vm_env["RAIDMAN_VM_REQUIRED"] = os.environ.get(
        "RAIDMAN_VM_REQUIRED", "1" if os.environ.get("CI") else "0"
    )
    vm_argv = [str(BIN / "pytest"), "-m", "vm", "-n", vm_jobs, "--dist", "worksteal"]
    vm_done = threading.Event()

    def vm_phase() -> None:
        try:
            with open(VM_LOG, "wb") as log:
                run(vm, vm_argv, log, env=vm_env, stdin=subprocess.DEVNULL)
        finally:
            vm_done.set()

    vm_thread = threading.Thread(target=vm_phase, name="vm-tests")
    vm_thread.start()

    for argv in (
        [str(BIN / "ruff"), "check", "."],
        [str(BIN / "ruff"), "format", "--check", "app", "widgets", "backends"],
        [str(BIN / "mypy")],
        [str(BIN / "lint-imports")],
    ):
        run(lint, argv)
    run(unit, [str(BIN / "pytest"), "-m", "not vm", "-n", jobs])

    print(
        f"\n(the VM tests' log so far, then as it goes on: {VM_LOG.relative_to(REPO)})", flush=True
    )
    while not VM_LOG.exists():
        time.sleep(0.5)
    _follow(VM_LOG, vm_done)
    vm_thread.join()

    total, busy = time.monotonic() - t_start, machine_busy_s() - busy_start
    phases = (install, lint, unit, vm)
    ours = sum(p.cpu_s for p in phases)
    print("\n===== phases (wall: elapsed; CPU: user + system of the phase's processes)")
    for p in phases:
        word = "ok" if p.rc == 0 else f"FAILED (exit {p.rc})"
        print(f"  {p.name:30} {p.wall_s:7.1f} s wall {p.cpu_s:8.1f} s CPU  {word}")
    print(
        f"  {'total':30} {total:7.1f} s wall {ours:8.1f} s CPU  (lint and the tests without a VM ran beside the VM tests)"
    )
    print(
        f"  machine: {os.cpu_count()} cores, {busy:.0f} s of CPU used by all processes in those "
        f"{total:.0f} s ({busy / max(total, 1e-9) / (os.cpu_count() or 1) * 100:.0f} % busy; "
        f"other processes than this run's: ~{max(0.0, busy - ours):.0f} s)"
    )
    return 0 if all(p.rc == 0 for p in phases) else 1


if __name__ == "__main__":
    sys.exit(main())
