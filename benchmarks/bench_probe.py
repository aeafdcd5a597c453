"""Probe and start-up figures (issue 2, "Done when": the benchmark line).

(a) ``LinuxBackend().probe()`` wall time on this machine beside the bare commands it replaces,
    each run as a process: ``lsblk --json --bytes -o <LSBLK_COLUMNS>``, ``cat /proc/mdstat`` and
    ``lvm fullreport --reportformat json`` (the probe's own argv, LVM_FULLREPORT_ARGV).
    Target: probe ≤ 1.3 × their sum (medians of N runs). ``--vm`` does the same inside a QEMU VM
    (virtme-ng) with four NVMe disks carrying a RAID-5 + LVM + ext4, where md and LVM exist.
(b) Time to first paint of ``raidman --demo``: the real console script is started on a fresh
    pseudo-terminal (120×40); measured from just before the spawn (parent's perf_counter) to the
    moment the terminal receives the first frame that shows the tree (the bytes "md127"). That
    includes interpreter start, imports, the probe worker and Textual's first render. Target ≤ 1 s.
(c) ``SimulatedBackend.big(disks=1000, arrays=250)``: probe(), build_tree_spec, and StorageTree
    population (update_machine + first refresh in a headless ``run_test``), each in a fresh
    process; RSS of the real ``raidman --demo big`` (same machine size) on a pty once its tree is
    drawn. Targets: tree build ≤ 200 ms, RSS ≤ 150 MB.

Run: ``.venv/bin/python benchmarks/bench_probe.py [--quick] [--vm] [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    ROOT,
    Figure,
    at_most,
    child_env,
    emit,
    guard,
    info,
    median,
    python,
    run_in_pty,
)

PROBE_RATIO_TARGET = 1.3
FIRST_PAINT_TARGET_S = 1.0
TREE_BUILD_TARGET_MS = 200.0
RSS_TARGET_MB = 150.0
RAIDMAN = str(Path(sys.executable).with_name("raidman"))


# ---- (a) probe vs. the bare commands ----------------------------------------------------------
def bare_commands() -> list[tuple[str, ...]]:
    from app.parsers.lsblk import LSBLK_COLUMNS
    from backends.linux.probe import LVM_FULLREPORT_ARGV, lsblk_argv

    return [lsblk_argv(LSBLK_COLUMNS), ("cat", "/proc/mdstat"), LVM_FULLREPORT_ARGV]


def time_command(argv: tuple[str, ...], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=False)
        times.append(time.perf_counter() - t0)
    return median(times)


def measure_probe(runs: int) -> dict[str, Any]:
    """Medians (seconds) of probe() and of each bare command; also what the probe found."""
    from backends.linux import LinuxBackend

    backend = LinuxBackend()
    machine = backend.probe()  # warm-up: imports, page cache
    probe_times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        machine = backend.probe()
        probe_times.append(time.perf_counter() - t0)
    cmds = {" ".join(a[:2]): time_command(a, runs) for a in bare_commands()}
    return {
        "probe_s": median(probe_times),
        "commands_s": cmds,
        "runs": runs,
        "found": {
            "disks": len(machine.disks),
            "arrays": len(machine.arrays),
            "vgs": len(machine.vgs),
            "lvs": len(machine.lvs),
        },
        "notes": [n.message for n in machine.notes],
    }


def probe_figures(res: dict[str, Any], where: str) -> list[Figure]:
    found = res["found"]
    bare = sum(res["commands_s"].values())
    ratio = res["probe_s"] / bare if bare > 0 else float("nan")
    what = (
        f"{found['disks']} disks, {found['arrays']} md, {found['vgs']} VG, {found['lvs']} LV; "
        f"median of {res['runs']}"
    )
    figs = [info(f"probe() wall time ({where})", res["probe_s"] * 1000, "ms", what)]
    for name, s in res["commands_s"].items():
        figs.append(info(f"  bare `{name}` ({where})", s * 1000, "ms", "as a process"))
    figs.append(info(f"  sum of the bare commands ({where})", bare * 1000, "ms"))
    figs.append(
        at_most(
            f"probe / bare sum ({where})",
            ratio,
            "×",
            PROBE_RATIO_TARGET,
            "probe runs lvm only when lsblk shows an LVM2_member" if found["vgs"] == 0 else "",
        )
    )
    return figs


# ---- (a, --vm) the same inside a VM with md and LVM ----------------------------------------------
VM_SETUP = r"""#!/bin/sh
# Runs inside the virtme-ng guest (root): RAID-5 of four NVMe disks, LVM and ext4 on top, then the probe figures.
set -e
out="$1"
exec >"$out.log" 2>&1
udevadm settle 2>/dev/null || true
mdadm --create /dev/md127 --run --level=5 --raid-devices=4 --assume-clean --metadata=1.2 \
      /dev/nvme0n1 /dev/nvme1n1 /dev/nvme2n1 /dev/nvme3n1
