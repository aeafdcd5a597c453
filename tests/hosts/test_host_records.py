"""Sync records per host: ``raidman report --host NAME`` lists the syncs raidman kept here while
watching NAME (``state_dir()/hosts/NAME``), never this machine's own, and this machine's report
never lists NAME's. Same array name, same UUID on both (a cloned fleet): the records still stay
with their machine."""

from __future__ import annotations

import argparse
import os
import stat
from pathlib import Path

import pytest

from app.commands.report import _remote_report
from app.paths import DB_FILE, host_state_dir, state_dir
from app.report import full_report_json
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimulatedBackend


def _record(path: Path, array: str, uuid: str | None, at: float) -> None:
    store = SnapshotStore.open(path)
    sid = store.start_sync(array, "check", ["sdb", "sdc"], at, array_uuid=uuid)
    store.end_sync(sid, at + 60.0)
    store.close()


def test_a_hosts_sync_records_are_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "state"))
    backend = SimulatedBackend.from_scenario("raid10-evo")
    machine = backend.probe()
    (array,) = machine.arrays
    _record(state_dir() / DB_FILE, array.name, array.uuid, 1000.0)  # this machine's
    _record(host_state_dir("fleet1") / DB_FILE, array.name, array.uuid, 5000.0)  # fleet1's

    args = argparse.Namespace(json=True, no_smart=True, no_audit=True)
    remote, reached = _remote_report("fleet1", backend, args)
    assert reached
    (a,) = remote["arrays"]
    assert [s["start"] for s in a["syncs"]] == [5000.0], a["syncs"]
    store = SnapshotStore.open()
    local = full_report_json(backend, machine, smart=False, findings=False, store=store)
    store.close()
    assert [s["start"] for s in local["arrays"][0]["syncs"]] == [1000.0]
    # a host never watched from here has no records (an empty list, like a fresh machine)
    other, _ = _remote_report("fleet2", backend, args)
    assert other["arrays"][0]["syncs"] == []


def test_the_host_directory_is_private_at_every_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "state"))
    old = os.umask(0o002)  # a umask that would leave group-writable parents behind os.makedirs
    try:
        store = SnapshotStore.open(host_state_dir("fleet1") / DB_FILE)
    finally:
        os.umask(old)
    assert store.path is not None and not store.notes, store.notes
    store.close()
    for d in (tmp_path / "state", tmp_path / "state" / "hosts", host_state_dir("fleet1")):
        assert stat.S_IMODE(os.lstat(d).st_mode) == 0o700, d


@pytest.mark.parametrize("bad", ["", "../x", ".hidden", "a/b"])
def test_a_host_name_is_one_path_component(bad: str) -> None:
    with pytest.raises(ValueError):
        host_state_dir(bad)
