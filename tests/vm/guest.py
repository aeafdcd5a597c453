"""Functions that run INSIDE the guest (``vm.call("tests.vm.guest:NAME")``), against the real kernel.

Standard library plus raidman only; each returns something JSON-serialisable.
"""

from __future__ import annotations

import dataclasses
from typing import Any


def probe_asdict() -> dict[str, Any]:
    """raidman's model of the guest: ``dataclasses.asdict(LinuxBackend().probe())``."""
    from backends.linux import LinuxBackend

    machine = LinuxBackend().probe()
    return dataclasses.asdict(machine)


def sample_asdict() -> dict[str, Any]:
    """raidman's 1 Hz sample of the guest: ``dataclasses.asdict(LinuxBackend().sample())``."""
    from backends.linux import LinuxBackend

    return dataclasses.asdict(LinuxBackend().sample())


def _read(paths: list[str], globs: list[str]) -> dict[str, str | None]:
    import glob as _glob

    out: dict[str, str | None] = {}
    for p in paths + [q for g in globs for q in sorted(_glob.glob(g))]:
        try:
            with open(p) as f:
                out[p] = f.read()
        except OSError:
            out[p] = None
    return out


def bracketed_probe(specs: dict[str, list[list[str]]]) -> dict[str, Any]:
    """The raw sysfs text of each array just before and just after raidman's probe.

    ``specs``: {md: [paths, globs]} (from ``tests.vm.kernel.md_paths``)."""
    import time

    from backends.linux import LinuxBackend

    backend = LinuxBackend()
    before = {md: _read(p, g) for md, (p, g) in specs.items()}
    t0 = time.monotonic()
    machine = backend.probe()
    probe_s = time.monotonic() - t0
    after = {md: _read(p, g) for md, (p, g) in specs.items()}
    return {
        "before": before,
        "machine": dataclasses.asdict(machine),
        "after": after,
        "probe_s": probe_s,
    }


def kernel_log_section(device: str) -> list[str]:
    """The kernel-log lines raidman files under ``device`` (``app.kernel_log``: the lines that
    name it or what it holds), read on the guest's kernel."""
    from app.kernel_log import lines_for, names_for, read_kernel_log
    from backends.linux import LinuxBackend

    b = LinuxBackend()
    return [ln.text for ln in lines_for(read_kernel_log(b), names_for(b.probe(), device))]


def report_io_with_marks() -> dict[str, Any]:
    """``raidman report --json --io --no-smart --no-audit`` with ``/proc/diskstats`` read (and
    the guest's monotonic clock taken) right after each of the report's samples, which read
    diskstats last: {code, report, marks}. Runs in a fork of the agent: the patch of
    ``LinuxBackend.sample`` stays in this process."""
    import io
    import json
    import time
    from contextlib import redirect_stdout

    import backends.linux as linux
    from app.cli import main

    def stats() -> dict[str, tuple[int, int]]:
        out = {}
        with open("/proc/diskstats") as f:
            for line in f:
                x = line.split()
                out[x[2]] = (int(x[5]), int(x[9]))  # sectors read, sectors written
        return out

    import app.commands.report as report_command

    marks: list[dict[str, Any]] = []
    original = linux.LinuxBackend.sample
    original_rates = report_command.io_rates
    in_io: list[bool] = []  # the report samples for --io's rates, and once for the workload

    def io_rates(*a: Any, **k: Any) -> Any:
        in_io.append(True)
        try:
            return original_rates(*a, **k)
        finally:
            in_io.clear()

    def sample(self: linux.LinuxBackend) -> Any:
        t0 = time.monotonic()
        s = original(self)  # reads /proc/diskstats last
        if not in_io:
            return s
        marks.append(
            {
                "taken_at": s.taken_at,
                "stats": stats(),
                "at": time.monotonic(),
                "took": time.monotonic() - t0,
            }
        )
        return s

    linux.LinuxBackend.sample = sample  # type: ignore[method-assign]
    report_command.io_rates = io_rates  # type: ignore[assignment]
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(["report", "--json", "--io", "--no-smart", "--no-audit"])
    return {"code": code, "report": json.loads(buf.getvalue()), "marks": marks}


def http_get(url: str, tries: int = 120, pause_s: float = 0.5) -> str:
    """The body at ``url`` (a server the test just started in the guest: retried while it
    refuses)."""
    import time
    import urllib.request

    for _ in range(tries - 1):
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return str(r.read().decode())
        except OSError:
            time.sleep(pause_s)
    with urllib.request.urlopen(url, timeout=5) as r:
        return str(r.read().decode())


def run_forked(
    target: str, args: list[str], env: dict[str, str], timeout: float = 600.0
) -> tuple[int, str, str]:
    """``target(args)`` (``"module:function"``, e.g. ``"app.cli:main"``) in a fork of this
    process with exactly ``env`` as its environment: (exit code, stdout, stderr), what
    ``python -m`` gives, without a fresh interpreter (under TCG ~30 s of host CPU for raidman's
    imports over 9p). For code already running in a ``vm.call``."""
    import importlib
    import os
    import signal
    import sys
    import tempfile
    import time
    import traceback

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # child
            rc = 1
            try:
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                os.environ.clear()
                os.environ.update(env)
                module, _, func = target.partition(":")
                try:
                    got = getattr(importlib.import_module(module), func)(args)
                    rc = got if isinstance(got, int) else 0
                except SystemExit as e:
                    rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(rc if 0 <= rc <= 255 else 1)
        deadline = time.monotonic() + timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                rc = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                rc = -9
                break
            time.sleep(0.1)
        out.seek(0)
        err.seek(0)
        return rc, out.read().decode(errors="replace"), err.read().decode(errors="replace")
