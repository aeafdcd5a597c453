"""Rows of docs/article-reading.md that named a module but no test (issue 43): each test here
shows one or more of them on raidman's own model, plans and rules, and cites its article by
seed file (../shared/seeds/) and row number. User-facing text never names the article."""

from __future__ import annotations

from collections import Counter

from app.model import Machine, levels
from app.plans.builders.benchmark import PATTERNS, BenchmarkParams, build_benchmark
from app.plans.builders.create_array import CHUNK_GUIDANCE, CreateArrayParams, build_create_array
from app.plans.builders.create_guidance import RAID0_WARNING, two_failures_survived, write_hole
from app.plans.builders.expectations import ceiling, expectations
from backends.simulated import SimulatedBackend

KIB = 1024
NVME = ("nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1")
A000 = "000_d5848e1cef7805d7.txt"


def _blank() -> Machine:
    return SimulatedBackend.from_scenario("blank").probe()


def _fio(argvs: list[tuple[str, ...]]) -> list[dict[str, str]]:
    """Each fio run's options as a dict (``--rw=randread`` -> {"rw": "randread"})."""
    out = []
    for a in argvs:
        if a[0] != "fio":
            continue
        out.append(dict(x[2:].split("=", 1) for x in a[1:] if x.startswith("--") and "=" in x))
    return out


def _bench(**kw: object) -> list[tuple[str, ...]]:
    plan = build_benchmark(_blank(), BenchmarkParams(NVME, **kw))  # type: ignore[arg-type]
    return [s.argv for s in plan.steps]


# ---- the benchmark (article 000's method) ------------------------------------------------------
def test_every_run_bypasses_the_page_cache() -> None:
    """000_d5848e1cef7805d7.txt, rows 4 and 123: fio with direct=1 ("Direct=1" so the page
    cache does not measure RAM); 002's test files larger than RAM serve the same end."""
    runs = _fio(_bench(chunks=(32 * KIB,), runs=1))
    assert runs and all(r.get("direct") == "1" for r in runs)


def test_one_job_and_several_are_both_measured_and_any_list_can_be_asked() -> None:
    """000 rows 6 ("Nur 1 Job" vs more jobs changes the result drastically) and 002
    (002_b31ddd3f173763e4.txt) row 122 (measure with 1, 2, 4 and 8 threads)."""
    default = Counter(r["numjobs"] for r in _fio(_bench(chunks=(32 * KIB,), runs=1)))
    assert set(default) == {"1", "4"} and default["1"] == default["4"]
    asked = _fio(_bench(chunks=(32 * KIB,), runs=1, numjobs=(1, 2, 4, 8)))
    assert {r["numjobs"] for r in asked} == {"1", "2", "4", "8"}


def test_each_measurement_runs_three_times() -> None:
    """000 row 7: "Jeder Test wurde 3 mal wiederholt" (runs vary by 8–25 MB/s)."""
    runs = _fio(_bench(chunks=(32 * KIB,)))
    cells = Counter((r["filename"], r["rw"], r["bs"], r["numjobs"]) for r in runs)
    assert cells and set(cells.values()) == {3}


def test_one_disk_alone_is_measured_first_as_the_baseline() -> None:
    """000 rows 8 and 134 ("Die Zeilen mit SSD am Anfang": one SSD alone beside the arrays;
    004_d847d43f5bdfd995.txt tests one drive first): every pattern runs on the bare first disk
    before any array is created."""
    argvs = _bench(chunks=(32 * KIB,), runs=1)
    first_create = next(i for i, a in enumerate(argvs) if a[:2] == ("mdadm", "--create"))
    before = _fio(argvs[:first_create])
    assert {r["filename"] for r in before} == {"/dev/nvme0n1"}
    assert {(r["rw"], r["bs"]) for r in before} == set(PATTERNS)


def test_sequential_figures_come_from_fio_on_the_device() -> None:
    """000 row 14 (distrust gnome-disks' sequential figures; use fio) and 001
    (001_621293144e807b94.txt) row 97 (sequential speed with 1 MiB requests, as dd bs=1M):
    the benchmark measures with fio only, 1 MiB sequential reads and writes among its runs."""
    argvs = _bench(chunks=(32 * KIB,), runs=1)
    measuring = {a[0] for a in argvs} - {"mdadm", "blkdiscard", "wipefs"}
    assert measuring == {"fio"}
    runs = _fio(argvs)
    assert {("read", "1m"), ("write", "1m")} <= {(r["rw"], r["bs"]) for r in runs}


# ---- the create plan's guidance -----------------------------------------------------------------
def test_create_says_a_large_chunk_is_not_always_best_and_how_to_measure() -> None:
    """000 rows 1, 16 and 69: do not assume 512K and up is best; 32 KiB is a good compromise
    for small requests; first test the extremes 32K and 512K for the workload."""
    plan = build_create_array(_blank(), CreateArrayParams(level="10", devices=NVME))
    assert CHUNK_GUIDANCE in " ".join(plan.notes)
    assert "32 KiB measured better for small random I/O" in CHUNK_GUIDANCE
    assert "not always best" in CHUNK_GUIDANCE
    assert any("raidman plan benchmark" in n and "--chunks 32K,512K" in n for n in plan.notes)