pvcreate -y /dev/md127
vgcreate vg0 /dev/md127
lvcreate -y -n data -l 80%VG vg0
mkfs.ext4 -q /dev/vg0/data
mkdir -p /run/raidman-data && mount /dev/vg0/data /run/raidman-data
udevadm settle 2>/dev/null || true
cd "{root}"
"{python}" benchmarks/bench_probe.py --probe-only --runs {runs} > "$out"
"""


def run_vm(runs: int) -> list[Figure]:
    vng = shutil.which(
        "vng", path=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    )
    kernels = sorted(Path("/boot").glob("vmlinuz-*"))
    if vng is None or not kernels:
        return [Figure("probe in VM", float("nan"), "", "", False, "vng or a kernel is missing")]
    work = Path("/tmp/raidman-bench-vm")
    work.mkdir(parents=True, exist_ok=True)
    drives = []
    for i in range(4):
        img = work / f"n{i}.img"
        with open(img, "wb") as f:
            f.truncate(256 * 1024 * 1024)
        drives += [
            f"-drive file={img},if=none,id=n{i},format=raw",
            f"-device nvme,drive=n{i},serial=N{i}",
        ]
    script = work / "inner.sh"
    script.write_text(VM_SETUP.format(root=ROOT, python=sys.executable, runs=runs))
    script.chmod(0o755)
    result = work / "probe.json"
    result.unlink(missing_ok=True)
    argv = [
        vng,
        "--run",
        str(kernels[-1]),
        "--disable-kvm",  # KVM is not usable on the build hosts (MSR errors); TCG works
        "--memory",
        "1G",
        "--cpus",
        "2",
        "--rwdir",
        str(work),
        "--qemu-opts=" + " ".join(drives),
        "--exec",
        f"{script} {result}",
    ]
    argv = [a for a in argv if a]
    env = child_env()
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600, check=False)
    boot = time.perf_counter() - t0
    try:
        res = json.loads(result.read_text())
    except (OSError, ValueError):
        log = (work / "probe.json.log").read_text() if (work / "probe.json.log").exists() else ""
        tail = (p.stderr + log)[-400:].replace("\n", " | ")
        return [
            Figure(
                "probe in VM",
                float("nan"),
                "",
                "",
                False,
                f"no result (vng rc {p.returncode}): {tail}",
            )
        ]
    print(f"VM results written to {result} (VM run took {boot:.0f} s)")
    return probe_figures(res, "VM")


# ---- (b) first paint ---------------------------------------------------------------------------
def first_paint(runs: int) -> list[Figure]:
    firsts, trees = [], []
    for _ in range(runs):
        r = run_in_pty(
            [RAIDMAN, "--demo", "raid10-evo"], markers=["\x1b[?1049h", "md127"], timeout=15
        )
        if "md127" not in r.seen:
            raise RuntimeError(f"no tree on the terminal within 15 s (exit {r.returncode})")
        firsts.append(r.seen.get("\x1b[?1049h", float("nan")))
        trees.append(r.seen["md127"])
    return [
        at_most(
            "first paint of `raidman --demo` (tree drawn)",
            median(trees),
            "s",
            FIRST_PAINT_TARGET_S,
            f"spawn → first frame with the tree on a 120×40 pty; median of {runs}",
        ),
        info(
            "  terminal taken (alt screen entered)",
            median(firsts),
            "s",
            "spawn → first bytes of Textual",
        ),
    ]


# ---- (c) the big machine -------------------------------------------------------------------------
def big_child(disks: int, arrays: int, runs: int) -> dict[str, Any]:
    """In a fresh process: probe(), build_tree_spec, and StorageTree population in run_test."""
    from textual.app import App, ComposeResult

    from backends.simulated import SimClock, SimulatedBackend
    from widgets.storage_tree import StorageTree, build_tree_spec

    backend = SimulatedBackend.big(disks=disks, arrays=arrays, clock=SimClock.manual())
    probe_times, spec_times = [], []
    machine = backend.probe()
    for _ in range(runs):
        t0 = time.perf_counter()
        machine = backend.probe()
        probe_times.append(time.perf_counter() - t0)
    nodes = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        nodes = len(build_tree_spec(machine))
        spec_times.append(time.perf_counter() - t0)

    class TreeApp(App[None]):
        def compose(self) -> ComposeResult:
            yield StorageTree(id="tree-0")

    populate: list[float] = []
    shown: list[int] = []

    async def drive() -> None:
        app = TreeApp()
        async with app.run_test(size=(120, 40)) as pilot:
            for i in range(runs):
                await app.query_one(StorageTree).remove()
                tree = StorageTree(id=f"tree-{i + 1}")
                await app.mount(tree)  # a fresh, empty tree, as at start-up
                await pilot.pause()
                drawn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                t0 = time.perf_counter()
                tree.update_machine(machine)
                tree.call_after_refresh(lambda f=drawn: f.done() or f.set_result(None))
                await drawn  # resolved after the refresh that paints it
                populate.append(time.perf_counter() - t0)
                shown.append(sum(tree.node_for(k) is not None for k in tree.keys))

    asyncio.run(drive())
    return {
        "probe_s": median(probe_times),
        "spec_s": median(spec_times),
        "populate_s": median(populate),
        "nodes": nodes,
        "tree_nodes": shown[-1] if shown else 0,
        "runs": runs,
    }


def big_figures(disks: int, arrays: int, runs: int) -> list[Figure]:
    p = subprocess.run(
        [python(), __file__, "--big-child", f"{disks},{arrays},{runs}"],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=300,
        check=False,
    )
    if p.returncode != 0:
        raise RuntimeError(
            p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"
        )
    res = json.loads(p.stdout.strip().splitlines()[-1])
    size = f"{disks} disks / {arrays} arrays"
    return [
        at_most(
            f"tree build, {size}",
            (res["spec_s"] + res["populate_s"]) * 1000,
            "ms",
            TREE_BUILD_TARGET_MS,
            f"build_tree_spec + StorageTree.update_machine + first refresh, {res['nodes']} nodes "
            f"({res['tree_nodes']} added as TreeNodes, the rest on expand); median of {res['runs']}",
        ),
        info("  build_tree_spec", res["spec_s"] * 1000, "ms"),
        info(
            "  StorageTree population + refresh",
            res["populate_s"] * 1000,
            "ms",
            "headless run_test",
        ),
        info(f"  probe(), {size}", res["probe_s"] * 1000, "ms", "simulated backend"),
    ]


def big_rss() -> list[Figure]:
    import psutil

    rss: dict[str, float] = {}

    def grab(pid: int) -> None:
        proc = psutil.Process(pid)
        rss["now"] = proc.memory_info().rss / 2**20

    r = run_in_pty(
        [RAIDMAN, "--demo", "big"],
        markers=["md0"],
        cols=200,
        rows=60,
        timeout=60,
        settle=2.0,
        before_quit=grab,
    )
    if "md0" not in r.seen or "now" not in rss:
        raise RuntimeError(f"`raidman --demo big` did not draw its tree (exit {r.returncode})")
    return [
        at_most(
            "RSS of `raidman --demo big` (1000 disks / 250 arrays)",
            rss["now"],
            "MB",
            RSS_TARGET_MB,
            "psutil rss 2 s after the tree is drawn (200×60 pty)",
        ),
        info(
            "  its first paint (tree drawn)", r.seen["md0"], "s", "spawn → first frame showing md0"
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="fewer runs and a smaller big machine")
    ap.add_argument("--vm", action="store_true", help="also measure the probe inside a QEMU VM")
    ap.add_argument("--json", action="store_true", help="end with a JSON line (for run_all.py)")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--probe-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--big-child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    runs = args.runs or (3 if args.quick else 9)
    if args.big_child:
        d, a, n = (int(x) for x in args.big_child.split(","))
        print(json.dumps(big_child(d, a, n)))
        return 0
    if args.probe_only:
        print(json.dumps(measure_probe(runs)))
        return 0
    figs: list[Figure] = []
    figs += guard("probe on this machine", lambda: probe_figures(measure_probe(runs), "host"))
    if args.vm:
        figs += guard("probe in VM", lambda: run_vm(runs))
    figs += guard("first paint", lambda: first_paint(1 if args.quick else 3))
    disks, arrays = (100, 25) if args.quick else (1000, 250)
    figs += guard("tree build", lambda: big_figures(disks, arrays, 2 if args.quick else 5))
    if not args.quick:
        figs += guard("RSS", big_rss)
    emit(figs, "bench_probe: probe, first paint, big tree (issue 2)", args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
