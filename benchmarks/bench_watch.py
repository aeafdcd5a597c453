"""CPU cost of watching syncs at 1 Hz (issue 4, "Done when": the CPU benchmark line).

The machine: ``SimulatedBackend.big(disks=64, arrays=16, syncing=16)`` (64 disks, 16 arrays, all
syncing). Figures are CPU seconds per minute of watching, % of one core (target < 1 %) and the
ratio to ``watch -n1 cat /proc/mdstat`` doing the same minute.

raidman, three ways:
1. domain: what the app computes each second, timed with ``time.process_time`` over 60 iterations
   on a manual clock advanced 1 s per iteration (no sleeping): ``backend.sample()``,
   ``merge_live``, ``SyncTracker.update`` + ``views()``, ``ThroughputMeter.update`` +
   ``slowest`` per array.
2. headless: ``RaidmanApp`` (real-time simulated clock, sample interval 1 s, probe every 10 s)
   in a child process under ``run_async(headless=True, size=(200, 60))`` with the Sync tab shown
   and fed each second; process CPU (psutil ``cpu_times`` user+system) over the window that
   starts 1 s after the first probe, scaled to 60 s. Headless Textual renders but never writes
   to a terminal.
3. pty: the same app on a real pseudo-terminal (200×60), its output read and discarded; CPU of
   the process (psutil, from outside) over the same kind of window, scaled to 60 s.

watch -n1 cat /proc/mdstat: this host has no /proc/mdstat, so the simulated machine's mdstat text
is written to a file and
a. 60 spawns of ``cat FILE`` are timed (children's CPU via ``resource.getrusage(RUSAGE_CHILDREN)``);
b. the real ``watch -n 0.5 -t cat FILE`` runs on a 200×60 pty for a few seconds; its own CPU plus
   its reaped children's (psutil ``cpu_times``: user, system, children_user, children_system) per
   refresh × 60 is watch's minute, redraws included. (0.5 s instead of 1 s only to collect more
   refreshes in a short run; the per-refresh work is the same.)

Run: ``.venv/bin/python benchmarks/bench_watch.py [--quick] [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Figure, below, child_env, emit, guard, info, python, run_in_pty

DISKS, ARRAYS, SYNCING = 64, 16, 16
CORE_TARGET_PCT = 1.0
MACHINE = f"{DISKS} disks, {ARRAYS} arrays, {SYNCING} syncing"


def per_minute(name: str, cpu_s_per_min: float, note: str) -> list[Figure]:
    pct = cpu_s_per_min / 60.0 * 100.0
    return [
        info(name, cpu_s_per_min, "CPU s/min", note),
        below(
            f"  = % of one core ({name.split(',')[0].split(' on ')[0]})", pct, "%", CORE_TARGET_PCT
        ),
    ]


# ---- 1. domain ------------------------------------------------------------------------------------
def domain_cpu(iterations: int = 60) -> float:
    """CPU seconds for ``iterations`` one-second steps of the app's per-sample work."""
    from app.session import merge_live
    from app.sync.throughput import ThroughputMeter
    from app.sync.tracker import SyncTracker
    from backends.simulated import SimClock, SimulatedBackend

    clock = SimClock.manual()
    backend = SimulatedBackend.big(disks=DISKS, arrays=ARRAYS, syncing=SYNCING, clock=clock)
    machine = backend.probe()
    tracker, meter = SyncTracker(), ThroughputMeter()
    members = {a.name: tuple(m.device for m in a.members) for a in machine.arrays}
    t0 = time.process_time()
    for _ in range(iterations):
        clock.advance(1.0)
        sample = backend.sample()
        merge_live(machine, sample)
        tracker.update(sample)
        tracker.views()
        meter.update(sample)
        for devs in members.values():
            meter.slowest(devs)
    return time.process_time() - t0


