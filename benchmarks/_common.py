"""Shared helpers for the benchmark scripts: figures with their targets, a table, JSON output.

Benchmarks print figures; they assert nothing. Each script's ``main(argv)`` accepts ``--quick``
(fewer runs, for the smoke test) and ``--json`` (one JSON line at the end, read by run_all.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "benchmarks"
JSON_MARK = "BENCH-JSON: "


@dataclass(frozen=True, slots=True)
class Figure:
    """One measured figure. ``target`` is the bound ("≤ 1.0"); ``met`` None when it has none."""

    name: str
    value: float
    unit: str
    target: str = ""
    met: bool | None = None
    note: str = ""

    def cells(self) -> list[str]:
        verdict = "" if self.met is None else ("met" if self.met else "NOT MET")
        return [
            self.name,
            f"{self.value:,.{_decimals(self.value)}f} {self.unit}",
            self.target,
            verdict,
            self.note,
        ]


def _decimals(v: float) -> int:
    a = abs(v)
    if a == 0 or a >= 100:
        return 0 if a >= 100 else 1
    if a >= 1:
        return 2
    if a >= 0.01:
        return 3
    return 5


def at_most(name: str, value: float, unit: str, bound: float, note: str = "") -> Figure:
    return Figure(name, value, unit, f"≤ {bound:g} {unit}", value <= bound, note)


def below(name: str, value: float, unit: str, bound: float, note: str = "") -> Figure:
    return Figure(name, value, unit, f"< {bound:g} {unit}", value < bound, note)


def info(name: str, value: float, unit: str, note: str = "") -> Figure:
    return Figure(name, value, unit, "", None, note)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def table(figures: Sequence[Figure], title: str = "") -> str:
    head = ["figure", "measured", "target", "", "how / note"]
    rows = [head] + [f.cells() for f in figures]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head) - 1)]
    out = [title] if title else []
    for n, r in enumerate(rows):
        line = "  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True))
        out.append((line + "  " + r[-1]).rstrip())
        if n == 0:
            out.append("-" * min(120, sum(widths) + 2 * len(widths) + 20))
    return "\n".join(out)


def emit(figures: Sequence[Figure], title: str, as_json: bool) -> None:
    print(table(figures, title), flush=True)
    if as_json:
        print(JSON_MARK + json.dumps([asdict(f) for f in figures]), flush=True)


def parse_json_line(stdout: str) -> list[Figure]:
    for line in reversed(stdout.splitlines()):
        if line.startswith(JSON_MARK):
            return [Figure(**d) for d in json.loads(line[len(JSON_MARK) :])]
    return []


def child_env() -> dict[str, str]:
    """The environment for child Pythons: the repository importable, no colour negotiation."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env.setdefault("TERM", "xterm-256color")
    return env


def python() -> str:
    return sys.executable


def guard(name: str, fn: Callable[[], list[Figure]]) -> list[Figure]:
    """Run one part; a failure becomes a note instead of ending the whole benchmark."""
    try:
        return fn()
    except Exception as e:  # a benchmark reports what it could not measure
        print(f"[{name}] could not be measured: {e!r}", file=sys.stderr, flush=True)
        return [Figure(name, float("nan"), "", "", False, f"failed: {e!r}"[:100])]


@dataclass
class PtyRun:
    """What ``run_in_pty`` saw: when each marker first appeared (seconds after spawn)."""

    seen: dict[str, float]
    output: bytes
    pid: int
    returncode: int | None
    quit_s: float | None = None  # quit keys typed -> the process exited (None: killed)


def run_in_pty(
    argv: Sequence[str],
    *,
    markers: Sequence[str] = (),
    cols: int = 120,
    rows: int = 40,
    timeout: float = 20.0,
    run_for: float | None = None,
    env: dict[str, str] | None = None,
    on_start: Callable[[int], None] | None = None,
    before_quit: Callable[[int], None] | None = None,
    quit_keys: bytes = b"q",
    settle: float = 0.0,
    on_seen: Callable[[int], None] | None = None,
    warmup: float = 0.0,
) -> PtyRun:
    """Start ``argv`` on a fresh pseudo-terminal of ``cols``×``rows`` and read (and discard, like a
    terminal would) everything it writes. Stops when every marker was seen (or after ``run_for``
    seconds when given), reads on for ``warmup`` seconds, calls ``on_seen(pid)``, reads on for
    ``settle`` seconds, calls ``before_quit(pid)``, then types ``quit_keys`` and waits; kills it if it does not exit."""
    import fcntl
    import pty
    import select
    import signal
    import struct
    import subprocess
    import termios
    import time

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        list(argv),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env if env is not None else child_env(),
        start_new_session=True,
        close_fds=True,
    )
    os.close(slave)
    if on_start is not None:
        on_start(proc.pid)
    seen: dict[str, float] = {}
    buf = bytearray()
    pending = {m: m.encode() for m in markers}
    deadline = t0 + (run_for if run_for is not None else timeout)

    def drain(until: float, stop_when_seen: bool) -> bool:
        while True:
            left = until - time.perf_counter()
            if left <= 0:
                return True
            r, _, _ = select.select([master], [], [], min(left, 0.05))
            if not r:
                if proc.poll() is not None:
                    return False
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return False
            if not chunk:
                return False
            now = time.perf_counter() - t0
            buf.extend(chunk)
            tail = bytes(buf[-(len(chunk) + 256) :])
            for m, b in list(pending.items()):
                if b in tail or b in buf:
                    seen[m] = now
                    del pending[m]
            if stop_when_seen and not pending:
                return True

    drain(deadline, run_for is None)
    if warmup > 0 and not pending:
        drain(time.perf_counter() + warmup, False)
    if on_seen is not None and not pending and proc.poll() is None:
        on_seen(proc.pid)
    if settle > 0:
        drain(time.perf_counter() + settle, False)
    if before_quit is not None and proc.poll() is None:
        before_quit(proc.pid)
    quit_s: float | None = None
    try:
        if proc.poll() is None:
            os.write(master, quit_keys)
            typed = time.perf_counter()
            end = typed + 5.0
            while proc.poll() is None and time.perf_counter() < end:
                if not drain(time.perf_counter() + 0.1, False):  # EOF: it is going
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(timeout=max(0.0, end - time.perf_counter()))
            if proc.poll() is not None:
                quit_s = time.perf_counter() - typed
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)
    finally:
        os.close(master)
    return PtyRun(seen, bytes(buf), proc.pid, proc.returncode, quit_s)
