"""The monitor's minute look at SMART (SmartFailing, SelfTestFailed) reads a disk's latest
snapshot again only when one was stored since the last look, or when the disk is new to the
machine (issue 29: on 1,000 disks, decoding every latest snapshot each minute was most of
``raidman monitor``'s CPU). What it says is what a look at every disk says."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.model import Disk, Machine
from app.routine.watch import RaidmanWatch
from app.wear import held
from app.wear.snapshots import SnapshotStore


def _machine(*names: str) -> Machine:
    disks = tuple(Disk(n, 1 << 30, serial=f"SN-{n}") for n in names)
    return Machine(host="h", kernel="k", disks=disks, taken_at=0.0)


def test_only_disks_with_a_new_snapshot_or_new_to_the_machine_are_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SnapshotStore.open(tmp_path / "state.db")
    for n in ("sda", "sdb", "sdc"):
        store.record_snapshot(f"SN-{n}", n, {"health": "PASSED"}, ts=1.0)
    store.record_snapshot("SN-sdd", "sdd", {"health": "FAILED"}, ts=1.0)  # not yet on the machine
    read: list[str] = []
    latest = store.latest_snapshot

    def counting(serial: str, **kw: float) -> object:
        read.append(serial)
        return latest(serial, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "latest_snapshot", counting)
    watch = RaidmanWatch()
    m = _machine("sda", "sdb", "sdc")

    assert watch.smart(store, m) == [] and sorted(read) == ["SN-sda", "SN-sdb", "SN-sdc"]
    read.clear()
    assert watch.smart(store, m) == [] and read == []  # nothing stored since: nothing read

    store.record_snapshot("SN-sdb", "sdb", {"health": "FAILED"}, ts=2.0)
    (ev,) = watch.smart(store, m)
    assert (ev.event, ev.component) == ("SmartFailing", "sdb") and read == ["SN-sdb"]
    read.clear()
    assert watch.smart(store, m) == [] and read == []  # said once

    # a disk that comes to the machine with an old snapshot saying FAILED: read, and said
    (ev,) = watch.smart(store, _machine("sda", "sdb", "sdc", "sdd"))
    assert (ev.event, ev.component) == ("SmartFailing", "sdd") and read == ["SN-sdd"]

    # a fresh watch (a restart) says the same as the incremental one did, looking at every disk
    again = RaidmanWatch().smart(store, _machine("sda", "sdb", "sdc", "sdd"))
    assert sorted(e.component for e in again) == ["sdb", "sdd"]


def test_the_first_snapshot_time_is_read_without_decoding_rows(tmp_path: Path) -> None:
    store = SnapshotStore.open(tmp_path / "state.db")
    assert store.first_snapshot_ts("SN-x") is None and store.snapshot_mark() == (0, 0)
    store.record_snapshot("SN-x", "sdx", {"health": "PASSED"}, ts=50.0)
    first = store.record_snapshot("SN-x", "sdx", {"health": "PASSED"}, ts=20.0)
    assert store.first_snapshot_ts("SN-x") == 20.0
    assert store.first_snapshot_ts("SN-x") == store.first_snapshot_after("SN-x", float("-inf")).ts  # type: ignore[union-attr]
    assert store.snapshot_mark() == (0, first)
    assert store.serials_since((0, first)) == set()
    assert store.serials_since((0, first - 1)) == {"SN-x"}


def test_a_snapshot_held_in_memory_is_seen_after_it_moved_to_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """History held in memory (the database was locked) gets new ids in the file: an id seen
    in memory says nothing there. Here the file's ids are all below it (older held snapshots
    were dropped to bound memory), and a FAILED stored after the last look is still said."""
    monkeypatch.setattr(held, "MAX_HELD_SNAPSHOTS", 3)
    p = tmp_path / "state.db"
    SnapshotStore.open(p).close()
    holder = sqlite3.connect(p)
    holder.execute("PRAGMA journal_mode=DELETE")  # a rollback journal: even readers wait
    holder.execute("BEGIN EXCLUSIVE")
    store = SnapshotStore.open(p, attempts=1, retry_delay_s=0, busy_timeout_s=0.05)
    assert store.holding == p
    for i in range(150):  # held memory is pruned each 100th id: ids 98..150 stay
        store.record_snapshot("SN-sda", "sda", {"health": "PASSED"}, ts=float(i))
    store.record_snapshot("SN-sdb", "sdb", {"health": "PASSED"}, ts=150.0)
    watch = RaidmanWatch()
    m = _machine("sda", "sdb")
    assert watch.smart(store, m) == []
    seen = store.snapshot_mark()
    store.record_snapshot("SN-sdb", "sdb", {"health": "FAILED"}, ts=151.0)
    holder.rollback()
    holder.close()
    assert store.try_attach(force=True) is not None and store.holding is None
    assert store.snapshot_mark()[1] <= seen[1]  # the file's ids are below what was seen
    assert store.serials_since(seen) is None  # so the mark says: look at every disk
    (ev,) = watch.smart(store, m)
    assert (ev.event, ev.component) == ("SmartFailing", "sdb")
    store.close()