# ---- 2./3. the app, in a child process -------------------------------------------------------------
def app_child(seconds: float, headless: bool, out: str | None) -> None:
    """Run RaidmanApp over the simulated machine; with ``headless`` measure our own CPU."""
    import psutil

    from app.ui.app import RaidmanApp
    from backends.simulated import SimClock, SimulatedBackend

    backend = SimulatedBackend.big(
        disks=DISKS, arrays=ARRAYS, syncing=SYNCING, clock=SimClock.realtime()
    )
    proc = psutil.Process()
    marks: dict[str, Any] = {}

    class BenchApp(RaidmanApp):
        """RaidmanApp, plus (only if the app has none yet) a Sync tab fed once a second."""

        CSS_PATH = str(
            Path(sys.modules[RaidmanApp.__module__].__file__ or "").with_name("app.tcss")
        )

        def __init__(self) -> None:
            super().__init__(backend, sample_interval=1.0)

        def on_mount(self) -> None:
            # RaidmanApp.on_mount runs too (Textual calls the handler of every class in the MRO)
            self.set_timer(seconds + 30, self.finish)  # a backstop; start_window ends it earlier
            self.watch(self, "machine", self._first_machine, init=False)

        def _first_machine(self, machine: object) -> None:
            if machine is None or "first_probe" in marks:
                return
            marks["first_probe"] = time.perf_counter()
            self.set_timer(0.3, self.show_sync)  # after the tab bar has mounted
            self.set_timer(1.0, self.start_window)

        def show_sync(self) -> None:
            self.show_tab("sync")

        def start_window(self) -> None:
            marks["start"] = (time.perf_counter(), proc.cpu_times(), self.sample_count)
            self.set_timer(seconds, self.finish)

        def finish(self) -> None:
            if "start" in marks:
                t0, c0, n0 = marks["start"]
                c1 = proc.cpu_times()
                marks["result"] = {
                    "wall_s": time.perf_counter() - t0,
                    "cpu_s": (c1.user - c0.user) + (c1.system - c0.system),
                    "samples": self.sample_count - n0,
                    "cards": len(self.main.query("SyncCard")),
                }
            self.exit()

    app = BenchApp()
    if headless:
        asyncio.run(app.run_async(headless=True, size=(200, 60)))
    else:
        app.run()
    if out:
        Path(out).write_text(json.dumps(marks.get("result", {})))


def headless_figures(seconds: float) -> list[Figure]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        p = subprocess.run(
            [python(), __file__, "--app-child", f"{seconds}", "--headless", "--out", str(out)],
            capture_output=True,
            text=True,
            env=child_env(),
            timeout=seconds + 60,
            check=False,
        )
        res = json.loads(out.read_text()) if out.exists() else {}
    if not res:
        raise RuntimeError(f"child failed (exit {p.returncode}): {p.stderr.strip()[-300:]}")
    how = "the app's own Sync pane"
    return per_minute(
        "raidman, headless RaidmanApp",
        res["cpu_s"] / res["wall_s"] * 60,
        f"{res['wall_s']:.1f} s window, {res['samples']} samples, {res['cards']} sync cards, {how}",
    )


def pty_figures(seconds: float) -> tuple[list[Figure], float]:
    import psutil

    cpu: dict[str, Any] = {}

    def total(pid: int) -> float:
        t = psutil.Process(pid).cpu_times()
        return float(t.user + t.system)

    def start(pid: int) -> None:
        cpu["t0"], cpu["c0"] = time.perf_counter(), total(pid)

    def stop(pid: int) -> None:
        cpu["t1"], cpu["c1"] = time.perf_counter(), total(pid)

    # "md0" appears once the tree is drawn (first probe); the window starts 1 s later.
    r = run_in_pty(
        [python(), __file__, "--app-child", f"{seconds + 10}"],
        markers=["md0"],
        cols=200,
        rows=60,
        timeout=30,
        warmup=1.0,
        on_seen=start,
        settle=seconds,
        before_quit=stop,
    )
    if "c1" not in cpu:
        raise RuntimeError(f"the app did not draw its tree on the pty (exit {r.returncode})")
    wall = cpu["t1"] - cpu["t0"]
    value = (cpu["c1"] - cpu["c0"]) / wall * 60
    return per_minute(
        "raidman on a 200×60 pty",
        value,
        f"{wall:.1f} s window, output written to a terminal (read and discarded)",
    ), value


