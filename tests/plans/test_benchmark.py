"""`raidman plan benchmark` (issue 28 item 1): the articles' method as a plan, run by the executor
on the simulated backend (its fio emulation), the result table, kept and read back."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.plans.audit_log import AuditLog
from app.plans.builders.benchmark import (
    BenchmarkParams,
    best_chunk,
    build_benchmark,
    collect,
    result_from_json,
    table,
)
from app.plans.executor import execute
from app.plans.geometry import PlanError
from app.plans.guards.allowlist import argv_problem
from app.plans.guards.plan_devices import argv_devices, plan_problems
from app.plans.ops import Fio
from app.plans.plan import Step
from backends.simulated import SimulatedBackend

DEVS = ("nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1")
KIB = 1024


def test_plan_is_the_articles_method() -> None:
    """Article 000 (../shared/seeds/000_*.txt): fio with direct=1, "Vor jedem Einzeltest wurde
    ein fstrim-Befehl ... abgesetzt", each measurement "3 mal wiederholt", a single SSD as the
    baseline ("Die Zeilen mit SSD am Anfang"), chunk 32K vs 512K on a RAID-10 n2 of 4 made
    with --bitmap=none; numjobs 1 ("Nur 1 Job") and more. Every step passes the allowlist."""
    m = SimulatedBackend.from_scenario("blank").probe()
    plan = build_benchmark(m, BenchmarkParams(DEVS, chunks=(32 * KIB, 512 * KIB)))
    argvs = [s.argv for s in plan.steps]
    assert argvs[:4] == [("blkdiscard", f"/dev/{d}") for d in DEVS]
    fio = [a for a in argvs if a[0] == "fio"]
    assert len(fio) == 6 * 2 * 3 * 3  # patterns × numjobs × runs × (disk + 2 chunks)
    assert all("--direct=1" in a and "--output-format=json" in a for a in fio)
    assert {a[2] for a in fio} == {"--filename=/dev/nvme0n1", "--filename=/dev/md120"}
    creates = [a for a in argvs if a[:2] == ("mdadm", "--create")]
    assert [c[7] for c in creates] == ["--chunk=32K", "--chunk=512K"]
    assert all("--assume-clean" in c and "--layout=n2" in c for c in creates)
    assert argvs.count(("mdadm", "--stop", "/dev/md120")) == 2
    assert argvs[-4:] == [("blkdiscard", f"/dev/{d}") for d in DEVS]  # left empty
    assert plan_problems(plan, m) == []
    assert plan.destructive and plan.needs_typed
    assert argv_devices(plan, m).overwrites == DEVS  # pre-flight: the members must be unused


def test_members_in_use_are_refused_by_preflight() -> None:
    from app.plans.render import preflight_for

    b = SimulatedBackend.from_scenario("raid10-evo")
    m = b.probe()
    plan = build_benchmark(m, BenchmarkParams(("sda", "sdb", "sdc", "sdd"), runs=1))
    assert {r.device for r in preflight_for(plan, m, b).refusals} >= {"sda", "sdb", "sdc", "sdd"}


@pytest.mark.parametrize(
    "argv",
    [
        ("fio", "--name=raidman", "--filename=/etc/passwd", "--direct=1", "--ioengine=psync",
         "--rw=write", "--bs=1m", "--numjobs=1", "--size=8M", "--group_reporting",
         "--output-format=json"),
        (*Fio("/dev/sdb", "randwrite", "4k", 1, "8M").argv()[:-1], "--output-format=normal"),
        (*Fio("/dev/sdb", "randwrite", "4k", 1, "8M").argv()[:5], "--rw=trim", *Fio("/dev/sdb", "randwrite", "4k", 1, "8M").argv()[6:]),
        ("fio", "--name=x", "--exec_prerun=sh"),
        ("blkdiscard", "/dev/md/bench"),
        ("blkdiscard", "-o", "0", "/dev/sdb"),
    ],
)  # fmt: skip
def test_allowlist_takes_only_the_benchmarks_shapes(argv: tuple[str, ...]) -> None:
    assert argv_problem(argv) is not None


def test_bad_parameters_are_plan_errors() -> None:
    m = SimulatedBackend.from_scenario("blank").probe()
    for p in (
        BenchmarkParams(DEVS[:1]),
        BenchmarkParams(DEVS, chunks=(48 * KIB,)),
        BenchmarkParams(DEVS, runs=0),
        BenchmarkParams(DEVS, level="1"),
        BenchmarkParams(("nosuch", *DEVS[1:])),
    ):
        with pytest.raises(PlanError):
            build_benchmark(m, p)


def test_run_on_the_simulator_gives_the_table_and_the_winner(tmp_path: Path) -> None:
    """Article 000's finding: with one job, a 64 KiB random write gains from the 32K chunk
    (609 vs 430 MB/s for 512K) because the request spans two members; large requests double
    with either. The simulator's fio gives that shape; the winner for small random I/O is 32K,
    the result survives its JSON, and the disks are left without arrays or superblocks."""
    b = SimulatedBackend.from_scenario("blank")
    m = b.probe()
    plan = build_benchmark(
        m, BenchmarkParams(DEVS, chunks=(32 * KIB, 512 * KIB), runs=1, numjobs=(1,), size="8M")
    )
    report = execute(plan, b, audit=AuditLog(tmp_path / "audit.log"))
    assert report.ok, [o.message for o in report.outcomes if o.status != "ok"]
    outs = [(o.step.op, o.result.stdout) for o in report.outcomes if o.result is not None]
    r = collect(plan, outs, time.time())
    c32 = r.cell(str(32 * KIB), "randwrite", "64k", 1)
    c512 = r.cell(str(512 * KIB), "randwrite", "64k", 1)
    disk = r.cell("disk", "randwrite", "64k", 1)
    assert c32 and c512 and disk and c32.mb_s > c512.mb_s and c512.mb_s == pytest.approx(disk.mb_s)
    assert best_chunk(r, "random-small") == 32 * KIB
    text = table(r)
    assert "randwrite 64k ×1" in text and "512 KiB" in text and "× one disk" in text
    back = result_from_json(r.to_json())
    assert back is not None and back.to_json() == r.to_json()
    after = b.probe()
    assert not after.arrays


def test_apply_keeps_the_table_for_report_and_the_create_wizard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """End to end on the simulator through the CLI: plan benchmark, apply (table printed, kept in
    the state database), report --json `benchmarks`, create-array --chunk-for the winner."""
    import json

    from app.cli import main

    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(state))
    out = tmp_path / "bench.json"
    devs = ",".join(DEVS)
    common = ["--chunks", "32K,512K", "--runs", "1", "--numjobs", "1", "--size", "8M"]
    assert (
        main(
            ["plan", "benchmark", "--devices", devs, *common, "--demo", "blank", "--out", str(out)]
        )
        == 0
    )
    assert main(["apply", str(out), "--yes", "--confirm", "nvme0n1", "--demo", "blank"]) == 0
    text = capsys.readouterr().out
    assert "× one disk" in text and "benchmark run 1 of 18" in text and '"jobs"' not in text
    assert main(["report", "--json", "--no-smart", "--demo", "blank"]) == 0
    (b,) = json.loads(capsys.readouterr().out)["benchmarks"]
    assert b["chunks"] == [32 * KIB, 512 * KIB] and len(b["cells"]) == 18
    assert main(
        ["plan", "create-array", "--level", "10", "--devices", devs, "--chunk-for", "random-small",
         "--demo", "blank"]
    ) == 0  # fmt: skip
    assert "--chunk=32K" in capsys.readouterr().out
    assert main(
        ["plan", "create-array", "--level", "10", "--devices", "nvme0n1,nvme1n1",
         "--chunk-for", "mixed", "--demo", "blank"]
    ) == 3  # fmt: skip
    assert "no kept benchmark" in capsys.readouterr().err


def test_a_plan_stops_and_zeroes_only_the_array_it_made() -> None:
    from app.plans.guards.allowlist import plan_step_problems
    from app.plans.plan import Plan

    stop = Step.decode(("mdadm", "--stop", "/dev/md127"), "x")
    zero = Step.decode(("mdadm", "--zero-superblock", "/dev/sda"), "x")
    assert plan_step_problems(Plan("x", (stop,), kind="benchmark"))
    assert plan_step_problems(Plan("x", (zero,), kind="benchmark"))
    m = SimulatedBackend.from_scenario("blank").probe()
    plan = build_benchmark(m, BenchmarkParams(DEVS, runs=1, numjobs=(1,), size="4M"))
    assert plan_step_problems(plan) == []


def test_the_two_chunk_benchmark_fits_the_step_bound_and_says_what_it_costs() -> None:
    """Issue 43: `plan benchmark` for 4 disks and chunks 32K,512K made 126 steps and apply
    refused it (at most 64). Now the bound is sized to the largest plan raidman makes (the 3
    default chunks) and the plan file reads back; its consequences bound the duration (108
    runs × fio --runtime 60 s) and the bytes each disk is written (baseline: 3 write patterns ×
    (1 + 4) jobs × 256 MiB × 3 runs = 11.25 GiB to nvme0n1; each chunk's array as much, half
    of it to each member of a RAID-10 n2 of 4) against the rated TBW (Samsung 970 EVO Plus
    1TB: 600 TB, app.model.endurance) — before the typed confirmation."""
    from app.plans.plan import MAX_STEPS, Plan
    from app.plans.render import current_consequences

    b = SimulatedBackend.from_scenario("blank")
    m = b.probe()
    two = build_benchmark(m, BenchmarkParams(DEVS, chunks=(32 * KIB, 512 * KIB)))
    three = build_benchmark(m, BenchmarkParams(DEVS))
    assert len(two.steps) == 180 and len(three.steps) == 241 <= MAX_STEPS
    assert len(Plan.from_json(three.to_json()).steps) == 241  # what apply reads
    with pytest.raises(PlanError, match="at most"):
        build_benchmark(
            m, BenchmarkParams(DEVS, chunks=(32 * KIB, 64 * KIB, 128 * KIB, 512 * KIB), runs=4)
        )
    c = current_consequences(two, m, b).consequences
    assert c is not None and c.confirm == "typed"
    lines = c.lines()
    assert "benchmark takes at most 1h 48m: 108 fio runs of at most 1m 00s each" in "\n".join(lines)
    assert "benchmark writes at most 22.5 GiB to nvme0n1 = 0.004% of its rated 600 TB" in "\n".join(
        lines
    )
    for d in DEVS[1:]:
        assert (
            f"benchmark writes at most 11.2 GiB to {d} = 0.002% of its rated 600 TB"
            in "\n".join(lines)
        )
    assert c.to_json()["workload"] == lines[-5:]


def test_each_write_run_starts_on_discarded_blocks_and_reads_follow_the_writes() -> None:
    """Article 000: "Vor jedem Einzeltest wurde ein fstrim-Befehl auf die zu testende Partition
    des Raid-Systems abgesetzt" — before each test, not once per array (issue 43). A read of
    just-discarded blocks measures the SSD answering zeroes: the reads of each target run
    after its write runs, with no discard between."""
    m = SimulatedBackend.from_scenario("blank").probe()
    plan = build_benchmark(m, BenchmarkParams(DEVS, chunks=(32 * KIB, 512 * KIB)))
    ops_ = [s.op for s in plan.steps]
    for i, op in enumerate(ops_):
        if isinstance(op, Fio) and op.writes_data:
            before = ops_[i - 1]
            assert before.argv() == ("blkdiscard", op.filename), (i, before.argv())
    for target in ("/dev/nvme0n1", "/dev/md120"):
        runs = [
            (i, op) for i, op in enumerate(ops_) if isinstance(op, Fio) and op.filename == target
        ]
        segments: list[list[tuple[int, Fio]]] = [[]]
        for i, op in runs:  # one segment per array built (md120 twice)
            if segments[-1] and i - segments[-1][-1][0] > 2:
                segments.append([])
            segments[-1].append((i, op))
        for seg in segments:
            last_write = max(i for i, op in seg if op.writes_data)
            first_read = min(i for i, op in seg if not op.writes_data)
            assert last_write < first_read
            between = ops_[last_write + 1 : first_read]
            assert not any(o.argv()[0] == "blkdiscard" for o in between)
    assert all(isinstance(op, Fio) is False or op.runtime == 60 for op in ops_)


def test_only_a_benchmark_discards_an_array_and_only_its_own() -> None:
    from app.plans.guards.allowlist import plan_step_problems
    from app.plans.ops import Discard
    from app.plans.plan import Plan

    m = SimulatedBackend.from_scenario("blank").probe()
    plan = build_benchmark(m, BenchmarkParams(DEVS, chunks=(32 * KIB,), runs=1))
    assert plan_step_problems(plan) == []
    other = Step(Discard("/dev/md5"), "not its array")
    bad = Plan(plan.title, (*plan.steps[:-1], other), target=plan.target, kind="benchmark")
    assert plan_step_problems(bad) == [
        f"step {len(bad.steps)}: a benchmark discards only the array it made"
    ]
    lone = Plan("x", (Step(Discard("/dev/md120"), "y"),), target="md120", kind="lifecycle")
    assert plan_step_problems(lone) == [
        "step 1: only a benchmark discards an array (the one it made)"
    ]