def test_create_speaks_to_chunk_bitmap_and_layout_and_sets_the_bitmap_itself() -> None:
    """000 rows 37 (chunk, bitmap and layout are the three create parameters that matter) and 45
    (control the bitmap explicitly: tools may add an internal one silently): the plan says
    each, and every redundant create names --bitmap on the command line."""
    m = _blank()
    r10 = build_create_array(m, CreateArrayParams(level="10", devices=NVME))
    notes = " ".join(r10.notes)
    assert "chunk:" in notes and "bitmap" in notes and "RAID-10 layout:" in notes
    for level in ("1", "5", "6", "10"):
        argv = build_create_array(m, CreateArrayParams(level=level, devices=NVME)).steps[0].argv
        assert any(a.startswith("--bitmap=") for a in argv), level
    r0 = build_create_array(m, CreateArrayParams(level="0", devices=NVME)).steps[0].argv
    assert not any(a.startswith("--bitmap=") for a in r0)  # md has no bitmap without redundancy


def test_n2_is_the_default_layout_and_said_to_be() -> None:
    """000 row 51: n2 is mdadm's default RAID-10 layout."""
    plan = build_create_array(_blank(), CreateArrayParams(level="10", devices=NVME))
    layout = next(n for n in plan.notes if n.startswith("RAID-10 layout:"))
    assert "n2 (near, mdadm's default)" in layout and layout.endswith("this plan: n2")


def test_near_survives_more_double_failures_than_far_or_offset() -> None:
    """000 row 49 (offset is less failure-tolerant than near), counted from raid10.c's copy
    sets: on 4 members n2 survives 4 of the 6 double failures, f2 and o2 only 2."""
    assert two_failures_survived(4, "n2") == (4, 6)
    assert two_failures_survived(4, "f2") == (2, 6)
    assert two_failures_survived(4, "o2") == (2, 6)


def test_creating_a_redundant_array_forecasts_its_first_sync() -> None:
    """000 row 52: creating the array starts the initial sync at once; the plan's
    consequences forecast it (which array, which action, how long)."""
    plan = build_create_array(_blank(), CreateArrayParams(level="10", devices=NVME))
    assert plan.consequences is not None
    [sync] = plan.consequences.syncs
    assert sync.action == "resync" and sync.duration_s_low and sync.duration_s_low > 0
    r0 = build_create_array(_blank(), CreateArrayParams(level="0", devices=NVME))
    assert r0.consequences is not None and r0.consequences.syncs == ()


def test_parity_create_names_the_write_hole_and_its_remedies() -> None:
    """000 row 84: hardware controllers' write caches helped RAID-5 but need a battery (the
    write hole); md's remedies are PPL, a journal, or a UPS."""
    text = write_hole("raid5")
    assert text is not None
    assert "--consistency-policy=ppl" in text and "--write-journal" in text and "UPS" in text
    plan = build_create_array(_blank(), CreateArrayParams(level="5", devices=NVME))
    assert text in plan.notes
    assert write_hole("raid10") is None


def test_raid0_create_warns_that_one_failure_loses_everything() -> None:
    """004 (004_d847d43f5bdfd995.txt) row 137: RAID-0 has no redundancy; only for data that
    can be recreated."""
    plan = build_create_array(_blank(), CreateArrayParams(level="0", devices=NVME))
    assert RAID0_WARNING in plan.warnings
    assert levels.failures_survived("raid0", 4) == 0


# ---- what each level does (expectations, failures) ----------------------------------------------
def test_raid10_of_four_writes_at_twice_and_reads_at_four_times_one_disk() -> None:
    """000 row 13: a 4-SSD RAID-10 reaches above 850 MB/s writes (2 × one disk) and above
    1000 MB/s reads with requests over 1 MB."""
    c = ceiling("raid10", 4, "n2")
    assert (c.write, c.read) == (2.0, 4.0)


def test_parity_small_writes_are_read_modify_write_raid6_dearer() -> None:
    """000 row 83 (small random writes on RAID-5 are slow), 001 row 98 (RAID-6 reads old data
    and parity first) and 004 row 143 (parity costs write speed, RAID-6 more than RAID-5)."""
    r5 = " ".join(expectations("raid5", 4, None, 64 * KIB))
    r6 = " ".join(expectations("raid6", 5, None, 64 * KIB))
    assert "4 I/Os for one small write" in r5 and "6 I/Os for one small write" in r6
    assert "small random writes can be slower than one disk" in r5


def test_raid1_writes_like_one_disk_and_reads_scale_with_readers() -> None:
    """002 row 112 (RAID-1 sequential writes do not scale with threads) and 004 row 140
    (RAID-1 writes like one SSD, reads nearly double)."""
    c = ceiling("raid1", 2, None)
    assert (c.write, c.read) == (1.0, 2.0)
    text = " ".join(expectations("raid1", 2, None, None))
    assert "writes stay near one disk" in text and "2 or more concurrent readers" in text


def test_parity_and_raid0_reads_scale_with_their_data_disks() -> None:
    """002 row 124 (software RAID-5 with one more disk outruns hardware RAID-5: reads scale
    with the data disks) and 004 row 138 (more SSDs in RAID-0 raise throughput)."""
    assert ceiling("raid5", 4, None).read == 3.0 and ceiling("raid5", 5, None).read == 4.0
    assert [ceiling("raid0", n, None).read for n in (2, 3, 4)] == [2.0, 3.0, 4.0]


def test_raid5_survives_one_failure_and_raid6_any_two() -> None:
    """001 row 89 and 004 row 142: RAID-5 survives one failure, RAID-6 any two."""
    assert levels.failures_survived("raid5", 4) == 1
    assert levels.failures_survived("raid6", 5) == 2
    all5 = frozenset(range(5))
    assert levels.failures_left("raid6", 5, None, all5) == 2
    assert levels.failures_left("raid6", 5, None, all5 - {0, 3}) == 0
    assert levels.failures_left("raid5", 4, None, frozenset({1, 2, 3})) == 0