# ---- watch -n1 cat /proc/mdstat ------------------------------------------------------------------
def mdstat_file(tmp: Path) -> Path:
    from backends.simulated import SimClock, SimulatedBackend

    backend = SimulatedBackend.big(
        disks=DISKS, arrays=ARRAYS, syncing=SYNCING, clock=SimClock.manual()
    )
    path = tmp / "mdstat"
    path.write_text(backend.read_text("/proc/mdstat") or "")
    return path


def cat_cpu(path: Path, spawns: int = 60) -> float:
    """Children's CPU seconds for ``spawns`` runs of ``cat path`` (fork/exec/read/exit)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(spawns):
        subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def watch_cpu(path: Path, seconds: float, interval: float = 0.5) -> tuple[float, int]:
    """CPU seconds of a real ``watch`` (itself + reaped cats) per refresh, and refreshes seen."""
    import psutil

    cpu: dict[str, float] = {}

    def stop(pid: int) -> None:
        t = psutil.Process(pid).cpu_times()
        cpu["c"] = float(t.user + t.system + t.children_user + t.children_system)

    t0 = time.perf_counter()
    run_in_pty(
        ["watch", "-n", f"{interval}", "-t", "cat", str(path)],
        cols=200,
        rows=60,
        run_for=seconds,
        before_quit=stop,
        quit_keys=b"\x03",
    )
    wall = time.perf_counter() - t0
    refreshes = 1 + int(wall / interval)
    return cpu.get("c", float("nan")) / refreshes, refreshes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="short windows (for the smoke test)")
    ap.add_argument("--json", action="store_true", help="end with a JSON line (for run_all.py)")
    ap.add_argument("--seconds", type=float, default=None, help="app window (default 10 s)")
    ap.add_argument("--app-child", type=float, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--headless", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.app_child is not None:
        app_child(args.app_child, args.headless, args.out)
        return 0
    seconds = args.seconds or (3.0 if args.quick else 10.0)
    figs: list[Figure] = []
    figs += guard(
        "domain",
        lambda: per_minute(
            "raidman, domain work per second ×60",
            domain_cpu(60),
            "sample+merge_live+SyncTracker+ThroughputMeter, manual clock, process_time",
        ),
    )
    figs += guard("headless", lambda: headless_figures(seconds))
    raidman_pty: list[float] = []

    def pty_part() -> list[Figure]:
        f, v = pty_figures(seconds)
        raidman_pty.append(v)
        return f

    figs += guard("pty", pty_part)
    watch_min: list[float] = []

    def watch_part() -> list[Figure]:
        with tempfile.TemporaryDirectory() as tmp:
            path = mdstat_file(Path(tmp))
            out = [
                info(
                    "cat FILE ×60 (children's CPU)",
                    cat_cpu(path),
                    "CPU s/min",
                    f"{path.stat().st_size} B of simulated mdstat",
                )
            ]
            if shutil.which("watch") is None:
                out.append(info("watch -n1 cat (real)", float("nan"), "", "watch not installed"))
                return out
            per, n = watch_cpu(path, 2.0 if args.quick else 5.0)
            watch_min.append(per * 60)
            out += per_minute(
                "watch -n1 cat mdstat (real watch on a pty)",
                per * 60,
                f"watch + its cats per refresh ×60, {n} refreshes at -n 0.5 on 200×60",
            )
            return out

    figs += guard("watch", watch_part)
    if raidman_pty and watch_min and watch_min[0] > 0:
        figs.append(info("ratio raidman (pty) / watch", raidman_pty[0] / watch_min[0], "×"))
    emit(figs, f"bench_watch: CPU while watching syncs at 1 Hz ({MACHINE}) (issue 4)", args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
