"""Issue 28: the create wizard pre-selects the chunk that won the workload the admin names in the
newest kept `raidman plan benchmark` of exactly the picked disks — the same choice as the CLI's
`create-array --chunk-for` (app.wear.benchmarks.choose_chunk) — says why, and falls back to the
default chunk without one. The kept results are read in a worker, never on the UI thread."""

from __future__ import annotations

import threading
from typing import Any

from textual.app import App
from textual.widgets import Input, Select, SelectionList, Static

from app.plans.builders.benchmark import BenchmarkResult, Cell
from app.ui.screens.wizards import CreateArrayWizard
from backends.simulated import SimulatedBackend
from tests.ui.helpers import wait_for

KIB = 1024
DEVS = ("nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1")
TAKEN = 1_795_000_000.0  # 2026-11-18 UTC


def kept() -> dict[str, Any]:
    """32K wins the random patterns, 512K the sequential ones (ratios to the one disk)."""
    cells = []
    figures = {  # (rw, bs): (disk, 32K, 512K) MB/s
        ("randread", "4k"): (100.0, 300.0, 200.0),
        ("randwrite", "64k"): (200.0, 609.0, 430.0),
        ("read", "1m"): (500.0, 900.0, 1900.0),
        ("write", "1m"): (450.0, 500.0, 900.0),
    }
    for (rw, bs), (disk, c32, c512) in figures.items():
        for target, mb in (("disk", disk), (str(32 * KIB), c32), (str(512 * KIB), c512)):
            cells.append(Cell(target, rw, bs, 1, mb, mb * 10, 3))
    r = BenchmarkResult(DEVS, "10", "n2", (32 * KIB, 512 * KIB), tuple(cells), TAKEN)
    return r.to_json()


class Host(App[None]):
    def __init__(self, wizard: CreateArrayWizard) -> None:
        super().__init__()
        self.wizard = wizard

    def on_mount(self) -> None:
        self.push_screen(self.wizard)


async def test_workload_preselects_the_benchmarks_winner_and_says_why() -> None:
    be = SimulatedBackend.from_scenario("blank")
    threads: list[int] = []

    def load() -> list[dict[str, Any]]:
        threads.append(threading.get_ident())
        return [kept()]

    wiz = CreateArrayWizard(be.probe(), be, benchmarks=load)
    app = Host(wiz)
    async with app.run_test(size=(140, 60)) as pilot:
        await wait_for(pilot, lambda: wiz.kept_benchmarks is not None)
        assert threads and threading.get_ident() not in threads  # read in a worker
        chunk = wiz.query_one("#ca-chunk", Input)
        why = wiz.query_one("#ca-chunk-why", Static)
        assert chunk.value == "512K" and str(why.render()) == ""  # no workload named: default
        picker = wiz.query_one("#ca-devices", SelectionList)
        for d in DEVS:
            picker.select(d)
        wiz.query_one("#ca-workload", Select).value = "random-small"
        await pilot.pause()
        assert chunk.value == "32K"
        assert str(why.render()) == (
            "chunk 32K: fastest for random small I/O in the benchmark of 2026-11-18 on these disks"
        )
        assert wiz.build_plan().params["chunk_bytes"] == 32 * KIB  # what the plan gets
        wiz.query_one("#ca-workload", Select).value = "sequential-large"
        await pilot.pause()
        assert chunk.value == "512K" and "fastest for sequential large I/O" in str(why.render())
        wiz.query_one("#ca-workload", Select).value = "random-small"
        await pilot.pause()
        picker.deselect("nvme3n1")  # three disks: that benchmark was not of these
        await pilot.pause()
        assert chunk.value == "512K"
        assert str(why.render()).startswith("no kept benchmark of these disks for random small")
        picker.select("nvme3n1")
        await pilot.pause()
        assert chunk.value == "32K"
        chunk.value = "128K"  # typed by hand: a choice does not overwrite it
        wiz.query_one("#ca-workload", Select).value = "mixed"
        await pilot.pause()
        assert chunk.value == "128K" and "keeps the chunk typed" in str(why.render())


async def test_without_kept_benchmarks_the_default_chunk_stays() -> None:
    be = SimulatedBackend.from_scenario("blank")
    wiz = CreateArrayWizard(be.probe(), be, benchmarks=list)
    app = Host(wiz)
    async with app.run_test(size=(140, 60)) as pilot:
        await wait_for(pilot, lambda: wiz.kept_benchmarks is not None)
        for d in DEVS:
            wiz.query_one("#ca-devices", SelectionList).select(d)
        wiz.query_one("#ca-workload", Select).value = "mixed"
        await pilot.pause()
        assert wiz.query_one("#ca-chunk", Input).value == "512K"
        why = str(wiz.query_one("#ca-chunk-why", Static).render())
        assert why.startswith("no kept benchmark of these disks for mixed I/O: the default")


def test_the_wizard_names_every_workload_the_cli_takes() -> None:
    from app.plans.builders.benchmark import WORKLOADS
    from app.wear.benchmarks import WORKLOAD_WORDS

    assert set(WORKLOAD_WORDS) == set(WORKLOADS)


async def test_the_app_reads_its_state_database_in_a_worker(
    tmp_path: Any, monkeypatch: Any
) -> None:
    """`n` in the TUI: the kept benchmarks come from the host's state database (the store the
    CLI's `apply` wrote), read off the UI thread."""
    from app.ui.app import RaidmanApp
    from app.wear.snapshots import SnapshotStore
    from backends.simulated import SimClock, SimulatedBackend
    from tests.ui.helpers import wait_ready

    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))
    store = SnapshotStore.open(tmp_path / "state.db")
    store.record_benchmark(TAKEN, kept())
    store.close()
    threads: list[int] = []
    real = SnapshotStore.benchmarks

    def recorded(self: SnapshotStore) -> list[dict[str, Any]]:
        threads.append(threading.get_ident())
        return real(self)

    monkeypatch.setattr(SnapshotStore, "benchmarks", recorded)
    sim = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    app = RaidmanApp(sim, probe_interval=0, sample_interval=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("n")
        wiz = app.screen
        assert isinstance(wiz, CreateArrayWizard)
        await wait_for(pilot, lambda: wiz.kept_benchmarks is not None)
        assert threads and threading.get_ident() not in threads
        assert len(wiz.kept_benchmarks or []) == 1
